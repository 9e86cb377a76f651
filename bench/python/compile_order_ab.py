"""fla-core's chunk_gla first call under the switch, with the drop-in's compiles as shipped against
the same drop-in without what docs/triton-dropin.md ("Where a compile's time goes") added, one GPU:
rounds of fresh processes with fresh Triton and disttune caches, the variants alternated within
a round, and the median first call of each.

    python bench/python/compile_order_ab.py [--rounds 2] [--variants shipped,memo,before] [--wheels .whl]
        [--timeline-out timeline.json]

Variants: `shipped` (compiles queued predicted-longest first, num_stages variants last; what
configs have in common compiled once: the stages after a TTGIR several reach, the codegen of
num_stages variants); `memo` (that sharing, configs queued in their order but num_stages
variants last); `before` (neither: the configs' order, every config compiled through). The last
two replace the drop-in's submission_order and the memo's install in the child process before
the switch is installed.
Prints one JSON object: per variant, the first calls, their median and the stage runs reused.
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

import real_libs  # noqa: E402  (beside this file)

VARIANTS = ("shipped", "memo", "before")


def child(variant: str, out_file: str) -> dict:
    from disttune import _triton_compile, _triton_stages

    if variant == "memo":
        _triton_compile.submission_order = _triton_stages.stage_variants_last
    if variant == "before":
        _triton_compile.submission_order = lambda configs, indices: list(indices)
        _triton_stages.install = lambda: None
    result = real_libs.child("fla.chunk_gla", "dropin", out_file)
    timelines = result["timelines"]
    return {"variant": variant, "first_call_s": result["first_call_s"], "steady_ms": result["steady_ms"],
            "compiled": sum(t["compiled"] for t in timelines),
            "stages_reused": sum(t.get("stages_reused", 0) for t in timelines),
            "tunings_s": sum(t["total_s"] for t in timelines), "timelines": timelines}


def main() -> None:
    if sys.argv[1:2] == ["child"]:
        print(json.dumps(child(sys.argv[2], sys.argv[3])))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--wheels", default=os.path.join(real_libs.ROOT, ".whl"))
    parser.add_argument("--timeline-out", help="write the first round's timelines of the first variant here, "
                                               "as real_libs.py writes them (for bench/replay/compile_order.py)")
    args = parser.parse_args()
    variants = [v for v in args.variants.split(",") if v]
    unknown = set(variants) - set(VARIANTS)
    if unknown:
        parser.error(f"unknown variants {sorted(unknown)}; known: {', '.join(VARIANTS)}")
    site = real_libs.install_wheels(args.wheels)
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [site, HERE, os.environ.get("PYTHONPATH", "")]))
    out_dir = tempfile.mkdtemp(prefix="compile-order-")
    runs: dict[str, list[dict]] = {v: [] for v in variants}
    for round_index in range(args.rounds):
        for variant in variants:
            out_file = os.path.join(out_dir, f"{variant}.{round_index}.pt")
            run = real_libs.run_child(["child", variant, out_file], real_libs.fresh_caches(), __file__)
            if "error" in run:
                raise RuntimeError(f"variant {variant} failed:\n{run['error']}")
            runs[variant].append(run)
            print(json.dumps({k: v for k, v in run.items() if k != "timelines"}), file=sys.stderr, flush=True)
    if args.timeline_out:
        with open(args.timeline_out, "w") as out:
            json.dump({"ops": [{"op": "fla.chunk_gla", "runs": {"dropin": runs[variants[0]][0]}}]}, out)
    print(json.dumps({"op": "fla.chunk_gla", "rounds": args.rounds, "variants": {
        v: {"first_calls_s": [r["first_call_s"] for r in rs],
            "median_s": statistics.median(r["first_call_s"] for r in rs),
            "compiled": rs[0]["compiled"], "stages_reused": rs[0]["stages_reused"]} for v, rs in runs.items()}}))


if __name__ == "__main__":
    main()
