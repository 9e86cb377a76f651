"""Small spaces cut from the recorded tables: which strategy suits a space of 24-64 configs (the
size of most real libraries' autotune lists), judged by replay. Each sub-space fixes a few
knobs of a recorded table at random values until 24-64 configs remain; converge and search
are replayed on each, and their median simulated first calls and worst seeds compared.

    python3 bench/replay/small_spaces.py tests/data/replay/*.json [--per-table 4] [--seeds 20] [--seed 0]
        [--command build/dev/tools/disttune]

Prints one line per sub-space and strategy, then the counts.
"""

import argparse
import collections
import json
import os
import random
import sys
import tempfile

from leave_one_out import run_variant  # one replay run over the tables, parsed

SMALLEST, LARGEST = 24, 64


def knobs(entry: dict) -> dict:
    config = entry["config"]["cfg"]["$triton.Config"]
    return {**config["kwargs"], "num_warps": config["num_warps"], "num_stages": config["num_stages"]}


def sub_spaces(table: dict, count: int, rng: random.Random) -> list:
    """Up to `count` sub-tables of `table`, each the entries left after fixing knobs at random
    values, with SMALLEST..LARGEST entries of which at least half ran."""
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
            if len(left) <= LARGEST:
                break
            value = rng.choice(sorted(values[name]))
            kept = [i for i in left if json.dumps(settings[i][name]) == value]
            if len(kept) >= SMALLEST:
                left = kept
        ran = sum(1 for i in left if entries[i]["status"] == "ok")
        if SMALLEST <= len(left) <= LARGEST and 2 * ran >= len(left):
            made.append(dict(table, kernel=f"{table['kernel']}_sub{len(made)}", entries=[entries[i] for i in left]))
    return made


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tables", nargs="+")
    parser.add_argument("--per-table", type=int, default=4)
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--command", default="build/dev/tools/disttune")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    folder = tempfile.mkdtemp(prefix="small-spaces-")
    paths = []
    for path in args.tables:
        with open(path) as table_file:
            table = json.load(table_file)
        for sub in sub_spaces(table, args.per_table, rng):
            paths.append(os.path.join(folder, sub["kernel"] + ".json"))
            with open(paths[-1], "w") as out:
                json.dump(sub, out)
    command = [args.command]
    converge = run_variant(command, paths, "converge", args.seeds, "", [])
    search = run_variant(command, paths, "search", args.seeds, "", [])
    for strategy, ran in (("converge", converge), ("search", search)):
        for runs in ran:
            print(f"{runs.kernel} ({runs.entries} configs) {strategy}: median "
                  f"x{runs.median():.4f}, worst x{runs.worst():.4f}, first call median {runs.median_first_call():.2f} s")
    pairs = list(zip(converge, search))
    longer = sum(1 for c, s in pairs if s.median_first_call() > c.median_first_call())
    shorter = sum(1 for c, s in pairs if s.median_first_call() < c.median_first_call())
    worse = sum(1 for c, s in pairs if s.worst() > c.worst())
    better = sum(1 for c, s in pairs if s.worst() < c.worst())
    print(f"{len(pairs)} sub-spaces of {SMALLEST}-{LARGEST} configs, {args.seeds} seeds each: search's median "
          f"first call longer than converge's on {longer}, shorter on {shorter}; its worst seed worse on {worse}, "
          f"better on {better}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
