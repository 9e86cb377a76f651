"""Tuned functions let go of their engine objects when the interpreter exits: atexit runs
before modules are torn down, while a tuned function defined at module level may live to the
very end (kept by Triton's own references), and nanobind would then report the engine
objects it holds (tuners, timers, reports) as leaked instances."""

from __future__ import annotations

import atexit
import weakref
from typing import Any

# id(holder) -> (a weak reference to it, the names of its attributes that hold engine objects)
_holders: dict[int, tuple[weakref.ref[Any], tuple[str, ...]]] = {}


def release_at_exit(holder: Any, *attributes: str) -> None:
    """At exit, each of `holder`'s `attributes` is emptied: a dict cleared, anything else set
    to None. Nothing is kept alive by this: `holder` is held weakly."""
    key = id(holder)
    _holders[key] = (weakref.ref(holder, lambda _: _holders.pop(key, None)), attributes)


@atexit.register
def _release() -> None:
    for holder_ref, attributes in list(_holders.values()):
        holder = holder_ref()
        if holder is None:
            continue
        for name in attributes:
            value = getattr(holder, name, None)
            if isinstance(value, dict):
                value.clear()
            else:
                setattr(holder, name, None)
