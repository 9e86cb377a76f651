"""The engine Timer of a kernel measured by a benchmarker (triton.autotune's do_bench): each
timed run reports what the benchmarker returned for it."""

from __future__ import annotations

import math
import reprlib
from typing import Any, Callable

from disttune import _core

# What Triton's Autotuner asks a benchmarker for: the median, then the 20% and 80% quantiles.
QUANTILES = (0.5, 0.2, 0.8)


class NoTime(RuntimeError):
    """The benchmarker gave a config no usable time (Triton's inf: the config cannot run)."""


def milliseconds(said: Any, config: Any) -> float:
    """The time in a benchmarker's answer: a number, or the first of a list of quantiles. A
    time that is not finite and >= 0 (NaN, inf, negative) fails the config: NoTime, as
    Triton's inf for a config that cannot run. An answer that is no number at all is a
    TypeError naming do_bench: the benchmarker is wrong, not the config."""
    first = said[0] if isinstance(said, (list, tuple)) and len(said) > 0 else said
    try:
        if isinstance(first, (str, bytes)):
            raise TypeError(first)
        ms = float(first)
    except (TypeError, ValueError):
        raise TypeError(
            f"disttune: do_bench returned {reprlib.repr(said)} for config {config}; a benchmarker "
            "returns milliseconds: a number, or a list of quantiles"
        ) from None
    if not (math.isfinite(ms) and ms >= 0):
        raise NoTime(f"disttune: do_bench returned {ms} ms for config {config}")
    return ms


class BenchTimer(_core.Timer):
    """Times a run as the milliseconds the benchmarker said for it (the median when it returns
    quantiles); measure() runs the benchmarker, start()/stop() bracket one run."""

    def __init__(self, bench: Callable[..., Any], hardware_json: str) -> None:
        super().__init__("triton-do-bench", hardware_json, "{}")
        self._bench = bench
        self._said = math.nan
        self._pending: list[float] = []

    def measure(self, kernel_call: Callable[[], None], config: Any) -> None:
        """One benchmarker call of `kernel_call` (see milliseconds)."""
        self._said = milliseconds(self._bench(kernel_call, quantiles=QUANTILES), config)

    def start(self) -> None:
        self._said = math.nan
        self._pending.append(math.nan)

    def stop(self) -> None:
        self._pending[-1] = self._said

    def collect(self) -> list[float]:
        out, self._pending = self._pending, []
        return out
