"""On a GPU: the search strategy tuning a replay case live, against its recorded table.

Each config is JIT-compiled at its first run (no precompile), so only the configs the search
names are compiled. Prints one JSON line per run: the first call's wall time, the configs
measured (and failed), and the chosen config's recorded time over the table's best.

    python bench/replay/search_live.py --case matmul_fp16_3072 --seeds 1
"""

import argparse
import json
import os
import pathlib
import statistics
import sys
import tempfile
import time

import torch

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from kernels import CASES, Matmul  # noqa: E402

from disttune.tune import autotune  # noqa: E402

TABLES = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "replay"


def run_once(case, table: dict, seed: int) -> dict:
    def launch(x, cfg):
        case.before_run()
        grid, args = case.args(cfg)
        case.kernel[grid](*args, num_warps=cfg.num_warps, num_stages=cfg.num_stages, **cfg.kwargs)
        return x

    with tempfile.TemporaryDirectory() as cache:
        os.environ["TRITON_CACHE_DIR"] = os.path.join(cache, "triton")  # fresh compiles: nothing cached
        tuned = autotune(config_space=[{"cfg": config} for config in case.configs], key_fn=lambda x: (tuple(x.shape),),
                         strategy="search", strategy_options={"seed": seed},
                         cache_dir=os.path.join(cache, "disttune"))(launch)
        probe = torch.empty(1, device="cuda")
        torch.cuda.synchronize()
        begin = time.perf_counter()
        tuned(probe)
        torch.cuda.synchronize()
        first_call_s = time.perf_counter() - begin
    report = tuned.last_report
    chosen = next(iter(tuned.cache.values()))["cfg"]
    index = next(i for i, config in enumerate(case.configs) if config is chosen or str(config) == str(chosen))
    true_ms = [statistics.median(e["samples_ms"]) if e["status"] == "ok" else None for e in table["entries"]]
    best = min(ms for ms in true_ms if ms is not None)
    return {"case": case.name, "seed": seed, "first_call_s": round(first_call_s, 2),
            "measured": sum(1 for c in report.candidates if c.measured),
            "failed": sum(1 for c in report.candidates if c.measured and c.failed),
            "configs": len(case.configs), "timer": report.timer, "chosen": str(chosen),
            "ratio_to_table_best": round(true_ms[index] / best, 4) if true_ms[index] else None}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", default=Matmul.name, choices=sorted(CASES))
    parser.add_argument("--seeds", type=int, default=1)
    options = parser.parse_args()
    case = CASES[options.case]()
    table = json.loads((TABLES / f"{options.case}.json").read_text())
    for seed in range(options.seeds):
        print(json.dumps(run_once(case, table, seed)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
