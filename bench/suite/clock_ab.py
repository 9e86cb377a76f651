"""Launch-bound A/B of issue 12: fresh graph-replay tunings of scale 2^18 with CudaTimer's
clock control off and on (interleaved), against the suite's graph-replay oracle. Prints the
oracle and each tuning's per-config times, choice, regret and clocks; writes clock_ab.json.

    python3 bench/suite/clock_ab.py [--tunings 10] [--graph-runs 20] [--out DIR]
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def tune_once(case, core, torch, steady: bool, graph_runs: int, strategy: str) -> dict:
    """One fresh tuning through the engine with a CudaTimer in graph mode."""
    timer = core.CudaTimer(stream=torch.cuda.current_stream().cuda_stream, graph_runs=graph_runs,
                           steady_clock=steady)
    tuner = core.FunctionTuner("clock_ab", "clock_ab", timer=timer, disk_cache=False, strategy=strategy)
    texts = [f'{{"i":{index}}}' for index in range(len(case.configs))]
    report = tuner.resolve("k", texts, lambda index: case.launch(*case.args, cfg=case.configs[index]))
    return {"best": report.best, "ms": [c.agreed_ms for c in report.candidates],
            "clocks": json.loads(timer.clocks())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tunings", type=int, default=10)
    parser.add_argument("--graph-runs", type=int, default=20)
    parser.add_argument("--oracle-ms", type=float, default=300.0)
    parser.add_argument("--strategy", default="exhaustive")
    parser.add_argument("--out", default=os.environ.get("OUT") or os.path.join(HERE, "out"))
    options = parser.parse_args()

    import torch
    from disttune import _core
    from cases import build_scale
    from timing import oracle_graph

    with torch.cuda.stream(torch.cuda.Stream()):
        case = build_scale(18)
        for config in case.configs:
            case.launch(*case.args, cfg=config)
        oracle = [oracle_graph(lambda c=c: case.launch(*case.args, cfg=c), options.oracle_ms)["ms"]
                  for c in case.configs]
        best = min(oracle)
        print("oracle us:", " ".join(f"{ms * 1e3:.3f}" for ms in oracle), f"best config {oracle.index(best)}")
        results = {"oracle_ms": oracle, "off": [], "on": []}
        for _ in range(options.tunings):
            for label, steady in (("off", False), ("on", True)):
                tuning = tune_once(case, _core, torch, steady, options.graph_runs, options.strategy)
                tuning["regret"] = oracle[tuning["best"]] / best - 1.0
                results[label].append(tuning)
                print(f"clock control {label:3s}: chose {tuning['best']} regret {tuning['regret'] * 100:5.2f}% "
                      "us " + " ".join(f"{ms * 1e3:.3f}" for ms in tuning["ms"]) + f" clocks {tuning['clocks']}")
        for label in ("off", "on"):
            regrets = [t["regret"] for t in results[label]]
            print(f"clock control {label}: {sum(r <= 0.03 for r in regrets)}/{len(regrets)} within 3%, "
                  f"max {max(regrets) * 100:.2f}%")
    os.makedirs(options.out, exist_ok=True)
    with open(os.path.join(options.out, "clock_ab.json"), "w") as handle:
        json.dump(results, handle, indent=1)


if __name__ == "__main__":
    main()
