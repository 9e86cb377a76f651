"""Top-level launchers for the isolation tests (a worker imports them by path): configs that
abort, segfault, hang, return wrong values, or only work on some ranks."""

import ctypes
import os
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
