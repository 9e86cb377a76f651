"""Two sets of autotuning choices timed in one process: plain Triton's autotuners pinned to one
set, then the other, in alternating blocks of calls, so that a steady-time comparison compares
choices and not two processes (GPU clocks and allocations differ from one process to the next)."""

from __future__ import annotations

import gc
import statistics
import time
from typing import Callable

AB_BLOCKS = 10  # alternations of the two sets
AB_BLOCK_CALLS = 5  # calls timed per set in each alternation


class PinnedCache(dict):
    """An autotuner's cache whose pinned keys are found by their text (the key tuples that
    real_libs' choices() records as str(key)) and cannot be overwritten; other keys behave as
    Triton's own cache (tuned on first use)."""

    def __init__(self, pins: dict) -> None:
        super().__init__()
        self.pins = pins

    def __contains__(self, key) -> bool:
        return str(key) in self.pins or super().__contains__(key)

    def __getitem__(self, key):
        pinned = self.pins.get(str(key))
        return pinned if pinned is not None else super().__getitem__(key)

    def __setitem__(self, key, value) -> None:
        if str(key) not in self.pins:
            super().__setitem__(key, value)


def pin(chosen: dict) -> int:
    """Pins every live Triton autotuner (subclasses too) whose kernel is in `chosen`, {kernel
    name: {key text: config text}}, to those configs (found among the autotuner's own by their
    text); the keys it tuned itself are kept. Returns the number of keys pinned; raises ValueError for a config the autotuner
    does not have."""
    from triton.runtime.autotuner import Autotuner

    pinned = 0
    for tuner in gc.get_objects():
        if not isinstance(tuner, Autotuner):
            continue
        keys = chosen.get(getattr(tuner, "base_fn", tuner.fn).__name__)
        if not keys:
            continue
        by_text = {str(config): config for config in tuner.configs}
        missing = sorted(set(keys.values()) - set(by_text))
        if missing:
            raise ValueError(f"pin: {tuner.base_fn.__name__} has no config {missing[0]!r}")
        cache = PinnedCache({key: by_text[text] for key, text in keys.items()})
        for key, config in dict.items(tuner.cache):  # keys tuned meanwhile stay tuned
            if str(key) not in cache.pins:
                dict.__setitem__(cache, key, config)
        tuner.cache = cache
        pinned += len(keys)
    return pinned


def time_calls(op: Callable[[], object], calls: int) -> tuple[list[float], list[float]]:
    """(wall ms, device ms) of each of `calls` calls, each between two synchronizations, by the
    host's clock and by device events around the call."""
    import torch

    walls, devices = [], []
    for _ in range(calls):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        begin = time.perf_counter()
        start.record()
        op()
        stop.record()
        torch.cuda.synchronize()
        walls.append((time.perf_counter() - begin) * 1000.0)
        devices.append(start.elapsed_time(stop))
    return walls, devices


def steady_ab(op: Callable[[], object], sets: dict) -> dict:
    """Each set of choices ({name: choices for pin()}) pinned in turn and its op called once
    (compiling its configs), then AB_BLOCKS alternations of AB_BLOCK_CALLS timed calls each:
    {name: {"steady_ms", "steady_device_ms", "pinned"}}, medians over all the set's calls."""
    samples = {name: ([], []) for name in sets}
    pinned = {}
    for name, chosen in sets.items():
        pinned[name] = pin(chosen)
        op()
    for _ in range(AB_BLOCKS):
        for name, chosen in sets.items():
            pin(chosen)
            walls, devices = time_calls(op, AB_BLOCK_CALLS)
            samples[name][0].extend(walls)
            samples[name][1].extend(devices)
    return {name: {"steady_ms": statistics.median(walls), "steady_device_ms": statistics.median(devices),
                   "pinned": pinned[name]} for name, (walls, devices) in samples.items()}
