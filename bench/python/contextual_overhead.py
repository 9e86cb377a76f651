"""Per-call cost of a contextual_autotune function after its kernels are tuned (CPU).

Triton runs in its interpreter (TRITON_INTERPRET=1, set here before Triton is imported: the
only way to run Triton without a GPU), so a kernel launch itself costs most of a millisecond
and the figure that matters is the difference against the same kernels called through plain
triton.autotune after it tuned (its hit: the key and one dict read). Pairs, each timed in
rounds of BATCH calls, the pair's order alternating by round; a pair's figures are the
medians of its rounds, "extra" the median of the per-round differences:
  no kernel    the plain function             vs  the contextual call;
  1 launch     a 32-config triton.autotune kernel launched once per call, plain vs contextual;
  4 launches   four such kernels, one launch each, plain vs contextual;
then the launch rows again with the interpreter's launch replaced by a no-op on both sides
("no-op run"), which leaves the launch paths alone, without the interpreter's noise.

    python bench/python/contextual_overhead.py [--rounds N] [--profile]

--profile prints cProfile's entries of disttune's own functions (and Triton's Autotuner.run,
which the hook replaces) for 500 cached contextual calls of each case, then the engine's own
run() per call (C++, which cProfile does not see).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import os
import pstats
import statistics
import sys
import tempfile
import time
import timeit
from typing import Any, Callable

os.environ.setdefault("TRITON_INTERPRET", "1")

import torch  # noqa: E402

if not hasattr(torch.Tensor, "untyped_storage"):
    # Triton's interpreter reads untyped_storage(); Debian's torch 1.13 names it storage().
    torch.Tensor.untyped_storage = lambda self: self.storage()

import triton  # noqa: E402
import triton.language as tl  # noqa: E402

from disttune.autotuner import contextual_autotune  # noqa: E402

BATCH = 20
N = 64
LAUNCHES = 4
# 32 candidates, as a matmul's space: 4 blocks x 4 warp counts x 2 stage counts.
CONFIGS = [triton.Config({"BLOCK": block}, num_warps=warps, num_stages=stages)
           for block in (64, 128, 256, 512) for warps in (1, 2, 4, 8) for stages in (1, 2)]


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(y_ptr + offsets, tl.load(x_ptr + offsets, mask=mask), mask=mask)


def cost_bench(kernel_call: Callable[[], Any], quantiles: Any = None, **_: Any) -> Any:
    """Plain triton.autotune's do_bench here: one run and a fixed cost (no timing on the CPU)."""
    kernel_call()
    return [1.0, 1.0, 1.0] if quantiles else 1.0


def kernels(plain: bool) -> list[Any]:
    options = {"do_bench": cost_bench} if plain else {}
    return [triton.autotune(configs=CONFIGS, key=["n"], **options)(copy_kernel) for _ in range(LAUNCHES)]


def launcher(tuned: list[Any]) -> Callable[..., None]:
    def body(x: Any, y: Any) -> None:
        for kernel in tuned:
            kernel[(1,)](x, y, N)
    return body


def batch_us(call: Callable[[], Any]) -> float:
    begin = time.perf_counter_ns()
    for _ in range(BATCH):
        call()
    return (time.perf_counter_ns() - begin) / BATCH / 1000


def paired(reference: Callable[[], Any], contextual: Callable[[], Any], rounds: int) -> dict[str, float]:
    ref, ctx = [], []
    for round_index in range(rounds):
        if round_index % 2 == 0:
            ref.append(batch_us(reference))
            ctx.append(batch_us(contextual))
        else:
            ctx.append(batch_us(contextual))
            ref.append(batch_us(reference))
    return {"reference_us": statistics.median(ref), "contextual_us": statistics.median(ctx),
            "extra_us": statistics.median(c - r for c, r in zip(ctx, ref))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=41)
    parser.add_argument("--profile", action="store_true", help="print cProfile of cached contextual calls")
    args = parser.parse_args()
    x = torch.arange(N, dtype=torch.float32)
    y = torch.empty_like(x)
    plain_kernels, tuned_kernels = kernels(plain=True), kernels(plain=False)
    log_dir = tempfile.mkdtemp(prefix="contextual-overhead-")

    def contextual(body: Callable[..., None]) -> Any:
        return contextual_autotune(n_warmup=1, n_repeat=1, log_dir=log_dir, compile_threads=2)(body)

    def nothing(x: Any, y: Any) -> None:
        return None

    pairs = {
        "no kernel": (nothing, contextual(nothing)),
        "1 launch": (launcher(plain_kernels[:1]), contextual(launcher(tuned_kernels[:1]))),
        f"{LAUNCHES} launches": (launcher(plain_kernels), contextual(launcher(tuned_kernels))),
    }
    for reference, tuned in pairs.values():
        reference(x, y)  # tunes (plain Triton: the cost bench; contextual: the engine)
        tuned(x, y)
        if tuned.last_tuner.outer_runs != 1:
            tuned(x, y)
        tuned(x, y)
        assert tuned.last_tuner.outer_runs == 1, "the contextual function still tunes"
    assert all(k.best_config is not None for k in plain_kernels + tuned_kernels)

    if args.profile:
        for name in pairs:
            call = pairs[name][1]
            profiler = cProfile.Profile()
            profiler.runcall(lambda: [call(x, y) for _ in range(500)])
            print(f"== cProfile, 500 cached contextual calls, {name}: disttune's own functions ==")
            stats = pstats.Stats(profiler, stream=sys.stdout)
            stats.sort_stats("cumulative").print_stats(r"disttune/|autotuner.py:\d+\(run\)", 14)
        # cProfile does not see into the engine (C++): its part of a call, timed alone.
        tuner = pairs["no kernel"][1].last_tuner
        engine = min(timeit.repeat(lambda: tuner.run(lambda: None), number=2000, repeat=5)) / 2000 * 1e6
        print(f"the engine's run() of an outer function that does nothing: {engine:.2f} us per call")
        return 0

    gc.disable()
    print(f"per call, us (median of {args.rounds} paired rounds of {BATCH} calls; TRITON_INTERPRET=1, "
          f"{len(CONFIGS)} configs per kernel)")
    print(f"{'case':<22} {'plain':>9} {'contextual':>11} {'extra':>9}")
    for body in ("interpreted", "no-op"):
        if body == "no-op":
            # The interpreter's launch replaced by a no-op on both sides: what is left is
            # the launch path of plain Triton and of the contextual call.
            copy_kernel.run = lambda *args, **kwargs: None
        for name, (reference, tuned) in pairs.items():
            if body == "no-op" and name == "no kernel":
                continue
            figures = paired(lambda: reference(x, y), lambda: tuned(x, y), args.rounds)
            label = name if body == "interpreted" else f"{name} (no-op run)"
            print(f"{label:<22} {figures['reference_us']:>9.2f} {figures['contextual_us']:>11.2f} "
                  f"{figures['extra_us']:>9.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
