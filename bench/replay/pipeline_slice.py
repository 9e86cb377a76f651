"""Writes bench/python/pipeline_bench.py's 384-config matmul space as a replay table: the
recorded fp16 matmul's GROUP_M 8 configs, in that bench's config order, so that a replayed
seed samples the configs a live tuning of the bench samples (docs/strategies.md, "What
still makes a round wait").

    python3 bench/replay/pipeline_slice.py OUT.json
    build/dev/tools/disttune replay OUT.json --strategy search --seeds 50
"""

import json
import sys
from pathlib import Path

TABLE = Path(__file__).resolve().parents[2] / "tests" / "data" / "replay" / "matmul_fp16_3072.json"


def knobs(entry: dict) -> tuple:
    config = entry["config"]["cfg"]["$triton.Config"]
    kwargs = config["kwargs"]
    return (kwargs["GROUP_M"], kwargs["BLOCK_M"], kwargs["BLOCK_N"], kwargs["BLOCK_K"], config["num_stages"],
            config["num_warps"])


def main() -> None:
    table = json.loads(TABLE.read_text())
    by_knobs = {knobs(entry): entry for entry in table["entries"]}
    # pipeline_bench.configs_384()'s order.
    order = [(8, bm, bn, bk, stages, warps) for bm in (32, 64, 128, 256) for bn in (32, 64, 128, 256)
             for bk in (32, 64, 128) for stages in (2, 3, 4, 5) for warps in (4, 8)]
    table["kernel"] = "matmul_fp16_3072_pipeline_bench_384"
    table["entries"] = [by_knobs[k] for k in order]
    Path(sys.argv[1]).write_text(json.dumps(table))


if __name__ == "__main__":
    main()
