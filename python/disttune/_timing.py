"""Which engine Timer times a call: CUDA events on torch's current stream, torch's event API
on another accelerator (Ascend npu, ...), or the CPU clock."""

from __future__ import annotations

import json
import platform
import sys
from dataclasses import dataclass
from typing import Any, Hashable

from disttune import _core

# Bytes zeroed before each timed run to evict the device cache when a torch event timer
# flushes L2 (larger than any current accelerator's last-level cache).
_FLUSH_BYTES = 256 << 20


@dataclass(frozen=True)
class TimingOptions:
    """How a tuned function's runs are timed (the measurement options that reach the timer)."""

    flush_l2: bool = False
    graph_runs: int = 0


def software_facts() -> dict[str, str]:
    """Versions of the Python stack a result depends on (torch and Triton when imported)."""
    facts = {"python": platform.python_version(), "disttune": _core.__version__}
    for name in ("torch", "triton"):
        module = sys.modules.get(name)
        if module is not None:
            facts[name] = str(getattr(module, "__version__", "unknown"))
    return facts


def device_of(args: tuple, kwargs: dict) -> Any:
    """The torch device of the first tensor among the call's arguments, or None."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    for value in (*args, *kwargs.values()):
        if isinstance(value, torch.Tensor):
            return value.device
    return None


def timer_for(device: Any, options: TimingOptions) -> tuple[Hashable, Any]:
    """(identity, timer) for runs on `device`: the identity tells when a cached timer fits."""
    if device is None or device.type == "cpu":
        return ("cpu",), _core.CpuTimer()
    torch = sys.modules["torch"]
    if device.type == "cuda":
        index = device.index if device.index is not None else torch.cuda.current_device()
        stream = torch.cuda.current_stream(index).cuda_stream
        timer = _core.CudaTimer(stream=stream, flush_l2=options.flush_l2, graph_runs=options.graph_runs)
        return ("cuda", index, stream), timer
    return (device.type, device.index), TorchEventTimer(device, options.flush_l2)


class TorchEventTimer(_core.Timer):
    """Times runs with torch's event API of an accelerator (torch.<type>.Event) on its
    current stream; optionally zeroes a buffer larger than the device cache before each
    timed run."""

    def __init__(self, device: Any, flush_l2: bool) -> None:
        torch = sys.modules["torch"]
        backend = getattr(torch, device.type, None)
        if backend is None or not hasattr(backend, "Event"):
            raise RuntimeError(f"disttune: torch has no event API for device type '{device.type}'")
        name = backend.get_device_name(device) if hasattr(backend, "get_device_name") else device.type
        hardware = {"torch_device": {"type": device.type, "name": str(name)}}
        super().__init__(f"torch-{device.type}-events", json.dumps(hardware), "{}")
        self._backend = backend
        self._flush = torch.empty(_FLUSH_BYTES, dtype=torch.int8, device=device) if flush_l2 else None
        self._pairs: list[list[Any]] = []

    def prepare_timed_run(self) -> None:
        if self._flush is not None:
            self._flush.zero_()

    def flushes_l2(self) -> bool:
        return self._flush is not None

    def start(self) -> None:
        event = self._backend.Event(enable_timing=True)
        event.record()
        self._pairs.append([event, None])

    def stop(self) -> None:
        event = self._backend.Event(enable_timing=True)
        event.record()
        self._pairs[-1][1] = event

    def collect(self) -> list[float]:
        pairs, self._pairs = self._pairs, []
        if not pairs:
            return []
        if any(stop is None for _, stop in pairs):
            raise RuntimeError("disttune: a timed run was started but not stopped")
        pairs[-1][1].synchronize()
        return [float(start.elapsed_time(stop)) for start, stop in pairs]
