"""The process-wide switch: every Triton autotuner made while it is on (triton.autotune's and
libraries' own subclasses of Autotuner) is tuned by the engine, unless its class replaces
what the engine does; what it took and what it left, and why, is kept for census()."""

from __future__ import annotations

import functools
import gc
import threading
import weakref
from typing import Any, Optional

from triton.runtime.autotuner import Autotuner as TritonAutotuner

from disttune import _triton_hook, _triton_setup
from disttune.triton import _kernel_tuning

_lock = threading.Lock()
_on = False
_patched = False
# Every autotuner the switch looked at: (weak reference, kernel name, class name, reason it was
# left; '' when taken), in the order it saw them.
_seen: list[tuple[Any, str, str, str]] = []

# Methods of Triton's Autotuner whose work the engine replaces: a class that overrides one
# wants its own measurement or store, and is left to Triton.
_REPLACED = {
    "_bench": "its own measurement",
    "do_bench": "its own benchmarker",
    "check_disk_cache": "its own store of timings",
}


def left_reason(cls: type) -> str:
    """Why the engine leaves autotuners of `cls` to Triton ('' when it takes them): the first
    method of _REPLACED that the class overrides."""
    for name, what in _REPLACED.items():
        if getattr(cls, name, None) is not getattr(TritonAutotuner, name, None):
            return f"{cls.__module__}.{cls.__qualname__} overrides Autotuner.{name} ({what})"
    return ""


def _kernel_name(kernel: Any) -> str:
    base = getattr(kernel, "base_fn", None)
    return str(getattr(base, "__name__", "?"))


def _see(kernel: Any, reason: str) -> None:
    """Takes `kernel` when `reason` is empty, and notes it in the census either way."""
    if not reason:
        kernel.__dict__["_disttune_taken"] = True
    cls = type(kernel)
    with _lock:
        _seen.append((weakref.ref(kernel), _kernel_name(kernel), f"{cls.__module__}.{cls.__qualname__}", reason))


def taken(kernel: Any) -> bool:
    """Whether the engine tunes `kernel`'s new keys."""
    return bool(kernel.__dict__.get("_disttune_taken"))


def _patch_class() -> None:
    """Wraps Autotuner.__init__ (an autotuner made while the switch is on is taken or left) and
    Autotuner.run (a taken one is tuned by the engine, outside contextual calls), once per
    process; off, the wrappers cost one flag read at construction and one at launch."""
    global _patched
    if _patched:
        return
    original_init = TritonAutotuner.__init__
    original_run = TritonAutotuner.run

    @functools.wraps(original_init)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        if _on and not taken(self):
            _see(self, left_reason(type(self)))

    @functools.wraps(original_run)
    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        if self.__dict__.get("_disttune_taken") and not _triton_hook.active_on_this_thread():
            return _kernel_tuning.run(self, args, kwargs)
        return original_run(self, *args, **kwargs)

    TritonAutotuner.__init__ = __init__
    TritonAutotuner.run = run
    _patched = True


def install(existing: bool) -> None:
    """Turns the switch on; with `existing`, also takes every autotuner already in the process
    that the engine can take. A second install only adds `existing`."""
    global _on
    with _lock:
        _patch_class()
        _on = True
    _triton_setup.start()  # in the background until the first compile needs it
    if existing:
        for kernel in _autotuners():
            if not taken(kernel) and not _noted(kernel):
                _see(kernel, left_reason(type(kernel)))


def uninstall() -> None:
    """Turns the switch off: autotuners made from now on are Triton's; those taken stay taken."""
    global _on
    with _lock:
        _on = False


def installed() -> bool:
    return _on


def take(kernel: Any) -> str:
    """Takes one autotuner (e.g. made before install()); '' when taken, else the one-line reason
    it is left to Triton."""
    if not isinstance(kernel, TritonAutotuner):
        raise TypeError(f"disttune: take() needs a Triton Autotuner, got {type(kernel).__name__}")
    with _lock:
        _patch_class()
    if taken(kernel):
        return ""
    reason = left_reason(type(kernel))
    _see(kernel, reason)
    return reason


def _autotuners() -> list[Any]:
    """Every Triton autotuner alive in the process (from the garbage collector's objects)."""
    return [obj for obj in gc.get_objects() if issubclass(type(obj), TritonAutotuner)]


def _noted(kernel: Any) -> bool:
    with _lock:
        return any(ref() is kernel for ref, _, _, _ in _seen)


def census(existing: bool = True) -> list[dict]:
    """One entry per autotuner the switch saw (and, with `existing`, per other autotuner alive
    in the process): kernel name, class, whether the engine takes it, and why not."""
    with _lock:
        rows = [(ref(), name, cls, reason) for ref, name, cls, reason in _seen]
    entries = [{"kernel": name, "class": cls, "taken": not reason, "reason": reason} for _, name, cls, reason in rows]
    if existing:
        seen_ids = {id(kernel) for kernel, _, _, _ in rows if kernel is not None}
        for kernel in _autotuners():
            if id(kernel) in seen_ids or taken(kernel):
                continue
            cls = type(kernel)
            entries.append({"kernel": _kernel_name(kernel), "class": f"{cls.__module__}.{cls.__qualname__}",
                            "taken": False, "reason": "made while the switch was off (take() or install(existing=True))"})
    return entries


def census_table(entries: Optional[list[dict]] = None) -> str:
    """census() as lines: a count of taken and left, then one line per autotuner left."""
    entries = census() if entries is None else entries
    taken_count = sum(1 for entry in entries if entry["taken"])
    lines = [f"disttune.triton: the engine tunes {taken_count} autotuners, Triton {len(entries) - taken_count}"]
    lines += [f"  left: {entry['kernel']} ({entry['class']}): {entry['reason']}" for entry in entries if not entry["taken"]]
    return "\n".join(lines) + "\n"
