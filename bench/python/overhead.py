"""Cache-hit overhead of a tuned function over calling its launcher directly (no-op launcher)."""

import json
import sys
import timeit

from disttune.tune import autotune


def launcher(x, cfg):
    return None


def measure(calls: int = 1_000_000, repeats: int = 7) -> dict:
    tuned = autotune(config_space=[{"cfg": i} for i in range(4)], key_fn=lambda x: x, disk_cache=False)(launcher)
    tuned(1)  # tunes once; every later call is a cache hit
    direct_ns = min(timeit.repeat(lambda: launcher(1, cfg=0), number=calls, repeat=repeats)) / calls * 1e9
    tuned_ns = min(timeit.repeat(lambda: tuned(1), number=calls, repeat=repeats)) / calls * 1e9
    return {"direct_ns": direct_ns, "tuned_ns": tuned_ns, "overhead_ns": tuned_ns - direct_ns}


if __name__ == "__main__":
    json.dump(measure(), sys.stdout, indent=1)
    print()
