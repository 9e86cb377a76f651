"""Where disttune's console output goes: stderr (the default), a logging.Logger, or a callable.

The engine sends each message with its kind: "warning", "table" (a verbose call's table of
candidates), "log" (a verbose call's log lines; the log files are written regardless) and
"progress" (long tunings; an empty text ends the display)."""

from __future__ import annotations

import atexit
import logging
from typing import Any, Callable, Optional, Union

from disttune import _core

__all__ = ["set_sink"]

# The logging level of each kind of message when the sink is a logging.Logger.
LEVELS = {"warning": logging.WARNING, "table": logging.INFO, "log": logging.INFO, "progress": logging.DEBUG}

_restore_at_exit = False


class _LoggerSink:
    """Sends each message to a logger at the level of its kind (LEVELS)."""

    def __init__(self, logger: logging.Logger) -> None:
        self.logger = logger

    def __call__(self, kind: str, text: str) -> None:
        if text:
            self.logger.log(LEVELS.get(kind, logging.INFO), "%s", text.rstrip("\n"))


def set_sink(sink: Union[None, logging.Logger, Callable[[str, str], Any]]) -> None:
    """Sends disttune's console output to `sink` from now on, in this process (every thread).

    `sink` is a logging.Logger (warnings at WARNING, tables and log lines at INFO, progress
    at DEBUG), a callable `sink(kind, text)`, or None for stderr (the default). An exception
    raised by the sink goes to sys.unraisablehook; tuning goes on."""
    global _restore_at_exit
    target: Optional[Callable[[str, str], Any]]
    if isinstance(sink, logging.Logger):
        target = _LoggerSink(sink)
    elif sink is None or callable(sink):
        target = sink
    else:
        raise _core.NotCallable(
            f"disttune: set_sink needs a logging.Logger, a callable (kind, text) or None, got {type(sink).__name__}"
        )
    _core.set_sink(target)
    if not _restore_at_exit:
        # The engine must not call into Python while the interpreter shuts down.
        atexit.register(_core.set_sink, None)
        _restore_at_exit = True
