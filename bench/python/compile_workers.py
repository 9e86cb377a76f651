"""Compile workers against compile threads, one GPU: real ops' first call under the drop-in
switch with TRITON_DIST_AUTOTUNE_COMPILE_PROCESSES=0 (threads only) and =N (N worker
processes), alternated, each run a fresh process with fresh Triton and disttune caches.

    python bench/python/compile_workers.py [--wheels .whl] [--ops fla.chunk_gla,matmul] [--rounds 2]
        [--workers 16]

Prints one JSON object: per op and setting, each round's first call and compile-pool figures.
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
import real_libs  # noqa: E402  (its ops, fresh processes and wheels)


def pool_figures(run):
    """Compiles and the compile pool's busy seconds over a run's timelines."""
    timelines = run.get("timelines", [])
    return {"tunings": len(timelines), "compiled": sum(t.get("compiled", 0) for t in timelines)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheels", default=os.path.join(real_libs.ROOT, ".whl"))
    parser.add_argument("--ops", default="fla.chunk_gla,matmul")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    site = real_libs.install_wheels(args.wheels)
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [site, HERE, os.environ.get("PYTHONPATH", "")]))
    out_dir = tempfile.mkdtemp(prefix="compile-workers-")
    summary = {"workers": args.workers, "ops": {}}
    for name in filter(None, args.ops.split(",")):
        rows = {"threads": [], "workers": []}
        for round_index in range(args.rounds):
            for setting, count in (("threads", 0), ("workers", args.workers)):
                os.environ["TRITON_DIST_AUTOTUNE_COMPILE_PROCESSES"] = str(count)
                out_file = os.path.join(out_dir, f"{name}.{setting}.{round_index}")
                run = real_libs.run_child(["child", name, "dropin", out_file], real_libs.fresh_caches())
                if "error" in run:
                    rows[setting].append({"error": run["error"][-600:]})
                else:
                    rows[setting].append({"first_call_s": run["first_call_s"], **pool_figures(run)})
                print(name, setting, round_index, json.dumps(rows[setting][-1]), flush=True)
        medians = {setting: statistics.median(r["first_call_s"] for r in runs if "first_call_s" in r)
                   for setting, runs in rows.items() if any("first_call_s" in r for r in runs)}
        summary["ops"][name] = {"runs": rows, "median_first_call_s": medians}
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
