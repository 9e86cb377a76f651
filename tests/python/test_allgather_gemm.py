"""The all-gather + GEMM operator (examples/python/allgather_gemm) on two gloo ranks of CPU
tensors, its Triton GEMM in Triton's interpreter: every tile x chunks x layout gives torch's
all_gather + matmul, and both tuning methods agree on one config across the ranks. The GPU
runs (NCCL, real overlap) are in test_multi_gpu.py."""

import os
import sys

import pytest
import torch
import torch.distributed as dist
import triton

from spawn_ranks import run_ranks

EXAMPLE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                       "examples", "python", "allgather_gemm")
sys.path.insert(0, EXAMPLE)

SHARD_ROWS, K, N = 16, 32, 16
SMALL_TILES = [
    triton.Config({"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16, "GROUP_M": 2}, num_warps=1),
    triton.Config({"BLOCK_M": 32, "BLOCK_N": 16, "BLOCK_K": 32, "GROUP_M": 1}, num_warps=1),
]


def _operator_on_two_ranks(rank, world, cache):
    os.environ["TRITON_DIST_AUTOTUNE_CACHE_DIR"] = cache
    from allgather_gemm import AllGatherGemm, chunk_gemm_kernel, config_space, operands, reference
    from tune_function import key_fn, make_tuned

    group = dist.group.WORLD
    op = AllGatherGemm(group, SHARD_ROWS, K, N, dtype=torch.float32)
    a_shard, b = operands(group, SHARD_ROWS, K, N, dtype=torch.float32)
    expected = reference(group, a_shard, b)
    worst = 0.0
    for entry in config_space(SMALL_TILES):
        out = op.run(a_shard, b, entry["gemm"], entry["chunks"], entry["layout"], kernel=chunk_gemm_kernel)
        worst = max(worst, float((out - expected).abs().max()))
    tuned = make_tuned(config_space(SMALL_TILES), warmup_runs=1, timed_runs=2)
    out = tuned(op, a_shard, b, autotune_pg=group)
    entry = tuned.cache[key_fn(op, a_shard, b)]
    return {
        "worst_error": worst,
        "tuned_error": float((out - expected).abs().max()),
        "chosen": (entry["gemm"].kwargs, entry["chunks"], entry["layout"]),
        "candidates": len(tuned.last_report.candidates),
        "timer": tuned.last_report.timer,
        "refused": _refusal(op, a_shard, b),
    }


def _refusal(op, a_shard, b):
    try:
        op.run(a_shard, b, SMALL_TILES[0], 3, "one-stream")
    except ValueError as error:
        return str(error)
    return None


@pytest.mark.skipif(not dist.is_available(), reason="torch.distributed is not built in this torch")
def test_every_config_matches_torch_and_the_ranks_agree(tmp_path):
    # The interpreter also where there is a GPU: the operands are CPU tensors on gloo.
    outcomes = run_ranks(_operator_on_two_ranks, 2, "gloo", str(tmp_path / "cache"), env={"TRITON_INTERPRET": "1"})
    assert sorted(outcomes) == [0, 1], outcomes
    for rank, outcome in outcomes.items():
        assert "error" not in outcome, outcome.get("traceback")
        assert outcome["worst_error"] < 1e-4, outcome
        assert outcome["tuned_error"] < 1e-4, outcome
        assert outcome["candidates"] == len(SMALL_TILES) * 4 * 2  # tiles x chunks (1, 2, 4, 8) x layouts
        assert outcome["timer"] == "cpu"  # CPU tensors: the work runs on the CPU
        assert "chunks=3" in outcome["refused"]
    assert outcomes[0]["chosen"] == outcomes[1]["chosen"]
