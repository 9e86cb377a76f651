"""Repeats each rank fault of multi-rank tuning over torch.distributed (NCCL with a GPU per
rank, or gloo) and counts how each repetition ended: every surviving rank raised a
CollectiveTimeout (gloo, for a killed rank: a RuntimeError) naming the lost rank within the
deadline + 5 s ("named"), a rank was still
running at the hang limit ("hang"), or anything else ("other"). Faults: the last rank is
killed with SIGKILL, or hangs in a launcher, in the middle of a tuning.

    python3 bench/distributed/stress_faults.py --ranks 2 --repeats 50 [--jobs 8] [--backend gloo]

--jobs runs that many jobs at once (each its own group of --ranks processes; with NCCL,
rank r of every job shares GPU r), so 50 repetitions of each fault fit in minutes.
Prints one JSON line; exits non-zero unless every repetition was "named"."""

import argparse
import concurrent.futures
import json
import multiprocessing
import os
import signal
import statistics
import tempfile
import time

import torch
import torch.distributed as dist

DEADLINE_S = 1.0


def _rank(rank, world, backend, port, fault, marker, results):
    if backend == "nccl":
        torch.cuda.set_device(rank)
    store = dist.TCPStore("127.0.0.1", port, world, False)  # the parent holds the server
    dist.init_process_group(backend, store=store, rank=rank, world_size=world)
    from disttune.tune import autotune

    def launch(n, tag):
        if tag == "b" and rank == world - 1:
            with open(marker, "w") as out:  # on disk before the fault, unlike a queued message
                out.write(repr(time.time()))
            if fault == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            time.sleep(3600)
        if backend == "nccl":
            torch.cuda._sleep(100_000)

    tuned = autotune(config_space=[{"tag": "a"}, {"tag": "b"}], key_fn=lambda n: (n,), disk_cache=False,
                     collective_timeout_s=DEADLINE_S, warmup_runs=1, timed_runs=2)(launch)
    try:
        tuned(1)
        results.put((rank, "no error", time.time()))
    except Exception as error:
        results.put((rank, f"{type(error).__name__}: {error}", time.time()))
    results.close()
    results.join_thread()
    os._exit(0)


def repeat_once(world, backend, fault, hang_limit_s):
    """'named', 'hang' or 'other: ...' for one run of `fault`, and the survivors' latency."""
    # Ranks start from a fork server (torch and disttune imported once, CUDA never): fork()
    # from this process, whose threads run the jobs at once, could copy a held lock.
    context = multiprocessing.get_context("forkserver")
    results = context.Queue()
    # The parent holds the group's store on a port the system chose: no port race between
    # repetitions (a race once made a rank fail to start, counted as a hang).
    store = dist.TCPStore("127.0.0.1", 0, world, True, wait_for_workers=False)
    with tempfile.TemporaryDirectory() as scratch:
        marker = os.path.join(scratch, "lost-at")
        processes = [context.Process(target=_rank, args=(r, world, backend, store.port, fault, marker, results))
                     for r in range(world)]
        for process in processes:
            process.start()
        deadline = time.monotonic() + hang_limit_s
        errors = {}
        while len(errors) < world - 1 and time.monotonic() < deadline:
            try:
                rank, what, at = results.get(timeout=0.2)
            except Exception:
                continue
            errors[rank] = (what, at)
        for process in processes:
            process.join(timeout=0.5)
            if process.is_alive():
                process.kill()
                process.join()
        lost_at = float(open(marker).read()) if os.path.exists(marker) else None
    del store
    if len(errors) < world - 1:
        return "hang", None
    latencies = [at - lost_at for _, at in errors.values()] if lost_at else [float("inf")]
    expected = f"ranks that did not arrive: {world - 1} "
    for what, _ in errors.values():
        # NCCL: the survivors' collective never completes (CollectiveTimeout at the deadline);
        # gloo notices a killed peer at once (RuntimeError). Either must name the lost rank.
        if not (what.startswith(("CollectiveTimeout", "RuntimeError")) and expected in what):
            return f"other: {what[:200]}", None
    if max(latencies) > DEADLINE_S + 5.0:
        return f"other: late by {max(latencies):.1f} s", None
    return "named", max(latencies)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--jobs", type=int, default=1, help="jobs at once")
    parser.add_argument("--backend", default="nccl", choices=["nccl", "gloo"])
    options = parser.parse_args()
    multiprocessing.set_forkserver_preload(["torch", "torch.distributed", "disttune.tune"])
    summary = {"ranks": options.ranks, "backend": options.backend, "deadline_s": DEADLINE_S,
               "jobs_at_once": options.jobs, "faults": {}}
    begin = time.monotonic()
    for fault in ("kill", "hang"):
        counts, latencies, others = {"named": 0, "hang": 0, "other": 0}, [], []
        with concurrent.futures.ThreadPoolExecutor(max_workers=options.jobs) as pool:
            outcomes = list(pool.map(lambda _: repeat_once(options.ranks, options.backend, fault, hang_limit_s=60.0),
                                     range(options.repeats)))
        for outcome, latency in outcomes:
            counts[outcome.split(":")[0]] += 1
            if latency is not None:
                latencies.append(latency)
            elif outcome.startswith("other"):
                others.append(outcome)
        summary["faults"][fault] = {
            **counts, "repeats": options.repeats,
            "error_after_s_median": round(statistics.median(latencies), 2) if latencies else None,
            "error_after_s_max": round(max(latencies), 2) if latencies else None,
            "first_others": others[:3],
        }
    summary["wall_s"] = round(time.monotonic() - begin, 1)
    print(json.dumps(summary), flush=True)
    bad = any(f["named"] != options.repeats for f in summary["faults"].values())
    raise SystemExit(1 if bad else 0)


if __name__ == "__main__":
    main()
