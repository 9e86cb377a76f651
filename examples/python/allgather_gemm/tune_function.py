"""Function-level tuning of the all-gather + GEMM over an NCCL group (autotune_pg): the GEMM
tile, the number of chunks and the communication stream layout, the same choice on every
rank (the MAX of the ranks' times). Run one process per GPU:

    torchrun --nproc-per-node=2 examples/python/allgather_gemm/tune_function.py
"""

import os
import sys

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from allgather_gemm import AllGatherGemm, config_space, operands, reference  # noqa: E402

from disttune.tune import autotune, to_hashable  # noqa: E402


def key_fn(op, a_shard, b):
    return (op.world, to_hashable(a_shard), to_hashable(b))


def prune_fn(entry, op, a_shard, b):
    return op.shard_rows % entry["chunks"] == 0


def make_tuned(space=None, **options):
    """The operator under function-level tuning (`space`: default every tile x chunks x layout)."""

    @autotune(config_space=space or config_space(), key_fn=key_fn, prune_fn=prune_fn, **options)
    def allgather_gemm(op, a_shard, b, gemm, chunks, layout):
        return op.run(a_shard, b, gemm, chunks, layout)

    return allgather_gemm


def main(shard_rows=4096, k=8192, n=2048):
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    group = dist.new_group()  # the caller's group: any NCCL group of the ranks
    op = AllGatherGemm(group, shard_rows, k, n)
    a_shard, b = operands(group, shard_rows, k, n)
    tuned = make_tuned()
    rank = dist.get_rank(group)
    out = tuned(op, a_shard, b, autotune_pg=group, autotune_verbose=rank == 0)
    torch.testing.assert_close(out, reference(group, a_shard, b), atol=2e-2, rtol=2e-2)
    entry = tuned.cache[key_fn(op, a_shard, b)]
    print(f"rank {rank} chosen config: tile {entry['gemm'].kwargs} chunks {entry['chunks']} "
          f"layout {entry['layout']} (timer {tuned.last_report.timer}); result checked against "
          "torch all_gather + matmul", flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
