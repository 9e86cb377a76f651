"""Small spaces cut from the recorded tables: which strategy suits a space of 24-64 configs (the
size of most real libraries' autotune lists), judged by replay. Each sub-space fixes a few
knobs of a recorded table at random values until 24-64 configs remain; converge and search
are replayed on each, and their simulated first calls, compiles and choices compared, once per
simulated compile pool (`--compile-threads 16 8`: 16 cores, and 8 cores' worth, as the H200's
16 compile threads gave: docs/triton-dropin.md, "Where a compile's time goes").

    python3 bench/replay/small_spaces.py tests/data/replay/*.json [--per-table 4] [--seeds 20] [--seed 0]
        [--smallest 24] [--largest 64] [--compile-threads 16 8] [--compile-min-s 1.5 --compile-max-s 3]
        [--search-options "fraction 0.6"] [--each] [--command build/dev/tools/disttune]

Prints, per compile pool, one row per sub-space (with `--each`) and a summary of the two strategies.
"""

import argparse
import collections
import json
import os
import random
import statistics
import sys
import tempfile

from leave_one_out import run_variant  # one replay run over the tables, parsed


def knobs(entry: dict) -> dict:
    config = entry["config"]["cfg"]["$triton.Config"]
    return {**config["kwargs"], "num_warps": config["num_warps"], "num_stages": config["num_stages"]}


def sub_spaces(table: dict, count: int, rng: random.Random, smallest: int, largest: int) -> list:
    """Up to `count` sub-tables of `table`, each the entries left after fixing knobs at random
    values, with smallest..largest entries of which at least half ran."""
    entries = table["entries"]
    settings = [knobs(entry) for entry in entries]
    values = collections.defaultdict(set)
    for setting in settings:
        for name, value in setting.items():
            values[name].add(json.dumps(value))
    made = []
    for _ in range(200 * count):
        if len(made) == count:
            break
        left = list(range(len(entries)))
        names = sorted(name for name in values if len(values[name]) > 1)
        rng.shuffle(names)
        for name in names:
            if len(left) <= largest:
                break
            value = rng.choice(sorted(values[name]))
            kept = [i for i in left if json.dumps(settings[i][name]) == value]
            if len(kept) >= smallest:
                left = kept
        ran = sum(1 for i in left if entries[i]["status"] == "ok")
        if smallest <= len(left) <= largest and 2 * ran >= len(left):
            made.append(dict(table, kernel=f"{table['kernel']}_sub{len(made)}", entries=[entries[i] for i in left]))
    return made


def compared(converge: list, search: list, seeds: int) -> str:
    """The summary of one compile pool: search against converge over the sub-spaces."""
    pairs = list(zip(converge, search))
    longer = sum(1 for c, s in pairs if s.median_first_call() > c.median_first_call())
    shorter = sum(1 for c, s in pairs if s.median_first_call() < c.median_first_call())
    worse = sum(1 for c, s in pairs if s.worst() > c.worst())
    better = sum(1 for c, s in pairs if s.worst() < c.worst())
    lines = [f"{len(pairs)} sub-spaces, {seeds} seeds each: search's median first call longer than converge's "
             f"on {longer}, shorter on {shorter}; its worst seed worse on {worse}, better on {better}",
             "| strategy | first calls (sum of medians) | worst seeds' first calls (sum) | median / worst of "
             "the sub-spaces' search/converge first-call ratios | compiled (median share of the space) "
             "| worst seed (over all) | seeds within 1.02x / 1.05x |", "|---|---|---|---|---|---|---|"]
    ratios = [s.median_first_call() / c.median_first_call() for c, s in pairs]
    for name, runs in (("converge", converge), ("search", search)):
        share = statistics.median(statistics.median(r.compiled) / r.entries for r in runs)
        ratio = "1 / 1" if name == "converge" else f"{statistics.median(ratios):.3f} / {max(ratios):.3f}"
        lines.append(f"| {name} | {sum(r.median_first_call() for r in runs):.1f} s | "
                     f"{sum(max(r.first_call_s) for r in runs):.1f} s | {ratio} | {100 * share:.0f}% | "
                     f"x{max(r.worst() for r in runs):.4f} | {sum(r.within(1.02) for r in runs)} / "
                     f"{sum(r.within(1.05) for r in runs)} of {seeds * len(runs)} |")
    return "\n".join(lines)


def each_row(c, s) -> str:
    return (f"{c.kernel} ({c.entries} configs): first call converge {c.median_first_call():.2f} s "
            f"(worst {max(c.first_call_s):.2f}), search {s.median_first_call():.2f} s (worst {max(s.first_call_s):.2f}, "
            f"{statistics.median(s.compiled):.0f} compiled); worst seed converge x{c.worst():.4f}, search x{s.worst():.4f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tables", nargs="+")
    parser.add_argument("--per-table", type=int, default=4)
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--smallest", type=int, default=24, help="fewest configs of a sub-space")
    parser.add_argument("--largest", type=int, default=64, help="most configs of a sub-space")
    parser.add_argument("--compile-threads", type=int, nargs="+", default=[16],
                        help="simulated compile pools to compare on, each of so many uncontended threads")
    parser.add_argument("--compile-min-s", type=float, default=0.0)
    parser.add_argument("--compile-max-s", type=float, default=0.0,
                        help="with --compile-min-s: each table's compile times mapped onto [min, max] s")
    parser.add_argument("--search-options", default="", help='the search\'s strategy options "NAME VALUE ..."')
    parser.add_argument("--each", action="store_true", help="one row per sub-space")
    parser.add_argument("--command", default="build/dev/tools/disttune")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    folder = tempfile.mkdtemp(prefix="small-spaces-")
    paths = []
    for path in args.tables:
        with open(path) as table_file:
            table = json.load(table_file)
        for sub in sub_spaces(table, args.per_table, rng, args.smallest, args.largest):
            paths.append(os.path.join(folder, sub["kernel"] + ".json"))
            with open(paths[-1], "w") as out:
                json.dump(sub, out)
    command = [args.command]
    clock = ["--compile-min-s", str(args.compile_min_s), "--compile-max-s", str(args.compile_max_s)]
    compiles = (f"compiles mapped onto {args.compile_min_s:g}-{args.compile_max_s:g} s"
                if args.compile_max_s > 0 else "the tables' recorded compile times")
    for threads in args.compile_threads:
        extra = ["--compile-threads", str(threads), *clock]
        converge = run_variant(command, paths, "converge", args.seeds, "", extra)
        search = run_variant(command, paths, "search", args.seeds, args.search_options, extra)
        print(f"\n## {threads} compile threads, {compiles}, sub-spaces of {args.smallest}-{args.largest} configs\n")
        if args.each:
            print("\n".join(each_row(c, s) for c, s in zip(converge, search)) + "\n")
        print(compared(converge, search, args.seeds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
