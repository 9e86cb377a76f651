"""Runs a function on N torch.distributed ranks, each in a fresh process, and collects what
each rank returned; a rank that died or hangs is reported missing, never waited for."""

import os
import queue
import time
import traceback

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

import conftest  # noqa: F401  (the test process's Triton interpreter setup, in each rank too)


def _rank_main(target, rank, world, backend, port, env, args, results):
    os.environ.update(env)
    if backend == "nccl":
        torch.cuda.set_device(rank)
    store = dist.TCPStore("127.0.0.1", port, world, False)  # the parent holds the server
    dist.init_process_group(backend, store=store, rank=rank, world_size=world)
    try:
        outcome = target(rank, world, *args)
    except BaseException as error:  # reported to the test, which fails with it
        outcome = {"error": f"{type(error).__name__}: {error}", "traceback": traceback.format_exc()}
    results.put((rank, outcome))
    results.close()
    results.join_thread()
    # No process-group teardown: after a fault a NCCL communicator may never be destroyed
    # cleanly, and the test is about what the ranks returned.
    os._exit(0)


def run_ranks(target, world, backend, *args, timeout_s=180.0, env=None, wait_for=None):
    """{rank: target(rank, world, *args)} for the ranks that returned within timeout_s (or
    once `wait_for` ranks have returned); processes still alive then are killed. `target`
    must be importable (module level)."""
    context = mp.get_context("spawn")
    results = context.Queue()
    # The group's store lives in this process, on a port the system chose: no port race, and
    # it outlives any rank a test kills.
    store = dist.TCPStore("127.0.0.1", 0, world, True, wait_for_workers=False)
    port = store.port
    env = {key: str(value) for key, value in (env or {}).items()}
    processes = [
        context.Process(target=_rank_main, args=(target, rank, world, backend, port, env, args, results))
        for rank in range(world)
    ]
    for process in processes:
        process.start()
    outcomes = {}
    deadline = time.monotonic() + timeout_s
    wait_for = world if wait_for is None else wait_for
    while len(outcomes) < wait_for and time.monotonic() < deadline:
        try:
            rank, outcome = results.get(timeout=0.5)
            outcomes[rank] = outcome
        except queue.Empty:
            if all(not p.is_alive() for p in processes) and results.empty():
                break
    for process in processes:
        process.join(timeout=max(0.0, min(10.0, deadline - time.monotonic())) if len(outcomes) == world else 1.0)
        if process.is_alive():
            process.kill()
            process.join()
    return outcomes
