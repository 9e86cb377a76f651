"""bench/replay/leave_one_out.py: each table judged with the variant chosen on all the others, for any
number of tables, from what `python -m disttune replay --each` prints."""

import os
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "bench", "replay"))
from leave_one_out import TableRuns, held_out_choices, parse_replay  # noqa: E402

TABLES = [os.path.join(ROOT, "tests", "data", "replay", name)
          for name in ("layer_norm_fp16_32768x4096.json", "split_k_fp16_128x8192x8192.json")]


def runs(kernel: str, ratios: list, first_call_s: float = 1.0) -> TableRuns:
    return TableRuns(kernel, 100, list(ratios), [5.0] * len(ratios), [7] * len(ratios), [first_call_s] * len(ratios))


def test_each_table_is_judged_with_the_variant_chosen_on_the_others():
    # Variant "wide" wins tables a and b (more seeds within 1.05x), "narrow" wins c and d.
    good, bad = [1.0, 1.01, 1.02], [1.0, 1.2, 1.3]
    grid = {"narrow": [runs("a", bad), runs("b", bad), runs("c", good), runs("d", good)],
            "wide": [runs("a", good), runs("b", good), runs("c", bad), runs("d", bad)]}
    # Held out a, on b, c and d: narrow has 7 seeds within 1.05x, wide 5.
    chosen = [variant for variant, _ in held_out_choices(grid)]
    assert chosen == ["narrow", "narrow", "wide", "wide"]
    assert [judged.kernel for _, judged in held_out_choices(grid)] == ["a", "b", "c", "d"]
    assert held_out_choices(grid)[0][1].worst() == 1.3  # narrow on a, the table it did not see


def test_ties_go_to_the_lower_worst_seed_then_the_shorter_first_call_then_the_first_variant():
    grid = {"first": [runs("a", [1.0, 1.04]), runs("b", [1.0, 1.04], 9.0)],
            "lower_worst": [runs("a", [1.0, 1.03]), runs("b", [1.0, 1.03], 9.0)],
            "shorter": [runs("a", [1.0, 1.03]), runs("b", [1.0, 1.03], 2.0)]}
    assert [variant for variant, _ in held_out_choices(grid)] == ["shorter", "lower_worst"]
    same = {"first": grid["first"], "again": [runs("a", [1.0, 1.04]), runs("b", [1.0, 1.04], 9.0)]}
    assert [variant for variant, _ in held_out_choices(same)] == ["first", "first"]


def test_one_table_is_judged_on_itself():
    grid = {"only": [runs("a", [1.0, 1.1])]}
    assert held_out_choices(grid)[0][0] == "only"


def test_the_replay_lines_parse_per_table_and_seed():
    done = subprocess.run([sys.executable, "-m", "disttune", "replay", *TABLES, "--strategy", "search", "--seeds",
                           "3", "--each"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    parsed = parse_replay(done.stdout)
    assert [table.kernel for table in parsed] == ["layer_norm_fp16_32768x4096", "split_k_fp16_128x8192x8192"]
    assert [table.entries for table in parsed] == [1440, 1152]
    for table in parsed:
        assert len(table.ratios) == len(table.first_call_s) == len(table.compiled) == 3
        assert all(ratio >= 1.0 for ratio in table.ratios)
        assert all(0 < pct <= 100 for pct in table.measured_pct)
        assert all(count > 0 for count in table.compiled)


def test_the_script_reports_one_held_out_row_per_table(tmp_path):
    done = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "replay", "leave_one_out.py"), *TABLES,
                           "--seeds", "2", "--variant", "", "--variant", "ahead_rounds 0"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith(("| layer_norm", "| split_k"))]
    assert len(rows) == 2
    assert all(row.split(" | ")[1] in ("defaults", "ahead_rounds 0") for row in rows)
    assert "| ahead_rounds 0 |" in done.stdout  # the grid's row of the second variant
    assert "Held out, over 2 tables" in done.stdout
