"""Multi-rank tuning wall time: the same single-GPU work (8 configs of ~0.27 ms device time,
torch.cuda._sleep, no tensor argument) tuned by one rank alone and by every rank of an NCCL
group, one GPU per rank. Prints one JSON line (from rank 0):

    torchrun --nproc-per-node=1 bench/distributed/tuning_wall_time.py   # one GPU
    torchrun --nproc-per-node=2 bench/distributed/tuning_wall_time.py   # two GPUs

Each repetition tunes a fresh function (no disk cache) on a new key; the figure is the
median wall time of the tuning call, from the first rank to enter to the last to leave."""

import json
import os
import statistics
import time

import torch
import torch.distributed as dist

from disttune import _ranks
from disttune.tune import autotune

CONFIGS = 8
DEVICE_MS = 0.27
REPEATS = 7


def cycles_per_ms():
    torch.cuda._sleep(1_000_000)
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    torch.cuda._sleep(20_000_000)
    stop.record()
    stop.synchronize()
    return 20_000_000 / start.elapsed_time(stop)


def main():
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    dist.init_process_group("nccl")
    world = dist.get_world_size()
    group = dist.new_group() if world > 1 else None
    cycles = [int(DEVICE_MS * (1 + 0.01 * i) * cycles_per_ms()) for i in range(CONFIGS)]

    def work(n, config):
        torch.cuda._sleep(cycles[config])

    def tuning_ms(first_key):
        times = []
        for repeat in range(REPEATS + 1):  # the first repetition warms NCCL and the engine up
            tuned = autotune(config_space=[{"config": i} for i in range(CONFIGS)], key_fn=lambda n: (n,),
                             disk_cache=False)(work)
            dist.barrier()
            torch.cuda.synchronize()
            begin = time.perf_counter()
            tuned(first_key + repeat, autotune_pg=group)
            torch.cuda.synchronize()
            elapsed = torch.tensor([time.perf_counter() - begin], dtype=torch.float64, device="cuda")
            dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)
            if repeat:
                times.append(float(elapsed.item()) * 1e3)
        assert tuned.last_report.timer == "cuda", tuned.last_report.timer
        return times

    default_poll = tuning_ms(0)
    # The same with the poll of before 2026-11-30 (pause doubling to 2 ms from the start).
    _ranks.POLL_FAST_WINDOW_S = 0.0
    old_poll = tuning_ms(100)
    if dist.get_rank() == 0:
        print(json.dumps({
            "ranks": world, "configs": CONFIGS, "device_ms_per_run": DEVICE_MS, "timer": "cuda",
            "runs_per_config": 15, "median_ms": round(statistics.median(default_poll), 2),
            "all_ms": [round(t, 2) for t in default_poll],
            "median_ms_old_poll": round(statistics.median(old_poll), 2),
            "device_floor_ms": round(CONFIGS * 15 * DEVICE_MS * 1.035, 2),
        }), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
