"""Which engine Timer times a call, following where the work runs: CUDA events on torch's
current stream, torch's event API on another accelerator (Ascend npu, ...), or the CPU clock."""

from __future__ import annotations

import dataclasses
import json
import platform
import sys
from dataclasses import dataclass
from typing import Any, Callable, Hashable

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


# How deep device_of looks into nested lists, tuples, dicts and dataclasses.
_NESTING_LIMIT = 8

# Values device_of never looks into.
_NOT_CONTAINERS = (str, bytes, int, float, type, type(None))

# The timer= values a decorator accepts besides a Timer object (None: follow the work).
TIMER_NAMES = ("cuda", "cpu")


def check_timer_choice(timer: Any, owner: str) -> None:
    """Refuses a timer= value that is neither None, "cuda", "cpu" nor an engine Timer."""
    if timer is None or isinstance(timer, _core.TimerBase):
        return
    if isinstance(timer, str) and timer in TIMER_NAMES:
        return
    raise ValueError(
        f"disttune: timer={timer!r} of '{owner}' is not a timer: use \"cuda\" (device events on the "
        "current CUDA device and stream), \"cpu\" (the host clock), a disttune._core.Timer "
        "subclass instance, or None (the timer follows where the work runs)"
    )


def _tensor_devices(value: Any, torch: Any, depth: int) -> Any:
    """Yields the device of every tensor in `value`, looking into lists, tuples, sets, dict
    values and dataclass fields down to _NESTING_LIMIT levels."""
    if isinstance(value, torch.Tensor):
        yield value.device
    elif depth >= _NESTING_LIMIT or isinstance(value, _NOT_CONTAINERS):
        return
    elif isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            yield from _tensor_devices(item, torch, depth + 1)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _tensor_devices(item, torch, depth + 1)
    elif dataclasses.is_dataclass(value):
        for field in dataclasses.fields(value):
            yield from _tensor_devices(getattr(value, field.name, None), torch, depth + 1)


def device_of(args: tuple, kwargs: dict) -> Any:
    """The device of the call's tensors, nested ones included: the first accelerator tensor's,
    else cpu if there is a CPU tensor, else None (no tensor at all)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    found = None
    # The arguments themselves first (the common case: tensors and scalars), looking into a
    # container only when an argument is one; the order is _tensor_devices' order.
    for value in (*args, *kwargs.values()):
        if isinstance(value, torch.Tensor):
            if not value.is_cpu:  # cheaper than reading device.type
                return value.device
            if found is None:
                found = value.device
        elif not isinstance(value, _NOT_CONTAINERS):
            for device in _tensor_devices(value, torch, 1):
                if device.type != "cpu":
                    return device
                found = device
    return found


def _group_device(group: Any, torch: Any) -> Any:
    """The current device of the accelerator a process group's backend runs on (NCCL: cuda,
    HCCL: npu), or None for a CPU backend (gloo, mpi) or a mixed one."""
    if group is None:
        return None
    import torch.distributed as dist

    backend = str(dist.get_backend(group)).lower()
    for name, kind in (("nccl", "cuda"), ("hccl", "npu")):
        if backend == name:
            return torch.device(kind, getattr(torch, kind).current_device())
    return None


def _initialised_accelerator(torch: Any) -> Any:
    """The current device of a torch accelerator whose context this process has initialised."""
    if torch.cuda.is_initialized():
        return torch.device("cuda", torch.cuda.current_device())
    accelerator = getattr(torch, "accelerator", None)  # torch >= 2.6
    if accelerator is not None and accelerator.is_available():
        kind = accelerator.current_accelerator().type
        backend = getattr(torch, kind, None)
        if backend is not None and getattr(backend, "is_initialized", lambda: False)():
            return torch.device(kind, backend.current_device())
    return None


def work_device(args: tuple, kwargs: dict, group: Any = None) -> Any:
    """Where a call's work runs: the device of its tensors (nested ones included); with no
    tensor, the accelerator of an NCCL/HCCL `group`, else an accelerator whose context is
    initialised in this process; None (the CPU) otherwise."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    device = device_of(args, kwargs)
    if device is None:
        device = _group_device(group, torch)
    if device is None:
        device = _initialised_accelerator(torch)
    return device


def _chosen_device(choice: Any, args: tuple, kwargs: dict, group: Any) -> Any:
    """The device a `timer=` name or None (follow the work) times on; None: the CPU."""
    if choice == "cpu":
        return None
    if choice == "cuda":
        torch = sys.modules.get("torch")
        if torch is None or not torch.cuda.is_available():
            raise RuntimeError('disttune: timer="cuda" was asked for but torch sees no CUDA device')
        device = device_of(args, kwargs)
        if device is None or device.type != "cuda":
            device = torch.device("cuda", torch.cuda.current_device())
        return device
    return work_device(args, kwargs, group)


def timer_choice(
    choice: Any, args: tuple, kwargs: dict, group: Any, options: TimingOptions
) -> tuple[Hashable, Callable[[], Any]]:
    """(identity, make) for one call: the `timer=` choice when given (checked by
    check_timer_choice), else the timer of the device the work runs on, made only when
    make() is called, so a caller that holds a tuner for the identity makes none (a CUDA
    timer queries its stream's context and takes a clock probe when made)."""
    if isinstance(choice, _core.TimerBase):
        return ("given", id(choice)), lambda: choice
    device = _chosen_device(choice, args, kwargs, group)
    return _timer_identity(device), lambda: timer_for(device, options)[1]


def select_timer(
    choice: Any, args: tuple, kwargs: dict, group: Any, options: TimingOptions
) -> tuple[Hashable, Any]:
    """(identity, timer) for one call: timer_choice's, the timer made now."""
    identity, make = timer_choice(choice, args, kwargs, group, options)
    return identity, make()


def _timer_identity(device: Any) -> Hashable:
    """What tells when a timer made for runs on `device` fits: the device, and for CUDA the
    current stream."""
    if device is None or device.type == "cpu":
        return ("cpu",)
    if device.type == "cuda":
        torch = sys.modules["torch"]
        index = device.index if device.index is not None else torch.cuda.current_device()
        return ("cuda", index, torch.cuda.current_stream(index).cuda_stream)
    return (device.type, device.index)


def timer_for(device: Any, options: TimingOptions) -> tuple[Hashable, Any]:
    """(identity, timer) for runs on `device`: the identity tells when a cached timer fits."""
    identity = _timer_identity(device)
    if identity[0] == "cpu":
        return identity, _core.CpuTimer()
    if identity[0] == "cuda":
        return identity, _core.CudaTimer(stream=identity[2], flush_l2=options.flush_l2, graph_runs=options.graph_runs)
    return identity, TorchEventTimer(device, options.flush_l2)


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
        self._free: list[Any] = []  # events of collected pairs, reused (none made per run)

    def prepare_timed_run(self) -> None:
        if self._flush is not None:
            self._flush.zero_()

    def flushes_l2(self) -> bool:
        return self._flush is not None

    def _event(self) -> Any:
        return self._free.pop() if self._free else self._backend.Event(enable_timing=True)

    def start(self) -> None:
        event = self._event()
        event.record()
        self._pairs.append([event, None])

    def stop(self) -> None:
        event = self._event()
        event.record()
        self._pairs[-1][1] = event

    def collect(self) -> list[float]:
        """One wait for every pair since the last collect (the engine collects once per round)."""
        pairs, self._pairs = self._pairs, []
        if not pairs:
            return []
        if any(stop is None for _, stop in pairs):
            raise RuntimeError("disttune: a timed run was started but not stopped")
        pairs[-1][1].synchronize()
        times = [float(start.elapsed_time(stop)) for start, stop in pairs]
        for start, stop in pairs:
            self._free += (start, stop)
        return times
