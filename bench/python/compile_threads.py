"""The drop-in's first call against the size of the process's compile pool
(TRITON_DIST_AUTOTUNE_COMPILE_THREADS), one GPU: for each thread count, rounds of fresh
processes with fresh Triton and disttune caches, the counts interleaved within a round, running
one first call (`fla.chunk_gla`: fla-core's chunk_gla forward + backward under the switch and
`matmul`: the 384-config matmul through the drop-in, both real_libs.py's children;
`contextual32`: bench_gpu.py's 32-config contextual first call), and the median first call of
each count.

    python bench/python/compile_threads.py [--threads 8,16,32] [--rounds 2] [--ops fla.chunk_gla,matmul,contextual32]

Prints one JSON object: per op, per thread count, the first calls and their median.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import bench_gpu  # noqa: E402  (beside this file)
import real_libs  # noqa: E402


def first_call(op, threads, out_dir):
    os.environ["TRITON_DIST_AUTOTUNE_COMPILE_THREADS"] = str(threads)
    if op == "contextual32":
        return bench_gpu.child("contextual")["first_call_s"]
    out_file = os.path.join(out_dir, f"{op}.{threads}.out")
    run = real_libs.run_child(["child", op, "dropin", out_file], real_libs.fresh_caches())
    if "error" in run:
        raise RuntimeError(f"{op} on {threads} compile threads failed:\n{run['error']}")
    return run["first_call_s"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", default="8,16,32")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--ops", default="fla.chunk_gla,matmul,contextual32")
    parser.add_argument("--wheels", default=os.path.join(real_libs.ROOT, ".whl"))
    args = parser.parse_args()
    counts = [int(text) for text in args.threads.split(",")]
    site = real_libs.install_wheels(args.wheels)
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [site, HERE, os.environ.get("PYTHONPATH", "")]))
    out_dir = tempfile.mkdtemp(prefix="compile-threads-")
    summary = {"cpu_count": os.cpu_count(), "ops": {}}
    for op in filter(None, args.ops.split(",")):
        calls = {threads: [] for threads in counts}
        for round_index in range(args.rounds):
            order = counts if round_index % 2 == 0 else counts[::-1]
            for threads in order:
                calls[threads].append(first_call(op, threads, out_dir))
                print(f"{op} threads {threads}: {calls[threads][-1]:.2f} s", file=sys.stderr, flush=True)
        summary["ops"][op] = {str(threads): {"first_calls_s": calls[threads], "median_s": statistics.median(calls[threads])}
                              for threads in counts}
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
