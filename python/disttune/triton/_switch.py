"""The process-wide switch: triton.autotune becomes the drop-in for kernels decorated after it."""

from __future__ import annotations

import threading
from typing import Any, Callable

_lock = threading.Lock()
# (module, attribute name, the original) of every place the switch replaced.
_replaced: list[tuple[Any, str, Any]] = []


def places() -> list[tuple[Any, str]]:
    """Where Triton offers autotune: triton.autotune, triton.runtime.autotune and
    triton.runtime.autotuner.autotune (importing them imports Triton)."""
    import triton
    import triton.runtime
    import triton.runtime.autotuner

    return [(triton, "autotune"), (triton.runtime, "autotune"), (triton.runtime.autotuner, "autotune")]


def install(dropin: Callable) -> None:
    """Puts `dropin` in every place; a second install is a no-op."""
    with _lock:
        if _replaced:
            return
        for module, name in places():
            _replaced.append((module, name, getattr(module, name)))
            setattr(module, name, dropin)


def uninstall() -> None:
    """Puts Triton's own autotune back; a no-op when not installed."""
    with _lock:
        while _replaced:
            module, name, original = _replaced.pop()
            setattr(module, name, original)


def installed() -> bool:
    """Whether the switch is on."""
    return bool(_replaced)
