"""Launch-bound investigation of issue 12 (scale 2^18): why the tuner's graph-replay times
disagree with the oracle's. Times every config of the case by several methods side by side,
each a per-launch time in us, and prints one table (config x method) plus each method's
ranking; writes launch_bound.json to --out.

Methods (torch graphs unless named "engine"):
  oracle256     the suite's oracle: a 256-launch graph, one warm replay, then 50 replays per
                batch with an event pair each, until --oracle-ms; median per launch
  steady20      the same loop with a 20-launch graph (graph size alone)
  fresh20       the tuner's loop: capture 20, one untimed replay, 10 timed replays at once
                (replays right after capture)
  warm20        as fresh20, after --warm-ms of untimed replays (a warm graph)
  idle20        as warm20, but the device idles 1 ms (host sleep) before each timed replay
  rotate20      steady20 with the configs' graphs replayed in turn (another kernel between)
  series20      fresh20's first 200 replays, one event pair each: the median of replays
                1-10 and 101-200 (does a new graph speed up over its first replays?)
  engine20/256  disttune's CudaTimer (graph_runs 20 / 256) through an exhaustive tuning of
                the config alone: what the tuner measures

    python3 bench/suite/launch_bound.py [--oracle-ms 30] [--warm-ms 2] [--out DIR]
"""

import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def replay_times(torch, graph, replays: int, idle_s: float = 0.0) -> list:
    """Event pair per replay, back to back (or after `idle_s` of host sleep each); ms."""
    pairs = []
    for _ in range(replays):
        if idle_s:
            torch.cuda.synchronize()
            time.sleep(idle_s)
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        stop.record()
        pairs.append((start, stop))
    torch.cuda.synchronize()
    return [start.elapsed_time(stop) for start, stop in pairs]


def steady(torch, graph, launches: int, min_ms: float) -> float:
    graph.replay()
    times: list = []
    while sum(times) < min_ms:
        times += replay_times(torch, graph, 50)
    return statistics.median(times) / launches * 1e3


def untimed(torch, graph, ms: float, per_replay_ms: float) -> None:
    for _ in range(max(1, int(ms / max(per_replay_ms, 1e-3)))):
        graph.replay()


def engine(core, torch, run, graph_runs: int) -> float:
    timer = core.CudaTimer(stream=torch.cuda.current_stream().cuda_stream, graph_runs=graph_runs)
    tuner = core.FunctionTuner("launch_bound", f"g{graph_runs}", timer=timer, disk_cache=False,
                               strategy="exhaustive")
    report = tuner.resolve("k", ['{"i":0}'], lambda index: run())
    return report.candidates[0].agreed_ms * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--oracle-ms", type=float, default=30.0, help="device time per config and steady method")
    parser.add_argument("--warm-ms", type=float, default=2.0, help="untimed replays before warm20")
    parser.add_argument("--out", default=os.environ.get("OUT") or os.path.join(HERE, "out"))
    options = parser.parse_args()

    import torch
    from disttune import _core
    from cases import build_scale
    from timing import capture_graph, replays_in_turn

    results: dict = {}
    with torch.cuda.stream(torch.cuda.Stream()):
        case = build_scale(18)
        runs = [lambda c=c: case.launch(*case.args, cfg=c) for c in case.configs]
        for run in runs:
            run()
        methods: dict = {name: [] for name in ("oracle256", "steady20", "fresh20", "warm20", "idle20",
                                                "series20_first10", "series20_late", "engine20", "engine256")}
        graphs20 = []
        for run in runs:
            methods["oracle256"].append(steady(torch, capture_graph(run, 256), 256, options.oracle_ms))
            methods["steady20"].append(steady(torch, capture_graph(run, 20), 20, options.oracle_ms))
            graph = capture_graph(run, 20)
            graph.replay()
            methods["fresh20"].append(statistics.median(replay_times(torch, graph, 10)) / 20 * 1e3)
            untimed(torch, graph, options.warm_ms, 20 * 1.5e-3)
            methods["warm20"].append(statistics.median(replay_times(torch, graph, 10)) / 20 * 1e3)
            methods["idle20"].append(statistics.median(replay_times(torch, graph, 10, idle_s=1e-3)) / 20 * 1e3)
            series = replay_times(torch, capture_graph(run, 20), 200)
            methods["series20_first10"].append(statistics.median(series[:10]) / 20 * 1e3)
            methods["series20_late"].append(statistics.median(series[100:]) / 20 * 1e3)
            graphs20.append(graph)
            methods["engine20"].append(engine(_core, torch, run, 20))
            methods["engine256"].append(engine(_core, torch, run, 256))
        # rotate20: every config's warm graph in turn, back to back, until each has min_ms.
        rotated = replays_in_turn(graphs20, options.oracle_ms, turns=1)
        methods["rotate20"] = [statistics.median(t) / 20 * 1e3 for t in rotated]
        results = {"configs": [str(c) for c in case.configs], "us_per_launch": methods}

    names = list(results["us_per_launch"])
    print("per-launch us, scale 2^18 (8 configs)")
    print("config | " + " | ".join(names))
    for index in range(len(results["configs"])):
        print(f"{index} | " + " | ".join(f"{results['us_per_launch'][n][index]:.3f}" for n in names))
    print("best config by method: " + ", ".join(
        f"{n}={min(range(len(v)), key=v.__getitem__)}" for n, v in results["us_per_launch"].items()))
    os.makedirs(options.out, exist_ok=True)
    with open(os.path.join(options.out, "launch_bound.json"), "w") as sink:
        json.dump(results, sink, indent=1)


if __name__ == "__main__":
    main()
