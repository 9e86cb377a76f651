"""Issue 22 benchmark on one H200: compile and measure pipelined, configs that cannot run
costing little, ranks sharing the compile. Three parts, side by side in one run:

(a) a 384-config Triton fp16 4096^3 matmul space of our own (BLOCK_M/N 32..256, BLOCK_K
    32..128, stages 2..5, warps 4/8; the largest do not fit in shared memory): the first
    call of disttune.autotune with precompile (16 threads) per strategy, with a text timeline
    (compile threads busy, launches), then its regret against an interleaved oracle over up
    to --tunings fresh tunings (each in a new process with an empty TRITON_CACHE_DIR) while
    --budget-s lasts; each tuning's line gives its first launch, its compiles' first and
    last end and each compile's config, start and end (to read where a slow seed waited).
    triton.autotune is NOT run on this space (~280 s).
(b) the 32-config matmul of matmul.py: disttune's first call next to triton.autotune's.
(c) 2 ranks (gloo, one GPU) with split_across_ranks, each compiling on its own half of the
    cores, against one rank on one half: the first call, as two hosts of 8 cores would see it
    (a Triton cache each), and as one host would (one cache: the chosen config's binary is
    found, not compiled again, by the rank that did not measure it).

    python bench/python/pipeline_bench.py                          # all three, converge
    python bench/python/pipeline_bench.py --strategies converge,search --tunings 10
    python bench/python/pipeline_bench.py --parts space --strategies search --tunings 5 --seeds
    python bench/python/pipeline_bench.py --parts ranks --ranks-space 384
    python bench/python/pipeline_bench.py --parts space --strategies 'search,search:fraction=0.0625' --seeds
    python bench/python/pipeline_bench.py --parts space --strategies search --table OUT.raw.json

A strategy of (a) may carry options after a colon, NAME=VALUE joined by '+'
(`search:fraction=0.0625+batch=4`): an A/B of options in one run, on one machine.

Prints the timelines and a summary; the last line is one JSON object. Children are this
file with `child ...` arguments (one process per measurement, a fresh Triton cache each).
"""

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)  # matmul.py; disttune is the installed package
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "replay"))  # raw_table.py

from raw_table import raw_entry, raw_table  # noqa: E402

SIZE = 4096
ORACLE_ROUNDS = 5
ORACLE_RUNS = 3


def configs_384():
    import triton

    return [
        triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8}, num_stages=stages, num_warps=warps)
        for bm in (32, 64, 128, 256)
        for bn in (32, 64, 128, 256)
        for bk in (32, 64, 128)
        for stages in (2, 3, 4, 5)
        for warps in (4, 8)
    ]


def space(name):
    if name == "384":
        return configs_384()
    from matmul import CONFIGS

    return CONFIGS


def key_fn(a, b, c):
    return (tuple(a.shape), tuple(b.shape), str(a.dtype))


def timeline_text(call_start, call_end, compiles, launches, columns=40):
    """One row per time slice: compile threads busy (average over the slice) and launches."""
    span = max(call_end - call_start, 1e-6)
    step = max(span / columns, 0.05)
    rows = ["  t_s   compile threads busy            launches"]
    t = call_start
    while t < call_end:
        end = min(t + step, call_end)
        busy = sum(max(0.0, min(e, end) - max(s, t)) for _, s, e, _ in compiles) / (end - t)
        runs = sum(1 for x in launches if t <= x < end)
        rows.append(f"{t - call_start:6.2f}  {'#' * round(busy):<16s} {busy:5.1f}   {runs:6d}")
        t = end
    return "\n".join(rows)


def strategy_spec(spec):
    """'NAME' or 'NAME:OPTION=VALUE+OPTION=VALUE' as (name, {option: value})."""
    name, _, options = spec.partition(":")
    pairs = [option.partition("=") for option in options.split("+") if option]
    bad = [key for key, equals, _ in pairs if not equals or not key]
    if bad:
        raise ValueError(f"strategy {spec!r}: each option after ':' is NAME=VALUE, joined by '+'")
    return name, {key: value for key, _, value in pairs}


def call_figures(start, compiles, launches):
    """Where a first call's time went: its first launch, its compiles' last end and their
    thread-seconds (each compile (config, start, end, ...), times from perf_counter)."""
    return {
        "compiled": len(compiles),
        "first_launch_s": round(min(launches) - start, 3) if launches else None,
        "first_compile_end_s": round(min(e for _, _, e, _ in compiles) - start, 3) if compiles else None,
        "last_compile_end_s": round(max(e for _, _, e, _ in compiles) - start, 3) if compiles else None,
        "compile_thread_s": round(sum(e - s for _, s, e, _ in compiles), 2),
    }


def child_tune(space_name, spec, with_timeline, seed=None):
    """One fresh first call of disttune.autotune with precompile on a space, with a strategy
    spec (strategy_spec()) at the strategy's `seed` if given."""
    import torch

    from disttune.tune import autotune
    from matmul import compile_only, launch, operands

    configs = space(space_name)
    a, b, c = operands(SIZE)
    launches = []

    def launcher(a, b, c, cfg):
        launches.append(time.perf_counter())
        return launch(a, b, c, cfg)

    strategy, options = strategy_spec(spec)
    if seed is not None:
        options["seed"] = seed
    tuned = autotune(config_space=[{"cfg": cfg} for cfg in configs], key_fn=key_fn, precompile=compile_only,
                     precompile_threads=16, strategy=strategy, disk_cache=False,
                     strategy_options=options or None)(launcher)
    torch.cuda.synchronize()
    start = time.perf_counter()
    result = tuned(a, b, c)
    torch.cuda.synchronize()
    end = time.perf_counter()
    torch.testing.assert_close(result, a @ b, atol=0.5, rtol=0.05)
    report = tuned.last_report
    chosen = next(iter(tuned.cache.values()))["cfg"]
    compiles = tuned.last_compiles
    out = {
        "strategy": spec, "configs": len(configs), "first_call_s": round(end - start, 3),
        "chosen": next(i for i, cfg in enumerate(configs) if cfg is chosen),
        "measured": sum(1 for r in report.candidates if r.measured and not r.failed),
        "out_of_resources": sum(1 for r in report.candidates if "out of resources" in r.error),
        "failed": sum(1 for r in report.candidates if r.failed),
        **call_figures(start, compiles, launches),
    }
    # Each compile's config, start and end (s since the call began), to read which one a round
    # waited on.
    out["compiles"] = sorted(([i, round(s - start, 3), round(e - start, 3)] for i, s, e, _ in compiles),
                             key=lambda compile_: compile_[1])
    if with_timeline:
        out["timeline"] = timeline_text(start, end, compiles, launches)
    return out


def child_oracle(space_name):
    """Every config that runs, timed interleaved: each round runs every config in turn
    (one warm-up, then ORACLE_RUNS launches between two events); each config's rounds, each
    config's compile seconds (16 threads; a compile found in the Triton cache takes its load
    time), why the others failed, and the device (with_times() adds the medians)."""
    from concurrent.futures import ThreadPoolExecutor

    import torch

    from matmul import compile_only, launch, operands
    from raw_table import device_facts, failure_text

    configs = space(space_name)
    a, b, c = operands(SIZE)
    entries = [{"cfg": cfg} for cfg in configs]

    def timed_compile(entry):
        begin = time.perf_counter()
        kernel = _try(lambda: compile_only(entry, a, b, c))
        return kernel, time.perf_counter() - begin

    with ThreadPoolExecutor(16) as pool:
        compiled = list(pool.map(timed_compile, entries))
    runnable = []
    failed = {}
    for i, (kernel, _) in enumerate(compiled):
        if kernel is None:
            failed[str(i)] = "compile failed"
            continue
        try:
            launch(a, b, c, configs[i])
            torch.cuda.synchronize()
            runnable.append(i)
        except Exception as error:  # out of resources or a compile error: not a candidate of the oracle
            torch.cuda.synchronize()
            failed[str(i)] = failure_text(error)
    times = {i: [] for i in runnable}
    for _ in range(ORACLE_ROUNDS):
        pairs = []
        for i in runnable:
            launch(a, b, c, configs[i])
            begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            begin.record()
            for _ in range(ORACLE_RUNS):
                launch(a, b, c, configs[i])
            end.record()
            pairs.append((i, begin, end))
        torch.cuda.synchronize()
        for i, begin, end in pairs:
            times[i].append(begin.elapsed_time(end) / ORACLE_RUNS)
    return {"rounds_ms": {str(i): t for i, t in times.items()}, "failed": failed,
            "compile_s": [seconds for _, seconds in compiled], "facts": device_facts()}


def with_times(oracle):
    """The oracle with each runnable config's median time (`times_ms`)."""
    return {**oracle, "times_ms": {i: statistics.median(t) for i, t in oracle["rounds_ms"].items()}}


def oracle_table(space_name, oracle):
    """The oracle's figures as a raw replay table (bench/replay/canonical_table.py turns it
    into the table `disttune replay` reads): the live space, on this device, at SIZE^3."""
    entries = [raw_entry(config, oracle["compile_s"][i], samples_ms=oracle["rounds_ms"].get(str(i)),
                         reason=None if str(i) in oracle["rounds_ms"] else oracle["failed"].get(str(i), "not run"))
               for i, config in enumerate(space(space_name))]
    method = (f"bench/python/pipeline_bench.py's oracle: compiled on 16 threads in a fresh Triton cache; "
              f"{ORACLE_ROUNDS} interleaved rounds, each config one warm-up then {ORACLE_RUNS} launches "
              f"between one CUDA event pair (their mean a sample); no L2 flush")
    return raw_table(f"pipeline_bench_{space_name}_{SIZE}", {"M": SIZE, "N": SIZE, "K": SIZE, "dtype": "float16"},
                     method, entries, oracle["facts"])


def _try(make):
    try:
        return make()
    except Exception:
        return None


def child_first32(tuner):
    """The 32-config first call: disttune (pipelined precompile) or triton.autotune."""
    import torch

    from matmul import CONFIGS, launch_autotuned, operands

    a, b, c = operands(SIZE)
    torch.cuda.synchronize()
    if tuner == "disttune":
        from disttune.tune import autotune
        from matmul import compile_only, launch

        run = autotune(config_space=[{"cfg": cfg} for cfg in CONFIGS], key_fn=key_fn, precompile=compile_only,
                       disk_cache=False)(launch)
    else:
        run = launch_autotuned
    start = time.perf_counter()
    result = run(a, b, c)
    torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    torch.testing.assert_close(result, a @ b, atol=0.5, rtol=0.05)
    return {"tuner": tuner, "first_call_s": round(seconds, 3)}


def child_rank(space_name, strategy):
    """One rank of part (c): gloo group from the environment (or alone), split tuning."""
    import torch
    import torch.distributed as dist

    from disttune.tune import autotune
    from matmul import compile_only, launch, operands

    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world > 1:
        dist.init_process_group("gloo")
    configs = space(space_name)
    a, b, c = operands(SIZE)
    threads = len(os.sched_getaffinity(0)) if world == 1 else len(os.sched_getaffinity(0)) // world
    name, options = strategy_spec(strategy)
    launches = []

    def launcher(a, b, c, cfg):
        launches.append(time.perf_counter())
        return launch(a, b, c, cfg)

    tuned = autotune(config_space=[{"cfg": cfg} for cfg in configs], key_fn=key_fn, precompile=compile_only,
                     precompile_threads=max(1, threads), strategy=name, strategy_options=options or None,
                     disk_cache=False, split_across_ranks=True)(launcher)
    if world > 1:
        dist.barrier()
    torch.cuda.synchronize()
    start = time.perf_counter()
    tuned(a, b, c)
    torch.cuda.synchronize()
    own_s = time.perf_counter() - start
    elapsed = torch.tensor([own_s], dtype=torch.float64)
    if world > 1:
        dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)
        dist.destroy_process_group()
    return {"ranks": world, "first_call_s": round(float(elapsed.item()), 3), "own_first_call_s": round(own_s, 3),
            "compile_threads": threads, "split_ranks": tuned.last_report.split_ranks,
            "launches": len(launches), **call_figures(start, tuned.last_compiles, launches)}


def run_child(args, cache_dir=None, env_extra=None, cores=None):
    """Runs `child args` in a new process with its own Triton cache; returns its JSON."""
    cache = cache_dir or tempfile.mkdtemp(prefix="triton-pipeline-")
    env = dict(os.environ, TRITON_CACHE_DIR=cache, **(env_extra or {}))
    command = [sys.executable, __file__, "child", *args]
    if cores is not None:
        command = ["taskset", "-c", ",".join(map(str, cores))] + command
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"child {args} failed:\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1]), cache


# The strategies that take a seed option: with --seeds, their tuning i runs at seed i.
SEEDED = ("search", "random")


def part_space(strategies, tunings, budget_s, seeds, table_path=None):
    results = {}
    oracle = None
    for strategy in strategies:
        began = time.perf_counter()
        seeded = seeds and strategy_spec(strategy)[0] in SEEDED
        seed_of = (lambda i: [str(i)]) if seeded else (lambda i: [])
        first, cache = run_child(["tune", "384", strategy, "1", *seed_of(0)])
        print(f"\n(a) {strategy}: tuning 0's timeline", flush=True)
        print(first.pop("timeline"), flush=True)
        if oracle is None:
            oracle_began = time.perf_counter()
            # With a table to write, the oracle compiles in a fresh cache: the table's compile times.
            oracle, oracle_cache = run_child(["oracle", "384"], cache_dir=None if table_path else cache)
            oracle = with_times(oracle)
            if table_path:
                shutil.rmtree(oracle_cache, ignore_errors=True)
                with open(table_path, "w") as file:
                    json.dump(oracle_table("384", oracle), file, separators=(",", ":"))
                print(f"(a) oracle: the space's raw replay table written to {table_path}", flush=True)
            print(f"(a) oracle: {len(oracle['times_ms'])} configs run, best {min(oracle['times_ms'].values()):.4f} ms",
                  flush=True)
            began += time.perf_counter() - oracle_began  # the oracle is not the strategy's tunings' time
        shutil.rmtree(cache, ignore_errors=True)
        runs = [first]
        while len(runs) < tunings and time.perf_counter() - began < budget_s:
            again, cache = run_child(["tune", "384", strategy, "0", *seed_of(len(runs))])
            shutil.rmtree(cache, ignore_errors=True)
            runs.append(again)
        for i, run in enumerate(runs):
            print(f"(a) {strategy} tuning {i}{' (seed %s)' % seed_of(i)[0] if seeded else ''}: first call "
                  f"{run['first_call_s']} s, first launch {run['first_launch_s']} s, compiles end "
                  f"{run['first_compile_end_s']}-{run['last_compile_end_s']} s, compiled {run['compiled']}, "
                  f"measured {run['measured']}, out of resources {run['out_of_resources']}, failed {run['failed']}, "
                  f"chosen {run['chosen']}; compiles [config, start s, end s]: "
                  f"{json.dumps(run['compiles'])}", flush=True)
        best = min(oracle["times_ms"].values())
        regrets = [oracle["times_ms"].get(str(r["chosen"]), float("inf")) / best - 1 for r in runs]
        results[strategy] = {
            "first_call_s": [r["first_call_s"] for r in runs],
            "first_call_median_s": statistics.median(r["first_call_s"] for r in runs),
            "regret": [round(r, 4) for r in regrets],
            "chosen": [r["chosen"] for r in runs],  # config indices, as in the --table's entries
            "tunings": len(runs),
            "seeds": [int(seed_of(i)[0]) for i in range(len(runs))] if seed_of(0) else None,
            "within_1pct": sum(r <= 0.01 for r in regrets),
            "compiled": first["compiled"], "out_of_resources": first["out_of_resources"],
        }
        print(f"(a) {strategy}: {len(runs)} fresh tunings, first call median "
              f"{results[strategy]['first_call_median_s']:.2f} s (target <= 8 s), regret "
              f"{', '.join(f'{100 * r:.2f}%' for r in regrets)}; within 1%: "
              f"{results[strategy]['within_1pct']}/{len(runs)}", flush=True)
    return results


def part_first32():
    out = {}
    for tuner in ("disttune", "triton"):
        result, cache = run_child(["first32", tuner])
        shutil.rmtree(cache, ignore_errors=True)
        out[tuner] = result["first_call_s"]
    print(f"\n(b) 32 configs, first call: disttune {out['disttune']} s (target <= 2.5 s), "
          f"triton.autotune {out['triton']} s", flush=True)
    return out


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def two_ranks(space_name, strategy, one_cache):
    """Both ranks of a 2-rank split tuning; their JSON outputs, rank 0 first. `one_cache`: the
    ranks share one Triton cache directory (one host, as torchrun leaves it: a rank that did
    not compile the chosen config finds the other's binary); else each has its own (two
    hosts: it compiles the chosen config after the all-gather)."""
    port = str(free_port())
    shared = tempfile.mkdtemp(prefix="triton-ranks-") if one_cache else None
    children = []
    for rank in range(2):
        cache = shared or tempfile.mkdtemp(prefix=f"triton-rank{rank}-")
        env = dict(os.environ, TRITON_CACHE_DIR=cache, MASTER_ADDR="127.0.0.1", MASTER_PORT=port, RANK=str(rank),
                   WORLD_SIZE="2", LOCAL_RANK=str(rank), LOCAL_WORLD_SIZE="2")
        process = subprocess.Popen([sys.executable, __file__, "child", "rank", space_name, strategy], env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        children.append((process, cache))
    outputs = []
    for process, cache in children:
        stdout, stderr = process.communicate(timeout=600)
        shutil.rmtree(cache, ignore_errors=True)
        if process.returncode != 0:
            raise RuntimeError(f"rank child failed:\n{stderr[-4000:]}")
        outputs.append(json.loads(stdout.strip().splitlines()[-1]))
    return outputs


def print_rank(who, figures):
    print(f"(c) {who}: own first call {figures['own_first_call_s']} s; compiled {figures['compiled']} "
          f"({figures['compile_thread_s']} thread-s), first compile ends {figures['first_compile_end_s']} s, last "
          f"{figures['last_compile_end_s']} s; first launch {figures['first_launch_s']} s, {figures['launches']} "
          f"launches", flush=True)


def part_ranks(space_name, strategy):
    cores = sorted(os.sched_getaffinity(0))
    half = cores[: len(cores) // 2]
    one, cache = run_child(["rank", space_name, strategy], cores=half)
    shutil.rmtree(cache, ignore_errors=True)
    print_rank("one rank", one)
    out = {"one_rank_s": one["first_call_s"]}
    variants = ((False, "a Triton cache each (two hosts)", ""), (True, "one Triton cache (one host)", "one_cache_"))
    for one_cache, label, field in variants:
        outputs = two_ranks(space_name, strategy, one_cache)
        for rank, figures in enumerate(outputs):
            print_rank(f"rank {rank} of 2, {label}", figures)
        two = outputs[0]
        ratio = two["first_call_s"] / one["first_call_s"]
        print(f"(c) {space_name} configs, {strategy}: one rank on {len(half)} cores {one['first_call_s']} s; "
              f"2 ranks split, {two['compile_threads']} compile cores each, {label} {two['first_call_s']} s: "
              f"x{ratio:.2f} (target <= 0.7)", flush=True)
        out.update({f"{field}two_ranks_s": two["first_call_s"], f"{field}ratio": round(ratio, 3)})
    return out


def main():
    if sys.argv[1:2] == ["child"]:
        kind, rest = sys.argv[2], sys.argv[3:]
        result = {
            "tune": lambda: child_tune(rest[0], rest[1], rest[2] == "1", int(rest[3]) if len(rest) > 3 else None),
            "oracle": lambda: child_oracle(rest[0]),
            "first32": lambda: child_first32(rest[0]),
            "rank": lambda: child_rank(rest[0], rest[1]),
        }[kind]()
        print(json.dumps(result), flush=True)
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--strategies", default="converge", help="comma-separated engine strategies for (a)")
    parser.add_argument("--tunings", type=int, default=10, help="fresh tunings per strategy for the regret")
    parser.add_argument("--budget-s", type=float, default=100.0,
                        help="per strategy, stop adding fresh tunings after this many seconds (the oracle not counted)")
    parser.add_argument("--parts", default="space,first32,ranks", help="which of space,first32,ranks")
    parser.add_argument("--ranks-space", default="32", choices=("32", "384"), help="config space of (c)")
    parser.add_argument("--table", help="(a): write the oracle's figures of the 384-config space as a raw replay table "
                        "(bench/replay/canonical_table.py converts it)")
    parser.add_argument("--seeds", action="store_true",
                        help="tuning i of a strategy with a seed (search, random) runs at seed i (0: the default)")
    args = parser.parse_args()
    parts = args.parts.split(",")
    summary = {}
    began = time.perf_counter()
    if "space" in parts:
        summary["space_384"] = part_space(args.strategies.split(","), args.tunings, args.budget_s, args.seeds,
                                           args.table)
    if "first32" in parts:
        summary["first_call_32"] = part_first32()
    if "ranks" in parts:
        summary["ranks"] = part_ranks(args.ranks_space, args.strategies.split(",")[0])
    summary["bench_s"] = round(time.perf_counter() - began, 1)
    print(json.dumps(summary), flush=True)


if __name__ == "__main__":
    main()
