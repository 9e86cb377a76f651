"""Rank-split tuning: the first call (compile + tune) of the 32-config fp16 matmul of
bench/python/matmul.py with split_across_ranks=True, on one GPU per rank of an NCCL group,
against the same call on one GPU. Each rank compiles (precompile) and measures only its
share of the configs, in a Triton cache of its own that starts empty. Prints one JSON line
(from rank 0):

    torchrun --nproc-per-node=1 bench/distributed/rank_split_first_call.py   # one GPU
    torchrun --nproc-per-node=2 bench/distributed/rank_split_first_call.py   # two GPUs

The figure is the wall time of the call from the first rank to enter to the last to leave;
the group's NCCL communicator is made before (a group's first collective makes it).
Target (issue 17): N GPUs take <= 1.2/N of the one-GPU time."""

import json
import os
import sys
import tempfile
import time

# Before Triton is imported: every rank compiles from nothing, in its own cache.
os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix=f"triton-rank{os.environ.get('RANK', '0')}-")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

from disttune.tune import autotune  # noqa: E402
from matmul import CONFIGS, compile_only, launch, operands  # noqa: E402


def main():
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    dist.init_process_group("nccl")
    world = dist.get_world_size()
    group = dist.new_group() if world > 1 else None
    a, b, c = operands()
    tuned = autotune(config_space=[{"cfg": cfg} for cfg in CONFIGS],
                     key_fn=lambda a, b, c: (tuple(a.shape), tuple(b.shape), str(a.dtype)),
                     precompile=compile_only, disk_cache=False, split_across_ranks=True)(launch)
    # The group's NCCL communicator is made lazily, at its first collective: make it here, as
    # an application's group would be before its first tuning, so it is not counted.
    dist.barrier(group=group)
    torch.cuda.synchronize()
    begin = time.perf_counter()
    result = tuned(a, b, c, autotune_pg=group)
    torch.cuda.synchronize()
    elapsed = torch.tensor([time.perf_counter() - begin], dtype=torch.float64, device="cuda")
    dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)
    torch.testing.assert_close(result, a @ b, atol=0.5, rtol=0.05)
    report = tuned.last_report
    chosen = next(iter(tuned.cache.values()))["cfg"]
    if dist.get_rank() == 0:
        print(json.dumps({
            "ranks": world, "configs": len(CONFIGS), "first_call_s": round(float(elapsed.item()), 3),
            "split_ranks": report.split_ranks, "timer": report.timer, "chosen": str(chosen),
        }), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
