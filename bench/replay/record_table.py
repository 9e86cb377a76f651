"""Records exhaustive replay tables on a GPU: every config of a case (bench/replay/kernels.py)
is compiled (a thread pool, as disttune's precompile does), then every config that runs is
timed in interleaved rounds (each round visits every config once, in a shuffled order), so
that a slow spell of the device is spread over all configs instead of landing on a few.

Each timed run is one CUDA event pair around one launch; before each config's runs a sleep
kernel keeps the device busy while the host queues them, so the pair times the kernel and
not the host's launch. Failures (compile errors, out of resources) are recorded with their
reason. The output is the raw table: configs as Triton's fields; bench/replay/canonical_table.py
turns it into the replay table the tests read (configs as the engine's canonical JSON).

    python3 bench/replay/record_table.py --out DIR [--case NAME ...] [--rounds 3]
"""

import argparse
import json
import os
import random
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kernels import CASES  # noqa: E402
from raw_table import device_facts, failure_text, raw_entry, raw_table  # noqa: E402

WARMUP_RUNS = 2
TIMED_RUNS = 5
SLEEP_CYCLES = 1_000_000  # ~0.5 ms at the H200's clock: longer than queueing 7 launches


def progress(line: str) -> None:
    """A progress line on stderr (stdout may be a table)."""
    print(line, file=sys.stderr, flush=True)


def compile_all(case, threads: int) -> dict:
    """Compiles every config; returns {index: (compiled kernel or None, seconds, reason)}."""

    def compile_one(index: int):
        config = case.configs[index]
        grid, args = case.args(config)
        start = time.perf_counter()
        try:
            compiled = case.kernel.warmup(*args, grid=grid, num_warps=config.num_warps,
                                          num_stages=config.num_stages, **config.kwargs)
            return index, (compiled, time.perf_counter() - start, "")
        except Exception as error:  # noqa: BLE001 - every failure is a recorded outcome
            return index, (None, time.perf_counter() - start, failure_text(error))

    total = len(case.configs)
    started = time.perf_counter()
    outcomes = {}
    with ThreadPoolExecutor(max_workers=threads) as pool:
        for done in as_completed([pool.submit(compile_one, index) for index in range(total)]):
            index, outcome = done.result()
            outcomes[index] = outcome
            if len(outcomes) % max(1, total // 10) == 0 or len(outcomes) == total:
                failed = sum(1 for compiled, _, _ in outcomes.values() if compiled is None)
                progress(f"{case.name}: compiled {len(outcomes)} of {total} ({failed} failed), "
                         f"{time.perf_counter() - started:.1f} s")
    for index, (compiled, seconds, reason) in outcomes.items():
        if compiled is None:
            continue
        try:
            compiled._init_handles()  # loads the binary: out-of-resources shows here
        except Exception as error:  # noqa: BLE001
            outcomes[index] = (None, seconds, failure_text(error))
    return outcomes


def launch(case, config):
    grid, args = case.args(config)
    case.kernel[grid](*args, num_warps=config.num_warps, num_stages=config.num_stages, **config.kwargs)


def busy() -> None:
    """Keeps the device busy for ~0.5 ms while the host queues the runs behind it."""
    torch.cuda._sleep(SLEEP_CYCLES)


def time_config(case, config) -> list:
    """WARMUP_RUNS untimed and TIMED_RUNS timed launches behind a sleep kernel; ms each."""
    busy()
    for _ in range(WARMUP_RUNS):
        case.before_run()
        launch(case, config)
    pairs = []
    for _ in range(TIMED_RUNS):
        case.before_run()
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        launch(case, config)
        stop.record()
        pairs.append((start, stop))
    torch.cuda.synchronize()
    return [start.elapsed_time(stop) for start, stop in pairs]


def record(case_type, rounds: int, threads: int, seed: int) -> dict:
    case = case_type()
    started = time.perf_counter()
    compiled = compile_all(case, threads)
    compile_wall = time.perf_counter() - started
    entries = [raw_entry(config, compiled[index][1], reason=compiled[index][2])
               for index, config in enumerate(case.configs)]
    runnable = [i for i, entry in enumerate(entries) if entry["status"] == "ok"]
    # A first launch of each config (module load) before any round; a failure here is recorded.
    for index in runnable:
        try:
            launch(case, case.configs[index])
            torch.cuda.synchronize()
        except Exception as error:  # noqa: BLE001
            entries[index].update(status="failed", reason=failure_text(error))
            entries[index].pop("samples_ms", None)
    runnable = [i for i in runnable if entries[i]["status"] == "ok"]
    order = random.Random(seed)
    measure_started = time.perf_counter()
    progress(f"{case.name}: {len(runnable)} of {len(entries)} configs run; timing {rounds} rounds")
    for round_index in range(rounds):
        visit = list(runnable)
        order.shuffle(visit)
        for index in visit:
            entries[index]["samples_ms"] += [round(ms, 5) for ms in time_config(case, case.configs[index])]
        progress(f"{case.name}: round {round_index + 1} of {rounds} timed, "
                 f"{time.perf_counter() - measure_started:.1f} s")
    measure_wall = time.perf_counter() - measure_started
    method = (f"compiled on {threads} threads ({compile_wall:.1f} s wall); {rounds} interleaved rounds "
              f"(shuffled order, seed {seed}); per round and config a sleep kernel, {WARMUP_RUNS} "
              f"warm-up and {TIMED_RUNS} timed launches, one CUDA event pair each; no L2 flush "
              f"({measure_wall:.1f} s wall)")
    return raw_table(case.name, case.problem, method, entries, device_facts())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--case", action="append", choices=sorted(CASES))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 8)
    parser.add_argument("--seed", type=int, default=0)
    options = parser.parse_args()
    os.makedirs(options.out, exist_ok=True)
    for name in options.case or list(CASES):
        started = time.perf_counter()
        table = record(CASES[name], options.rounds, options.threads, options.seed)
        path = os.path.join(options.out, f"{name}.json")
        with open(path, "w") as file:
            json.dump(table, file, separators=(",", ":"))
        ok = [e for e in table["entries"] if e["status"] == "ok"]
        best = min(sorted(e["samples_ms"])[len(e["samples_ms"]) // 2] for e in ok)
        print(f"{name}: {len(table['entries'])} configs, {len(ok)} ran, best median {best:.4f} ms, "
              f"{time.perf_counter() - started:.1f} s; {table['method']}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
