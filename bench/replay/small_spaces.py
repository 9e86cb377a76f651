"""Small spaces cut from the recorded tables: which strategy suits a space of 24-64 configs (the
size of most real libraries' autotune lists), judged by replay. Each sub-space fixes a few
knobs of a recorded table at random values until 24-64 configs remain; converge and search
are replayed on each, and their median simulated first calls and worst seeds compared.

    python3 bench/replay/small_spaces.py tests/data/replay/*.json [--per-table 4] [--seeds 20] [--seed 0]
        [--command build/dev/tools/disttune]

Prints one line per sub-space and strategy (the replay's summary), then the counts.
"""

import argparse
import collections
import json
import os
import random
import re
import subprocess
import sys
import tempfile

SMALLEST, LARGEST = 24, 64
SUMMARY = re.compile(r"^(\S+) \((\d+) entries\) (\S+) over \d+ seeds: median x(\S+), worst x(\S+),.*"
                     r"first call median (\S+) s")


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
    results = collections.defaultdict(dict)  # sub-space -> strategy -> (median, worst, first call)
    for path in paths:
        done = subprocess.run([args.command, "replay", path, "--strategy", "converge", "--strategy", "search",
                               "--seeds", str(args.seeds)], capture_output=True, text=True, check=True)
        for line in done.stdout.splitlines():
            matched = SUMMARY.match(line)
            if matched:
                kernel, size, strategy, median, worst, first = matched.groups()
                results[(kernel, int(size))][strategy] = (float(median), float(worst), float(first))
                print(line.split(", median device")[0] + f"; first call median {first} s")
    longer = sum(1 for r in results.values() if r["search"][2] > r["converge"][2])
    shorter = sum(1 for r in results.values() if r["search"][2] < r["converge"][2])
    worse = sum(1 for r in results.values() if r["search"][1] > r["converge"][1])
    better = sum(1 for r in results.values() if r["search"][1] < r["converge"][1])
    print(f"{len(results)} sub-spaces of {SMALLEST}-{LARGEST} configs, {args.seeds} seeds each: search's median "
          f"first call longer than converge's on {longer}, shorter on {shorter}; its worst seed worse on {worse}, "
          f"better on {better}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
