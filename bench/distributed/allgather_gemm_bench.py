"""What tuning buys on the all-gather + GEMM (examples/python/allgather_gemm): every fixed
config (tile x chunks x stream layout) timed, the config function-level tuning picks over the
NCCL group, and torch's all_gather + matmul. Times are per call, CUDA events on each rank,
the MAX over the ranks (what the slowest rank sees), median of RUNS. One GPU per rank:

    torchrun --nproc-per-node=2 bench/distributed/allgather_gemm_bench.py [--out result.json]

Regret: (tuned - oracle) / oracle, the oracle being the fastest fixed config of the same
measurement; every result is checked against torch's."""

import argparse
import json
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "examples", "python", "allgather_gemm"))
from allgather_gemm import AllGatherGemm, config_space, operands, reference  # noqa: E402
from tune_function import key_fn, make_tuned  # noqa: E402

WARMUP, RUNS = 5, 20


def timed_ms(call):
    """Median per-call time in ms on this rank, then the MAX over the ranks."""
    for _ in range(WARMUP):
        call()
    dist.barrier()
    pairs = []
    for _ in range(RUNS):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        call()
        stop.record()
        pairs.append((start, stop))
    torch.cuda.synchronize()
    local = statistics.median(start.elapsed_time(stop) for start, stop in pairs)
    agreed = torch.tensor([local], dtype=torch.float64, device="cuda")
    dist.all_reduce(agreed, op=dist.ReduceOp.MAX)
    return float(agreed.item())


def describe(entry):
    tile = entry["gemm"].kwargs
    return (f"{tile['BLOCK_M']}x{tile['BLOCK_N']}x{tile['BLOCK_K']}/w{entry['gemm'].num_warps}"
            f"/s{entry['gemm'].num_stages} chunks={entry['chunks']} {entry['layout']}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--shard-rows", type=int, default=4096)
    parser.add_argument("--k", type=int, default=8192)
    parser.add_argument("--n", type=int, default=2048)
    parser.add_argument("--out", default=None)
    options = parser.parse_args()
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    dist.init_process_group("nccl")
    group = dist.new_group()
    op = AllGatherGemm(group, options.shard_rows, options.k, options.n)
    a_shard, b = operands(group, options.shard_rows, options.k, options.n)
    expected = reference(group, a_shard, b)

    tuned = make_tuned(disk_cache=False)
    begin = time.perf_counter()
    out = tuned(op, a_shard, b, autotune_pg=group)
    torch.cuda.synchronize()
    tuning_s = time.perf_counter() - begin
    torch.testing.assert_close(out, expected, atol=2e-2, rtol=2e-2)
    chosen = tuned.cache[key_fn(op, a_shard, b)]

    fixed = []
    for entry in config_space():
        if op.shard_rows % entry["chunks"]:
            continue
        out = op.run(a_shard, b, entry["gemm"], entry["chunks"], entry["layout"])
        torch.testing.assert_close(out, expected, atol=2e-2, rtol=2e-2)
        ms = timed_ms(lambda: op.run(a_shard, b, entry["gemm"], entry["chunks"], entry["layout"]))
        fixed.append((ms, describe(entry), describe(entry) == describe(chosen)))
    fixed.sort()
    tuned_ms = next(ms for ms, _, is_chosen in fixed if is_chosen)
    no_overlap = [ms for ms, name, _ in fixed if "chunks=1 " in name]

    parts = [torch.empty_like(a_shard) for _ in range(dist.get_world_size(group))]
    gathered = torch.empty(len(parts) * options.shard_rows, options.k, dtype=a_shard.dtype, device="cuda")

    def torch_reference():
        dist.all_gather_into_tensor(gathered, a_shard, group=group)
        return gathered @ b

    torch_ms = timed_ms(torch_reference)
    result = {
        "ranks": dist.get_world_size(group),
        "shape": {"shard_rows": options.shard_rows, "k": options.k, "n": options.n, "dtype": "float16"},
        "gpu": torch.cuda.get_device_name(),
        "configs": len(fixed),
        "tuning_wall_s": round(tuning_s, 2),
        "tuned": {"config": describe(chosen), "ms": round(tuned_ms, 4)},
        "best_fixed": {"config": fixed[0][1], "ms": round(fixed[0][0], 4)},
        "worst_fixed": {"config": fixed[-1][1], "ms": round(fixed[-1][0], 4)},
        "best_without_overlap_ms": round(min(no_overlap), 4),
        "torch_all_gather_matmul_ms": round(torch_ms, 4),
        "regret_vs_oracle": round(tuned_ms / fixed[0][0] - 1, 4),
        "speedup_vs_torch": round(torch_ms / tuned_ms, 3),
        "all_fixed_ms": {name: round(ms, 4) for ms, name, _ in fixed},
    }
    if dist.get_rank() == 0:
        text = json.dumps(result, indent=1)
        print(text, flush=True)
        if options.out:
            with open(options.out, "w") as out:
                out.write(text + "\n")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
