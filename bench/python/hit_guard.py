"""Hit-path guard (CI, CPU): a cache-hit call of a tuned function against a direct call of its
launcher (a no-op), as a ratio; exits 1 above the stated ratio.

Each round times one batch of direct calls and one of tuned calls, in the same loop shape, the
order alternating by round; a repeat's figure is the median of its rounds' ratios, and the
guard takes the best (lowest) of several repeats, so a neighbour's burst on a shared 2-core
machine raises some repeats, not the figure.

    python bench/python/hit_guard.py [--max-ratio R]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from typing import Any, Callable

# Above this the guard fails. Set from the figures of 2026-12-01 (BENCHMARKS.md, issue 25).
DEFAULT_MAX_RATIO = 2.2
ROUNDS = 300
BATCH = 200
REPEATS = 7


def launcher(x: Any, cfg: Any) -> None:
    return None


def batch_ns(call: Callable[[], Any]) -> float:
    """Per-call ns of BATCH calls."""
    begin = time.perf_counter_ns()
    for _ in range(BATCH):
        call()
    return (time.perf_counter_ns() - begin) / BATCH


def measure(direct: Callable[[], Any], tuned: Callable[[], Any]) -> dict[str, float]:
    """One repeat: medians of the paired rounds."""
    ratios, direct_ns, tuned_ns = [], [], []
    for round_index in range(ROUNDS):
        if round_index % 2 == 0:
            d, t = batch_ns(direct), batch_ns(tuned)
        else:
            t, d = batch_ns(tuned), batch_ns(direct)
        ratios.append(t / d)
        direct_ns.append(d)
        tuned_ns.append(t)
    return {"ratio": statistics.median(ratios), "direct_ns": statistics.median(direct_ns),
            "tuned_ns": statistics.median(tuned_ns)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-ratio", type=float, default=DEFAULT_MAX_RATIO)
    args = parser.parse_args()
    if not args.max_ratio > 1.0:
        parser.error(f"--max-ratio must be above 1, got {args.max_ratio}")

    from disttune.tune import autotune

    tuned_fn = autotune(config_space=[{"cfg": i} for i in range(4)], key_fn=lambda x: x,
                        disk_cache=False, strategy="exhaustive")(launcher)
    tuned_fn(1)  # tunes once; every later call is a cache hit
    chosen = next(iter(tuned_fn.cache.values()))["cfg"]

    def direct() -> None:
        return launcher(1, cfg=chosen)

    def tuned() -> None:
        return tuned_fn(1)

    gc.disable()  # a collection inside one batch would be the noise, not the hit path
    measure(direct, tuned)  # warms up; not kept
    best = None
    for repeat in range(REPEATS):
        result = measure(direct, tuned)
        print(f"repeat {repeat}: ratio {result['ratio']:.3f} (direct {result['direct_ns']:.1f} ns, "
              f"tuned {result['tuned_ns']:.1f} ns per call)")
        if best is None or result["ratio"] < best["ratio"]:
            best = result
    gc.enable()
    assert best is not None
    ok = best["ratio"] <= args.max_ratio
    print(f"hit_guard (Python): best ratio {best['ratio']:.3f} = {best['tuned_ns']:.1f} / "
          f"{best['direct_ns']:.1f} ns per call (+{best['tuned_ns'] - best['direct_ns']:.1f} ns), "
          f"limit {args.max_ratio:.2f}: " + ("ok" if ok else "FAILED: the cache-hit path got slower against a direct call"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
