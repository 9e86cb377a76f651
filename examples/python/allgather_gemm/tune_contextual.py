"""Contextual tuning (is_dist=True) of the GEMM inside the all-gather + GEMM: the GEMM is a
triton.autotune kernel launched once per chunk while the later chunks are gathered, and its
tile is chosen in that real context, the same on every rank of WORLD. Run one process per GPU:

    torchrun --nproc-per-node=2 examples/python/allgather_gemm/tune_contextual.py
"""

import os
import sys

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from allgather_gemm import AllGatherGemm, chunk_gemm_autotuned, operands, reference  # noqa: E402

from disttune.autotuner import contextual_autotune  # noqa: E402


def make_contextual(**options):
    """The operator with its GEMM tuned in context on every rank of the default group."""

    @contextual_autotune(is_dist=True, **options)
    def allgather_gemm(op, a_shard, b, chunks, layout):
        return op.run(a_shard, b, None, chunks, layout, kernel=chunk_gemm_autotuned)

    return allgather_gemm


def main(shard_rows=4096, k=8192, n=2048, chunks=4, layout="two-streams"):
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    group = dist.group.WORLD
    op = AllGatherGemm(group, shard_rows, k, n)
    a_shard, b = operands(group, shard_rows, k, n)
    tuned = make_contextual()
    out = tuned(op, a_shard, b, chunks, layout)
    torch.testing.assert_close(out, reference(group, a_shard, b), atol=2e-2, rtol=2e-2)
    print(f"rank {dist.get_rank()} chosen tile: {chunk_gemm_autotuned.best_config} ({chunks} chunks, "
          f"{layout}); result checked against torch all_gather + matmul", flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
