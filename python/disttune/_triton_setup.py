"""Triton's one-time compile set-up, done once in one background thread before compile threads
need it: the key of Triton's compile cache hashes its own sources and its library (hundreds of
megabytes), and a fresh process's compile threads otherwise each compute it at once, so that
every compile of the first wave looks two to four times as long as it is (docs/strategies.md,
"Live against simulated")."""

from __future__ import annotations

import os
import sys
import threading
from typing import Any, Optional

_lock = threading.Lock()
_done: Optional[threading.Event] = None


def _forget_in_child() -> None:
    """A forked child has no set-up thread (only the thread that forked goes on): it starts
    its own when it needs one, instead of waiting for an event nothing will set."""
    global _lock, _done
    _lock = threading.Lock()
    _done = None


os.register_at_fork(after_in_child=_forget_in_child)


def _triton_cache() -> Any:
    """Triton's runtime cache module where Triton is imported and keys its cache with
    triton_key() (Triton 2.2 onwards), else None: nothing to set up."""
    if "triton" not in sys.modules:
        return None
    try:
        from triton.runtime import cache
    except ImportError:
        return None
    return cache if callable(getattr(cache, "triton_key", None)) else None


def start() -> None:
    """Starts the set-up in a daemon thread, once per process, where Triton is imported (else
    nothing, and a later call may start it). Returns at once."""
    global _done
    with _lock:
        if _done is not None:
            return
        cache = _triton_cache()
        if cache is None:
            return
        done = _done = threading.Event()

    def set_up() -> None:
        try:
            cache.triton_key()  # memoised by Triton
        except Exception:  # the compile that needs the key raises it again, in context
            pass
        finally:
            done.set()

    threading.Thread(target=set_up, name="disttune-triton-setup", daemon=True).start()


def wait() -> None:
    """Starts the set-up if it has not started, then waits for it to end (at once if it has)."""
    start()
    if _done is not None:
        _done.wait()
