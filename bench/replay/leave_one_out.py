"""Leave-one-table-out over strategy variants: each replay table held out in turn, the variant chosen
on all the other tables (most seeds within 1.05x of the best, then the lowest worst seed, then the
shortest median first calls) and judged on the held-out one. Any number of tables, any variants.

    python3 bench/replay/leave_one_out.py tests/data/replay/*.json --seeds 50 \\
        --variant "" --variant "prepared_window 1.5 ahead_rounds 4" [--strategy search] \\
        [--command build/dev/tools/disttune] [--replay-arg=--compile-min-s --replay-arg=2 ...]

A variant is strategy options as "NAME VALUE ..." ("" is the defaults). Each variant is one
`disttune replay --each` over every table (the CPU, deterministic given the seed); the output is
two Markdown tables: the grid (each variant on each table) and the held-out choices.
"""

import argparse
import re
import shlex
import statistics
import subprocess
import sys
from dataclasses import dataclass, field

SEED_LINE = re.compile(r"^  seed (\d+): (?:x(\S+)|nothing chosen), measured \d+ \((\S+)%\), .*"
                       r"first call (\S+) s \(waits on compiles \S+ s, (\d+) compiled\)$")
SUMMARY_LINE = re.compile(r"^(.*) \((\d+) entries\) \S+ over \d+ seeds: ")
NOTHING_CHOSEN = float("inf")


@dataclass
class TableRuns:
    """One variant's seeds on one table."""

    kernel: str
    entries: int
    ratios: list = field(default_factory=list)
    measured_pct: list = field(default_factory=list)
    compiled: list = field(default_factory=list)
    first_call_s: list = field(default_factory=list)

    def within(self, bound: float) -> int:
        return sum(1 for ratio in self.ratios if ratio <= bound)

    def worst(self) -> float:
        return max(self.ratios)

    def median(self) -> float:
        return statistics.median(self.ratios)

    def median_first_call(self) -> float:
        return statistics.median(self.first_call_s)

    def most_compiled_pct(self) -> float:
        return 100.0 * max(self.compiled) / self.entries


def parse_replay(text: str) -> list:
    """The TableRuns of `disttune replay --each` output, one per table and strategy, in order."""
    runs, pending = [], TableRuns("", 0)
    for line in text.splitlines():
        seed = SEED_LINE.match(line)
        if seed:
            pending.ratios.append(float(seed.group(2)) if seed.group(2) else NOTHING_CHOSEN)
            pending.measured_pct.append(float(seed.group(3)))
            pending.first_call_s.append(float(seed.group(4)))
            pending.compiled.append(int(seed.group(5)))
            continue
        summary = SUMMARY_LINE.match(line)
        if summary:
            pending.kernel, pending.entries = summary.group(1), int(summary.group(2))
            if not pending.ratios:
                raise ValueError(f"no seed lines before the summary of {pending.kernel}")
            runs.append(pending)
            pending = TableRuns("", 0)
    return runs


def choice_key(per_table: list) -> tuple:
    """Smaller is better: most seeds within 1.05x, then the lowest worst seed, then the shortest first calls."""
    return (-sum(runs.within(1.05) for runs in per_table), max(runs.worst() for runs in per_table),
            sum(runs.median_first_call() for runs in per_table))


def held_out_choices(grid: dict) -> list:
    """For each table index: (the variant chosen on every other table, its runs on the held-out one).
    `grid` maps each variant (in the order given; the first wins a tie) to its TableRuns per table."""
    variants = list(grid)
    tables = len(grid[variants[0]])
    choices = []
    for held in range(tables):
        others = [t for t in range(tables) if t != held] or [held]  # one table: nothing else to choose on
        chosen = min(variants, key=lambda v: choice_key([grid[v][t] for t in others]))
        choices.append((chosen, grid[chosen][held]))
    return choices


def label(variant: str) -> str:
    words = shlex.split(variant)
    return ", ".join(f"{name} {value}" for name, value in zip(words[::2], words[1::2])) or "defaults"


def run_variant(command: list, tables: list, strategy: str, seeds: int, variant: str, extra: list) -> list:
    words = shlex.split(variant)
    if len(words) % 2:
        raise SystemExit(f"--variant {variant!r}: options come as NAME VALUE pairs")
    options = [arg for name, value in zip(words[::2], words[1::2]) for arg in ("--option", name, value)]
    done = subprocess.run([*command, "replay", *tables, "--strategy", strategy, "--seeds", str(seeds), "--each",
                           *options, *extra], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"disttune replay ({label(variant)}) failed: {done.stderr.strip()}")
    runs = parse_replay(done.stdout)
    if len(runs) != len(tables):
        raise SystemExit(f"disttune replay ({label(variant)}) reported {len(runs)} tables of {len(tables)}")
    return runs


def report(grid: dict, seeds: int) -> str:
    variants = list(grid)
    kernels = [runs.kernel for runs in grid[variants[0]]]
    lines = ["| variant | " + " | ".join(kernels) + " |", "|---" * (len(kernels) + 1) + "|"]
    for variant in variants:
        cells = [f"{r.worst():.3f} / {r.within(1.05)} / {r.median_first_call():.1f} s" for r in grid[variant]]
        lines.append(f"| {label(variant)} | " + " | ".join(cells) + " |")
    lines += ["", f"Cells: worst seed / seeds within 1.05x of {seeds} / median first call.", "",
              "| held out | chosen on the others | median / worst | within 1.02x / 1.05x | measured (most) "
              "| compiled (most) | first call (median) |", "|---|---|---|---|---|---|---|"]
    choices = held_out_choices(grid)
    for (variant, runs) in choices:
        lines.append(f"| {runs.kernel} | {label(variant)} | {runs.median():.4f} / {runs.worst():.3f} | "
                     f"{runs.within(1.02)} / {runs.within(1.05)} of {seeds} | {max(runs.measured_pct):.2f}% | "
                     f"{runs.most_compiled_pct():.2f}% | {runs.median_first_call():.1f} s |")
    held = [runs for _, runs in choices]
    lines += ["", f"Held out, over {len(held)} tables: median at most x{max(r.median() for r in held):.4f}, "
              f"worst seed x{max(r.worst() for r in held):.3f}, measured at most "
              f"{max(max(r.measured_pct) for r in held):.2f}%, compiled at most "
              f"{max(r.most_compiled_pct() for r in held):.2f}% of the space."]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tables", nargs="+")
    parser.add_argument("--variant", action="append", help='strategy options "NAME VALUE ..."; "" the defaults')
    parser.add_argument("--strategy", default="search")
    parser.add_argument("--seeds", type=int, default=50)
    parser.add_argument("--command", default=f"{shlex.quote(sys.executable)} -m disttune",
                        help="the disttune command line (default: this Python's disttune package)")
    parser.add_argument("--replay-arg", action="append", default=[], help="passed on to disttune replay")
    options = parser.parse_args()
    command = shlex.split(options.command)
    grid = {variant: run_variant(command, options.tables, options.strategy, options.seeds, variant,
                                 options.replay_arg)
            for variant in dict.fromkeys(options.variant or [""])}
    print(report(grid, options.seeds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
