"""Top-level launchers for the isolation tests (a worker imports them by path): configs that
abort, segfault, hang, return wrong values, or only work on some ranks."""

import ctypes
import os
import sys
import time

import torch

from disttune.tune import autotune

# "good" is the slowest entry that works, "fast" the fastest; the others never finish well.
MODES = [{"mode": "abort"}, {"mode": "segfault"}, {"mode": "hang"}, {"mode": "wrong"}, {"mode": "good"}, {"mode": "fast"}]


def _spin(ms):
    end = time.perf_counter() + ms / 1000.0
    while time.perf_counter() < end:
        pass


def doubled(x):
    """The reference of `misbehaving`."""
    return x * 2


def run_mode(x, mode):
    if mode == "abort":
        os.abort()
    if mode == "segfault":
        ctypes.string_at(0)
    if mode == "hang":
        while True:
            time.sleep(1)
    if mode == "wrong":
        return x * 3
    _spin(2.0 if mode == "good" else 0.2)
    return x * 2


@autotune(config_space=MODES, key_fn=lambda x: tuple(x.shape), isolate=True, candidate_timeout_s=3,
          reference=doubled, warmup_runs=1, timed_runs=3, disk_cache=False)
def misbehaving(x, mode):
    return run_mode(x, mode)


def add_into(x, out, step):
    """An in-place launcher: out += step * x, returned."""
    out.add_(x * step)
    return out


def expected_sum(x, out):
    """The reference of the in-place launchers: out as the caller passed it, plus x."""
    return out + x


@autotune(config_space=[{"step": 1}, {"step": 1.0}], key_fn=lambda x, out: tuple(x.shape),
          isolate=True, restore_value=["out"], reference=expected_sum, warmup_runs=2, timed_runs=3,
          disk_cache=False)
def isolated_in_place(x, out, step):
    return add_into(x, out, step)


RANKED = [{"tag": "a"}, {"tag": "b"}, {"tag": "c"}]


@autotune(config_space=RANKED, key_fn=lambda x: x, isolate=True, candidate_timeout_s=3, warmup_runs=1,
          timed_runs=3)
def fails_on_one_rank(x, tag):
    """On rank 1 (DISTTUNE_TEST_RANK), "a" segfaults and "b" hangs; "c" works everywhere."""
    rank = int(os.environ.get("DISTTUNE_TEST_RANK", "0"))
    if rank == 1 and tag == "a":
        ctypes.string_at(0)
    if rank == 1 and tag == "b":
        while True:
            time.sleep(1)
    _spin(0.1 if tag != "c" else 0.5)
    return (x, tag)


# Configs that start processes: FORKS that never end, FORKS that return from the config as
# the worker would, a hang with a child, an exit(3), more than the bound, and one that starts
# none. Each fork copies the worker (torch imported): 40 took up to 2 s of a run on a loaded
# 2-core machine, too close to the 5 s candidate timeout they must stay under.
FORKS = 10
SPAWNS = [{"spawn": s} for s in ("sleepers", "returners", "hang_with_child", "exits", "too_many", "plain")]


def _note_pid(pid_file):
    with open(pid_file, "a") as pids:
        pids.write(f"{os.getpid()}\n")


def _sleep_forever():
    while True:
        time.sleep(1)


def run_spawn(x, pid_file, spawn):
    if spawn == "sleepers":
        for _ in range(FORKS):
            if os.fork() == 0:
                _note_pid(pid_file)
                _sleep_forever()
    if spawn == "too_many":  # spawned, not forked: 257 copies of this process take long
        with open(pid_file, "a") as pids:
            for _ in range(257):
                pids.write(f"{os.posix_spawn('/bin/sleep', ['sleep', '3600'], os.environ)}\n")
    if spawn == "returners":
        for _ in range(FORKS):
            if os.fork() == 0:
                _note_pid(pid_file)
                return x * 2
    if spawn == "hang_with_child":
        if os.fork() == 0:
            _note_pid(pid_file)
        _sleep_forever()
    if spawn == "exits":
        sys.exit(3)
    return x * 2


@autotune(config_space=SPAWNS, key_fn=lambda x, pid_file: tuple(x.shape), isolate=True, candidate_timeout_s=5,
          warmup_runs=0, timed_runs=1, disk_cache=False)
def spawning(x, pid_file, spawn):
    return run_spawn(x, pid_file, spawn)


def _surrogate_failure(x, bad):
    if bad:
        raise OSError("cannot open " + os.fsdecode(b"/data/caf\xe9.bin"))
    return x


# A config whose error text holds a lone surrogate (as os.fsdecode of a Latin-1 name gives).
@autotune(config_space=[{"bad": True}, {"bad": False}], key_fn=lambda x: tuple(x.shape), isolate=True,
          warmup_runs=0, timed_runs=1)
def surrogate_failure(x, bad):
    return _surrogate_failure(x, bad)
