"""The GPU benchmark suite of issue 7: four cases x four tuners (triton.autotune, the
spec's method, disttune exhaustive, disttune adaptive). Per case and tuner: measurement-
phase time and regret over fresh tunings (every config already compiled), the first call
end to end with an empty Triton cache (compilation included), and cache-hit overhead.
Writes suite.json and suite.md to --out ($OUT, else bench/suite/out).

    python3 bench/suite/run_suite.py [--tunings 10] [--triton-tunings 5] [--cases a,b]
"""

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=os.environ.get("OUT") or os.path.join(HERE, "out"),
                        help="where suite.json and suite.md go (default: $OUT, else bench/suite/out)")
    parser.add_argument("--summary", help="also write the target rows as TSV here (what, MET|MISSED, figure)")
    parser.add_argument("--tunings", type=int, default=10, help="fresh tunings per case and tuner")
    parser.add_argument("--triton-tunings", type=int, default=5,
                        help="fresh tunings for triton.autotune (about 125 ms per config each)")
    parser.add_argument("--graph-runs", type=int, default=20,
                        help="runs per CUDA graph for disttune on launch-bound cases")
    parser.add_argument("--oracle-ms", type=float, default=300.0, help="device time per config for the oracle")
    parser.add_argument("--cases", default="matmul_4096,scale_2p18,softmax_8192,scale_2p26")
    parser.add_argument("--no-first-call", action="store_true", help="skip the first-call figures")
    parser.add_argument("--tuners", default="",
                        help="which tuners, comma-separated (default: all of tuners.TUNERS)")
    return parser.parse_args()


def software(torch, triton) -> dict:
    import disttune

    driver = "unknown"
    try:
        driver = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                capture_output=True, text=True, check=True).stdout.strip().splitlines()[0]
    except (OSError, subprocess.CalledProcessError, IndexError):
        pass
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "device": torch.cuda.get_device_name(),
        "driver": driver,
        "torch": torch.__version__,
        "triton": triton.__version__,
        "python": platform.python_version(),
        "disttune": disttune.__version__,
        "command": " ".join(["python3", os.path.relpath(__file__, os.path.join(HERE, "..", "..")), *sys.argv[1:]]),
    }


def check(case, output) -> None:
    """The output of a tuned call must match the case's reference."""
    import torch

    torch.testing.assert_close(output, case.reference(), **case.tolerance)


def first_calls(slug: str, options: argparse.Namespace, log) -> dict:
    """Per tuner: the wall time of the first call on a new JIT kernel of the case with an
    empty TRITON_CACHE_DIR (compilation, tuning and the final run), and the config it chose."""
    from cases import BUILDERS
    from timing import captured_stderr, timed_call
    from tuners import fresh_tuning, selected

    out: dict = {}
    for tuner in selected(options.tuners):
        os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix=f"triton-first-{slug}-")
        case = BUILDERS[slug]()
        tuning = fresh_tuning(tuner, case, options.graph_runs, first_call=True)
        with captured_stderr() as errors:
            seconds, output = timed_call(lambda: tuning.call(*case.args))
        check(case, output)
        out[tuner] = {"first_call_s": seconds, "first_call_choice": tuning.chosen(),
                      "graph_fallback": "graph capture failed" in errors[0]}
        log(f"first call {slug:13s} {tuner:20s} {seconds:7.2f} s  chose {tuning.chosen()}")
    return out


def warm(case) -> None:
    """Compiles every config concurrently, runs each once and checks its output."""
    with ThreadPoolExecutor(max_workers=16) as pool:
        for future in [pool.submit(case.compile_only, entry, *case.args) for entry in case.entries()]:
            future.result()
    for config in case.configs:
        check(case, case.launch(*case.args, cfg=config))


def tune_case(case, options: argparse.Namespace, log) -> dict:
    """Oracle, fresh tunings of every tuner (round-robin), cache-hit overhead."""
    from report import regrets
    from timing import captured_stderr, host_call_us, oracle_flushed, oracle_graph_rotated, timed_call
    from tuners import fresh_tuning, selected

    begin = time.perf_counter()
    if case.launch_bound:
        oracle = oracle_graph_rotated([lambda c=c: case.launch(*case.args, cfg=c) for c in case.configs],
                                      options.oracle_ms)
        oracle_mode = "CUDA-graph replay (256 runs per graph), configs in turn, median"
    else:
        oracle = [oracle_flushed(lambda c=c: case.launch(*case.args, cfg=c), options.oracle_ms)
                  for c in case.configs]
        oracle_mode = "event pair per run, L2 flushed before each, median"
    oracle_ms = [entry["ms"] for entry in oracle]
    log(f"oracle {case.slug}: best {min(oracle_ms) * 1e3:.2f} us (config {oracle_ms.index(min(oracle_ms))}), "
        f"worst {max(oracle_ms) * 1e3:.2f} us, {time.perf_counter() - begin:.1f} s")
    tuners = {name: {"measure_s": [], "chosen": [], "timed_runs": [], "clocks": [], "timing": "",
                     "graph_fallback": False}
              for name in selected(options.tuners)}
    last = {}
    for round_index in range(options.tunings):
        for name in tuners:
            if name == "triton.autotune" and round_index >= options.triton_tunings:
                continue
            tuning = fresh_tuning(name, case, options.graph_runs)
            with captured_stderr() as errors:
                seconds, _ = timed_call(lambda: tuning.call(*case.args))
            entry = tuners[name]
            entry["timing"] = tuning.timing
            entry["graph_fallback"] |= "graph capture failed" in errors[0]
            entry["measure_s"].append(seconds)
            entry["chosen"].append(tuning.chosen())
            entry["timed_runs"].append(tuning.timed_runs())
            entry["clocks"].append(tuning.clocks())
            last[name] = tuning
    for name, tuning in last.items():
        entry = tuners[name]
        entry["last_candidate_ms"] = tuning.candidate_ms()
        entry["regret"] = regrets(oracle_ms, entry["chosen"])
        best = case.configs[entry["chosen"][-1]]
        per_batch = 20 if case.slug.startswith("matmul") else 100
        host = host_call_us({"tuned": lambda: tuning.call(*case.args),
                             "direct": lambda: case.launch(*case.args, cfg=best)}, per_batch, 10)
        entry["hit_us"], entry["direct_us"] = host["tuned"], host["direct"]
        entry["hit_overhead_us"] = host["tuned"] - host["direct"]
        log(f"{case.slug:13s} {name:20s} measure {sorted(entry['measure_s'])[len(entry['measure_s']) // 2] * 1e3:8.1f}"
            f" ms  regret max {max(entry['regret']) * 100:6.2f}%  hit {entry['hit_overhead_us']:+.2f} us"
            f"{clock_cost(entry['clocks'])}")
    return {"title": case.title, "configs": len(case.configs), "launch_bound": case.launch_bound,
            "oracle_mode": oracle_mode, "oracle": oracle, "oracle_ms": oracle_ms, "tuners": tuners,
            "seconds": time.perf_counter() - begin}


def clock_cost(clocks: list) -> str:
    """The clock control's cost per tuning (medians over the tunings), for the log line."""
    if not clocks or not clocks[0]:
        return ""

    def median_of(field: str) -> float:
        return statistics.median_high(c.get(field, 0) for c in clocks)

    return (f"  clock control: settle {median_of('settle_ms'):.1f} ms, {median_of('probes'):.0f} probes,"
            f" {median_of('led_runs'):.0f} led runs ({median_of('leads_ms'):.1f} ms),"
            f" {median_of('gapped_runs'):.0f} gapped, {median_of('discarded_runs'):.0f} slow")


def write(results: dict, out: str) -> str:
    """Writes suite.json and suite.md (the command, then the table) to `out`; the table."""
    from report import markdown

    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "suite.json"), "w") as sink:
        json.dump(results, sink, indent=1)
    table = markdown(results)
    with open(os.path.join(out, "suite.md"), "w") as sink:
        sink.write(f"Command: `{results['meta']['command']}`\n\n" + table)
    return table


def main() -> int:
    options = parse_args()
    work = tempfile.mkdtemp(prefix="disttune-suite-")
    os.environ["TRITON_DIST_AUTOTUNE_CACHE_DIR"] = os.path.join(work, "disttune")
    os.environ["TRITON_CACHE_DIR"] = os.path.join(work, "triton-warm")
    os.environ.pop("TRITON_DIST_AUTOTUNE_STRATEGY", None)
    import torch
    import triton

    if not torch.cuda.is_available():
        print("run_suite: no CUDA device; the suite needs a GPU", file=sys.stderr)
        return 2
    from cases import BUILDERS, build_scale
    from report import summary_rows

    slugs = options.cases.split(",")
    unknown = [slug for slug in slugs if slug not in BUILDERS]
    if unknown:
        print(f"run_suite: unknown case(s) {unknown}; known: {sorted(BUILDERS)}", file=sys.stderr)
        return 2
    started = time.perf_counter()

    def log(text: str) -> None:
        print(f"[{time.perf_counter() - started:6.1f} s] {text}", flush=True)

    results = {"meta": software(torch, triton), "cases": {}}
    results["meta"].update(tunings=options.tunings, triton_tunings=options.triton_tunings,
                           graph_runs=options.graph_runs, oracle_ms=options.oracle_ms)
    # Every tuner runs on one non-default stream: the engine cannot capture graphs on the
    # legacy default stream.
    with torch.cuda.stream(torch.cuda.Stream()):
        warmup = build_scale(10)  # loads the driver and Triton's launcher before any timing
        warm(warmup)
        for slug in slugs:
            case = BUILDERS[slug]()
            warm(case)
            log(f"compiled and checked {len(case.configs)} configs of {slug}")
            results["cases"][slug] = tune_case(case, options, log)
            del case
            results["meta"]["wall_s"] = time.perf_counter() - started
            table = write(results, options.out)  # after every step: a cut-short run leaves what it has
        for slug in [] if options.no_first_call else slugs:
            for name, figures in first_calls(slug, options, log).items():
                entry = results["cases"][slug]["tuners"][name]
                entry.update(figures)
                oracle_ms = results["cases"][slug]["oracle_ms"]
                entry["first_call_regret"] = oracle_ms[figures["first_call_choice"]] / min(oracle_ms) - 1
                entry["graph_fallback"] |= figures["graph_fallback"]
            results["meta"]["wall_s"] = time.perf_counter() - started
            table = write(results, options.out)
    if options.summary:
        with open(options.summary, "w") as sink:
            for row in summary_rows(results):
                sink.write("\t".join(row) + "\n")
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
