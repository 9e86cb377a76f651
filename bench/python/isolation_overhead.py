"""Isolated vs in-process measurement phase of function-level tuning (issue 16's target: at most
1.5x) on the 32-config fp16 4096^3 Triton matmul of bench/python/matmul.py. Each tuning is timed
after a first one that compiled every config and started the worker; prints one JSON object.

    python bench/python/isolation_overhead.py [--repeats 5]
"""

import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def tuned(isolate):
    from disttune.tune import autotune
    from matmul import CONFIGS, compile_only, launch

    return autotune(
        config_space=[{"cfg": cfg} for cfg in CONFIGS],
        key_fn=lambda a, b, c: (tuple(a.shape), tuple(b.shape), str(a.dtype)),
        precompile=compile_only,
        disk_cache=False,
        isolate=isolate,
    )(launch)


def tuning_seconds(isolate, a, b, c):
    """Wall time of one fresh tuning (a new tuned function, so nothing is cached)."""
    import torch

    function = tuned(isolate)
    torch.cuda.synchronize()
    began = time.perf_counter()
    function(a, b, c)
    torch.cuda.synchronize()
    return time.perf_counter() - began, function


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=5)
    options = parser.parse_args()

    from matmul import operands

    a, b, c = operands()
    cold_in_process, _ = tuning_seconds(False, a, b, c)  # compiles every config
    cold_isolated, _ = tuning_seconds(True, a, b, c)  # starts the worker, loads the kernels there
    in_process, isolated, picks = [], [], []
    for _ in range(options.repeats):
        seconds, function = tuning_seconds(False, a, b, c)
        in_process.append(seconds)
        seconds, isolated_function = tuning_seconds(True, a, b, c)
        isolated.append(seconds)
        report = isolated_function.last_report
        picks.append({"in_process": function.last_report.best, "isolated": report.best,
                      "failed_isolated": sum(candidate.failed for candidate in report.candidates)})
    ratio = statistics.median(isolated) / statistics.median(in_process)
    print(json.dumps({
        "case": "32-config fp16 4096^3 Triton matmul, 5 warm-up + 10 timed runs per config",
        "cold_in_process_s": cold_in_process,
        "cold_isolated_s": cold_isolated,
        "in_process_s": in_process,
        "isolated_s": isolated,
        "median_ratio_isolated_vs_in_process": ratio,
        "target_ratio": 1.5,
        "met": ratio <= 1.5,
        "picks": picks,
    }, indent=2))


if __name__ == "__main__":
    main()
