"""Replays a first call's compiles in other orders: does submitting the predicted-slowest configs
first, or compiling configs that reach the same TTGIR once, shorten each tuning's wait for its
compiles? Reads a drop-in timeline (real_libs.py's JSON: every compile's start and end by config
index) and compile_stages.py's rows (each config's CPU seconds per stage, its num_warps and the
digest of its TTGIR), and simulates each tuning's compiles on a pool of threads.

    python3 bench/replay/compile_order.py --timeline real_libs.json --stages stages.json
        [--threads 16] [--capacity 8] [--submit-s 0.045]

Two models of a compile's length. `observed`: each config takes what it took in the timeline
(its length under the contention it met there). `shared`: each config's CPU seconds from the
stages file, scaled so that the configs' order reproduces the timeline's total, run on
`capacity` cores' worth of CPU shared by the running compiles (k compiles each go at
min(1, capacity / k)). Orders: `index` (the configs' order, as the drop-in queued them before),
`oracle` (longest first, knowing every length), `warps` (fewest warps first, then the larger
tile times stages: what a config tells before it compiles), `learned` (by the mean length per
num_warps of the compiles of earlier tunings in the process; `warps` for the first), `gated`
(`index` with every config queued before any starts). With the memo, a config whose TTGIR an
earlier config of the tuning reached skips LLIR, PTX and ptxas (and waits for that one's):
`memo_in_place` (in `index` order), `memo` (`index`, num_stages variants after the first of
each), `memo_warps` (`warps`, variants last), `memo_gated`, and `shipped` (`memo_warps`, and a
num_stages variant skips the codegen too). `--submit-s` is the caller thread's time to queue one
config (it queues them one by one while the first compiles run; the timeline's first waves show
about 45 ms). `--compiled 48=33,36=31`: a `shared.compiled` column, the median over 50 random
subsets of that many of a tuning's configs (tunings of the sizes named; the others whole), in the
configs' order: the compile span of a strategy that compiles only so many, in one wave, as a
floor (its rounds' waits not counted).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
from collections import defaultdict
from typing import Optional

FRONT_END = ("ast", "ttir", "ttgir")  # what a config whose TTGIR was reached before still runs


def config_features(row: dict) -> tuple[int, int]:
    """(num_warps, tile times num_stages) of a stages row, the tile the product of the config's
    integer meta-parameters: what orders a config before it compiles (as the drop-in's
    submission_order does)."""
    tile = 1
    for name, value in re.findall(r"(\w+): (\w+)", row["config_text"]):
        if name not in ("num_warps", "num_ctas", "num_stages", "maxnreg") and value.isdigit() and int(value) > 0:
            tile *= int(value)
    return row["num_warps"], tile * row["num_stages"]


def by_warps(rows: list[dict]) -> list[int]:
    return sorted(range(len(rows)), key=lambda i: (config_features(rows[i])[0], -config_features(rows[i])[1], i))


def memo_order(rows: list[dict], order: list[int]) -> list[int]:
    """`order`, then each config whose config but num_stages was queued already goes last (as
    disttune._triton_stages.stage_variants_last queues them)."""
    first, later, seen = [], [], set()
    for index in order:
        group = (re.sub(r"num_stages: \w+", "", rows[index]["config_text"]), rows[index]["num_warps"])
        (later if group in seen else first).append(index)
        seen.add(group)
    return first + later


def simulate(work: list[float], order: list[int], threads: int, capacity: Optional[float],
             submit_s: float, waits_for: Optional[dict[int, int]] = None) -> float:
    """Seconds from the first submit to the last compile's end: configs queued in `order`, one
    every `submit_s`, taken by the first free of `threads`; each runs its `work` at
    min(1, capacity / running) (capacity None: always 1). A config in `waits_for` runs its work,
    then holds its thread until the config it names has ended."""
    waits_for = waits_for or {}
    queue = [(n * submit_s, index) for n, index in enumerate(order)]
    running: dict[int, float] = {}  # index -> work left
    waiting: set[int] = set()
    ended: dict[int, float] = {}
    now = 0.0
    while queue or running or waiting:
        for index in [i for i in waiting if waits_for[i] in ended]:
            waiting.discard(index)
            ended[index] = now
        while queue and queue[0][0] <= now and len(running) + len(waiting) < threads:
            _, index = queue.pop(0)
            running[index] = work[index]
        rate = 1.0 if capacity is None or not running else min(1.0, capacity / len(running))
        next_end = min((left / rate for left in running.values()), default=float("inf"))
        next_queue = queue[0][0] - now if queue and len(running) + len(waiting) < threads else float("inf")
        step = min(next_end, max(next_queue, 0.0))
        if step == float("inf"):
            if waiting and not running:  # waits on a config that never runs: cannot happen in order
                raise RuntimeError("a config waits on one that is not queued")
            step = 0.0
        now += step
        for index in list(running):
            running[index] -= step * rate
            if running[index] <= 1e-12:
                del running[index]
                if index in waits_for and waits_for[index] not in ended:
                    waiting.add(index)
                else:
                    ended[index] = now
        if not running and not waiting and queue and queue[0][0] > now:
            now = queue[0][0]
    return max(ended.values(), default=0.0)


def subsets_span(work: list[float], count: int, threads: int, capacity: Optional[float], submit_s: float,
                 draws: int = 50) -> float:
    """The median compile span of `draws` random subsets of `count` of the configs (each in the
    configs' order; seeded by the tuning's size, so a report is the same every time)."""
    draw = random.Random(len(work))
    return statistics.median(simulate(work, sorted(draw.sample(range(len(work)), count)), threads, capacity, submit_s)
                             for _ in range(draws))


def tunings(timeline_path: str) -> list[dict]:
    with open(timeline_path) as source:
        report = json.load(source)
    op = report["ops"][0]
    return [t for t in op["runs"]["dropin"]["timelines"] if t.get("compiles")]


def stage_rows(stages_path: str) -> dict[str, dict[int, dict]]:
    """The stages rows of each kernel's first key, by config index (later keys of a kernel follow
    its rows in the file)."""
    with open(stages_path) as source:
        rows = json.load(source)
    kernels: dict[str, dict[int, dict]] = defaultdict(dict)
    for row in rows:
        kernels[row["kernel"]].setdefault(row["config"], row)
    return dict(kernels)


def waits_in(rows: list[dict], order: list[int]) -> dict[int, int]:
    """Each config whose TTGIR a config before it in `order` reaches too, and that config."""
    first_of: dict[str, int] = {}
    for n in order:
        first_of.setdefault(rows[n]["digest"]["ttgir"], n)
    return {n: first_of[r["digest"]["ttgir"]] for n, r in enumerate(rows) if first_of[r["digest"]["ttgir"]] != n}


class Tuning:
    """One tuning of the timeline: its configs' stages rows, observed lengths and orders."""

    def __init__(self, entry: dict, rows_of: dict[str, dict[int, dict]], learned: dict[int, list[float]]) -> None:
        compiles = sorted(entry["compiles"], key=lambda c: c["config"])
        self.kernel = entry["kernel"]
        by_index = rows_of.get(self.kernel, {})
        unmatched = [c["config"] for c in compiles if c["config"] not in by_index]
        counts = {row["configs"] for row in by_index.values()}
        if unmatched or counts != {entry["configs"]}:
            raise ValueError(f"{self.kernel}: a tuning of {entry['configs']} configs, the stages file's rows are of "
                             f"{sorted(counts)} configs and lack configs {unmatched}: the timeline and the stages "
                             "must come from the same op, shapes and library version")
        self.rows = [by_index[c["config"]] for c in compiles]
        self.observed = [c["end_s"] - c["start_s"] for c in compiles]
        self.span = max(c["end_s"] for c in compiles) - min(c["start_s"] for c in compiles)
        self.cpu = [sum(r["seconds"].values()) for r in self.rows]
        self.front = [sum(r["seconds"][s] for s in FRONT_END) for r in self.rows]
        every = list(range(len(self.rows)))
        mean_of = {warps: statistics.mean(lengths) for warps, lengths in learned.items()}
        self.orders = {"index": every, "oracle": sorted(every, key=lambda n: -self.observed[n]),
                       "warps": by_warps(self.rows)}
        self.orders["learned"] = (sorted(every, key=lambda n: -mean_of[self.rows[n]["num_warps"]])
                                  if all(r["num_warps"] in mean_of for r in self.rows) else self.orders["warps"])

    def observed_model(self, args: argparse.Namespace) -> dict:
        result = {f"observed.{name}": simulate(self.observed, order, args.threads, None, args.submit_s)
                  for name, order in self.orders.items()}
        result["observed.gated"] = simulate(self.observed, self.orders["index"], args.threads, None, 0.0)
        return result

    def shared_model(self, args: argparse.Namespace, scale: float) -> dict:
        work = [c * scale for c in self.cpu]
        run = lambda lengths, order, submit_s=args.submit_s, waits=None: simulate(  # noqa: E731
            lengths, order, args.threads, args.capacity, submit_s, waits)
        result = {f"shared.{name}": run(work, order) for name, order in self.orders.items() if name != "oracle"}
        result["shared.oracle"] = run(work, sorted(range(len(work)), key=lambda n: -work[n]))
        result["shared.gated"] = run(work, self.orders["index"], 0.0)
        for name, base, variants_last, submit_s in (
                ("memo_in_place", "index", False, args.submit_s), ("memo", "index", True, args.submit_s),
                ("memo_warps", "warps", True, args.submit_s), ("memo_gated", "index", True, 0.0)):
            order = memo_order(self.rows, self.orders[base]) if variants_last else self.orders[base]
            waits = waits_in(self.rows, order)
            lengths = [f * scale if n in waits else w for n, (f, w) in enumerate(zip(self.front, work))]
            result[f"shared.{name}"] = run(lengths, order, submit_s, waits)
        # As shipped: the codegen too once per TTIR and num_warps (num_stages variants share it).
        order = memo_order(self.rows, self.orders["warps"])
        waits = waits_in(self.rows, order)
        seen_ttir: set = set()
        lengths = []
        for n in range(len(work)):
            lengths.append(self.front[n] * scale if n in waits else work[n])
        for n in order:
            row = self.rows[n]
            if (row["digest"]["ttir"], row["num_warps"]) in seen_ttir:
                lengths[n] -= row["seconds"]["ast"] * scale
            seen_ttir.add((row["digest"]["ttir"], row["num_warps"]))
        result["shared.shipped"] = run(lengths, order, args.submit_s, waits)
        if args.compiled:
            count = args.compiled.get(len(work), len(work))
            result["shared.compiled"] = subsets_span(work, count, args.threads, args.capacity, args.submit_s)
        return result


def fitted_scale(tunings_: list[Tuning], args: argparse.Namespace) -> float:
    """CPU seconds of the stages file to seconds of the timeline's host: the one factor with which
    the index order of the shared model gives the timeline's total of compile spans."""
    target = sum(t.span for t in tunings_)
    low, high = 0.01, 100.0
    for _ in range(60):
        middle = (low * high) ** 0.5
        total = sum(simulate([c * middle for c in t.cpu], t.orders["index"], args.threads, args.capacity,
                             args.submit_s) for t in tunings_)
        low, high = (middle, high) if total < target else (low, middle)
    return (low * high) ** 0.5


def replay(args: argparse.Namespace) -> dict:
    rows_of = stage_rows(args.stages)
    learned: dict[int, list[float]] = defaultdict(list)  # observed lengths by num_warps, tunings so far
    tunings_ = []
    for entry in tunings(args.timeline):
        tuning = Tuning(entry, rows_of, learned)
        tunings_.append(tuning)
        for row, length in zip(tuning.rows, tuning.observed):
            learned[row["num_warps"]].append(length)
    scale = fitted_scale(tunings_, args)
    results = [{"kernel": t.kernel, "configs": len(t.rows), "ttgir": len({r["digest"]["ttgir"] for r in t.rows}),
                "timeline_s": t.span, **t.observed_model(args), **t.shared_model(args, scale)} for t in tunings_]
    return {"scale": scale, "threads": args.threads, "capacity": args.capacity, "submit_s": args.submit_s,
            "tunings": results}


def table(report: dict) -> str:
    columns = [k for k in report["tunings"][0] if "." in k]
    lines = ["| kernel | configs | TTGIR | timeline | " + " | ".join(columns) + " |",
             "|---" * (len(columns) + 4) + "|"]
    for r in report["tunings"]:
        lines.append(f"| {r['kernel']} | {r['configs']} | {r['ttgir']} | {r['timeline_s']:.2f} | "
                     + " | ".join(f"{r[c]:.2f}" for c in columns) + " |")
    lines.append(f"| all | | | {sum(r['timeline_s'] for r in report['tunings']):.2f} | "
                 + " | ".join(f"{sum(r[c] for r in report['tunings']):.2f}" for c in columns) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeline", required=True, help="real_libs.py's JSON (its first op's drop-in run)")
    parser.add_argument("--stages", required=True, help="compile_stages.py --out's JSON for the same op")
    parser.add_argument("--threads", type=int, default=16)
    parser.add_argument("--capacity", type=float, default=8.0, help="cores' worth of CPU the compiles share")
    parser.add_argument("--submit-s", type=float, default=0.045, help="seconds to queue one config")
    parser.add_argument("--compiled", default="", help="SIZE=COUNT,...: tunings of SIZE configs compile COUNT")
    args = parser.parse_args()
    args.compiled = {int(size): int(count) for size, count in
                     (pair.split("=") for pair in args.compiled.split(",") if pair)}
    report = replay(args)
    print(json.dumps({k: v for k, v in report.items() if k != "tunings"}))
    print(table(report))


if __name__ == "__main__":
    main()
