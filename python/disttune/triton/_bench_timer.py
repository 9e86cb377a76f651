"""The engine Timer of a kernel measured by a benchmarker (triton.autotune's do_bench): each
timed run reports what the benchmarker returned for it."""

from __future__ import annotations

import math
from typing import Any, Callable

from disttune import _core

# What Triton's Autotuner asks a benchmarker for: the median, then the 20% and 80% quantiles.
QUANTILES = (0.5, 0.2, 0.8)


class NoTime(RuntimeError):
    """The benchmarker gave a config no usable time (Triton's inf: the config cannot run)."""


class BenchTimer(_core.Timer):
    """Times a run as the milliseconds the benchmarker said for it (the median when it returns
    quantiles); measure() runs the benchmarker, start()/stop() bracket one run."""

    def __init__(self, bench: Callable[..., Any], hardware_json: str) -> None:
        super().__init__("triton-do-bench", hardware_json, "{}")
        self._bench = bench
        self._said = math.nan
        self._pending: list[float] = []

    def measure(self, kernel_call: Callable[[], None], config: Any) -> None:
        """One benchmarker call of `kernel_call`; a time that is not a positive finite number
        fails the config (as Triton's inf for a config that cannot run)."""
        said = self._bench(kernel_call, quantiles=QUANTILES)
        if isinstance(said, (list, tuple)):
            said = said[0]
        said = float(said)
        if not (math.isfinite(said) and said >= 0):
            raise NoTime(f"disttune: do_bench returned {said} ms for config {config}")
        self._said = said

    def start(self) -> None:
        self._said = math.nan
        self._pending.append(math.nan)

    def stop(self) -> None:
        self._pending[-1] = self._said

    def collect(self) -> list[float]:
        out, self._pending = self._pending, []
        return out
