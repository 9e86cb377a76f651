"""bench/replay/compile_order.py: a tuning's compiles simulated on a pool of threads (queued one
by one, each at its share of the cores, a config that reached another's TTGIR waiting for it),
and the orders it compares."""

import json
import os
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "bench", "replay"))
from compile_order import Tuning, by_warps, memo_order, simulate, stage_rows, subsets_span, waits_in  # noqa: E402


def row(text: str, warps: int, stages: int, ttgir: str) -> dict:
    return {"config_text": f"{text}, num_warps: {warps}, num_ctas: 1, num_stages: {stages}, maxnreg: None",
            "num_warps": warps, "num_stages": stages, "digest": {"ttgir": ttgir}}


def test_longest_first_shortens_the_wait_for_the_last_compile():
    # Two threads, lengths 1, 1, 2: in this order the 2 starts last and ends at 3; first, at 2.
    assert simulate([1.0, 1.0, 2.0], [0, 1, 2], threads=2, capacity=None, submit_s=0.0) == 3.0
    assert simulate([1.0, 1.0, 2.0], [2, 0, 1], threads=2, capacity=None, submit_s=0.0) == 2.0


def test_compiles_share_the_cores_and_are_queued_one_by_one():
    # One core's worth for two compiles of 1 s: both go at half speed and end at 2 s.
    assert simulate([1.0, 1.0], [0, 1], threads=2, capacity=1.0, submit_s=0.0) == 2.0
    # Queued 0.5 s apart on cores enough for both: the second ends at 1.5 s.
    assert simulate([1.0, 1.0], [0, 1], threads=2, capacity=None, submit_s=0.5) == 1.5


def test_a_config_that_reached_anothers_ttgir_holds_its_thread_until_that_one_ends():
    # Config 1 runs its own 0.5 s, then waits for config 0 (3 s): the pool's third compile
    # (1 s) starts on the thread config 1 frees at 3 s.
    assert simulate([3.0, 0.5, 1.0], [0, 1, 2], threads=2, capacity=None, submit_s=0.0,
                    waits_for={1: 0}) == 4.0


def test_orders_by_config_features_and_num_stages_variants():
    rows = [row("BK: 32", 8, 2, "a"), row("BK: 32", 8, 3, "a"), row("BK: 64", 2, 2, "b"), row("BK: 64", 2, 3, "c")]
    assert by_warps(rows) == [3, 2, 1, 0]  # fewest warps, then the larger tile times stages
    order = memo_order(rows, by_warps(rows))
    assert order == [3, 1, 2, 0]  # the num_stages variants of a config queued before go last
    assert waits_in(rows, order) == {0: 1}  # only configs of the same TTGIR wait


def test_compiling_fewer_configs_shortens_a_full_pools_span():
    # Four 1 s compiles on one core's worth: 4 s; any two of them: 2 s.
    assert simulate([1.0] * 4, [0, 1, 2, 3], threads=4, capacity=1.0, submit_s=0.0) == 4.0
    assert subsets_span([1.0] * 4, 2, threads=4, capacity=1.0, submit_s=0.0) == 2.0
    # With a thread per compile, dropping configs leaves the span to the longest one kept.
    assert subsets_span([1.0, 3.0, 1.0, 1.0], 4, threads=4, capacity=None, submit_s=0.0) == 3.0


def test_a_tuning_takes_each_configs_stages_row_by_its_index_or_says_the_files_do_not_match(tmp_path):
    seconds = {stage: 0.1 for stage in ("ast", "ttir", "ttgir", "llir", "ptx", "cubin")}
    rows = {0: dict(row("BK: 32", 8, 2, "a"), kernel="k", config=0, configs=3, seconds=seconds),
            2: dict(row("BK: 64", 2, 2, "b"), kernel="k", config=2, configs=3, seconds=seconds)}
    entry = {"kernel": "k", "configs": 3,
             "compiles": [{"config": 2, "start_s": 0.0, "end_s": 2.0}, {"config": 0, "start_s": 0.0, "end_s": 1.0}]}
    stages = tmp_path / "stages.json"
    stages.write_text(json.dumps([rows[0], rows[2], dict(rows[0], num_warps=4)]))  # a later key's row 0 last
    assert stage_rows(str(stages)) == {"k": rows}
    assert Tuning(entry, {"k": rows}, {}).rows == [rows[0], rows[2]]  # not shifted by config 1's gap
    for unmatched in ({**entry, "configs": 4}, {**entry, "compiles": entry["compiles"] + [{"config": 1}]},
                      {**entry, "kernel": "other"}):
        try:
            Tuning(unmatched, {"k": rows}, {})
            raise AssertionError(f"no error for {unmatched}")
        except ValueError as error:
            assert "same op" in str(error)
