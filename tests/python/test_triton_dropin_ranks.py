"""Drop-in kernels under a torch process group (gloo, on the CPU): every rank takes the config
of the lowest MAX-over-ranks time, and a rank that never launches cannot hang the others."""

import os
import time

import pytest
import torch
import triton

import disttune.triton as dropin
from dropin_kernels import CostBench, add_kernel, grid_of
from spawn_ranks import run_ranks

# The ranks hold CPU tensors, which Triton runs only in its interpreter (set where there is no
# GPU); on a GPU host the multi-GPU step tests ranks (scripts/gpu_check.sh ignores this file).
pytestmark = pytest.mark.skipif(torch.cuda.is_available(), reason="a CPU test: gloo ranks in Triton's interpreter")

N = 200
# Per rank, the time of each BLOCK: each rank alone would pick another config; the MAX over
# both ranks is lowest for 128 (6, 5, 3).
COSTS = [{32: 1.0, 64: 5.0, 128: 3.0}, {32: 6.0, 64: 2.0, 128: 3.0}]


def _tensors():
    x = torch.arange(N, dtype=torch.float32)
    return x, torch.ones(N), torch.zeros(2, dtype=torch.int32)


def _agree(rank, world):
    x, y, seen = _tensors()
    bench = CostBench(seen, COSTS[rank].__getitem__)
    kernel = dropin.autotune(configs=[triton.Config({"BLOCK": b}) for b in (32, 64, 128)], key=["n"],
                             do_bench=bench, restore_value=["y_ptr"])(add_kernel)
    kernel[grid_of(N)](x, y, seen, N)
    measured = dropin.autotune(configs=[triton.Config({"BLOCK": b}) for b in (32, 64)], key=["n"],
                               reset_to_zero=["y_ptr"])(add_kernel)
    measured[grid_of(N)](x, y, seen, N)
    return {
        "costed": kernel.best_config.kwargs["BLOCK"],
        "benchmarked": sorted(bench.blocks),
        "correct": bool(torch.equal(y, x)),
        "measured": measured.best_config.kwargs["BLOCK"],
        "agreed_ms": [r.agreed_ms for r in kernel.last_report.candidates],
    }


def test_two_gloo_ranks_agree_on_the_max_over_ranks(tmp_path):
    outcomes = run_ranks(_agree, 2, "gloo", env={"TRITON_DIST_AUTOTUNE_CACHE_DIR": tmp_path / "cache"})
    assert sorted(outcomes) == [0, 1], outcomes
    for rank, outcome in outcomes.items():
        assert "error" not in outcome, outcome.get("traceback")
        assert outcome["costed"] == 128
        assert outcome["benchmarked"] == [32, 64, 128]
        assert outcome["agreed_ms"] == [6.0, 5.0, 3.0]
        assert outcome["correct"]
    assert outcomes[0]["measured"] == outcomes[1]["measured"]


def _one_rank_launches(rank, world, done):
    if rank == 1:
        # Alive, in the group, but never launching, until rank 0 is done: not for a fixed
        # time, which a loaded machine could take rank 0 to reach its deadline.
        while not os.path.exists(done):
            time.sleep(0.05)
        return {"launched": False}
    x, y, seen = _tensors()
    kernel = dropin.autotune(configs=[triton.Config({"BLOCK": b}) for b in (32, 64)], key=["n"],
                             do_bench=CostBench(seen, float))(add_kernel)
    try:
        kernel[grid_of(N)](x, y, seen, N)
        outcome = {"launched": True, "error_type": None}
    except Exception as error:
        outcome = {"launched": True, "error_type": type(error).__name__, "message": str(error)}
    finally:
        open(done, "w").close()
    return outcome


def test_a_rank_that_does_not_launch_ends_in_a_timeout_not_a_hang(tmp_path):
    outcomes = run_ranks(_one_rank_launches, 2, "gloo", str(tmp_path / "rank0-done"), timeout_s=120.0,
                         env={"TRITON_DIST_AUTOTUNE_CACHE_DIR": tmp_path / "cache", "TRITON_DIST_AUTOTUNE_TIMEOUT": "2"})
    assert outcomes[1] == {"launched": False}
    assert outcomes[0]["error_type"] == "CollectiveTimeout", outcomes[0]
