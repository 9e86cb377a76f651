"""The `disttune` command (also `python -m disttune`): list, show, verify, clear, export,
import and report the disk cache of tuning records. One implementation, in the engine
(src/cli/), shared with the C++ `disttune` tool; this module only hands it the arguments.
Errors print one line `disttune: error: ...` and exit with status 1, never a traceback.

A Python-only subcommand (e.g. `sweep`) registers itself with `add_command`: the command
line lists it, and runs it with the arguments after its name."""

from __future__ import annotations

import json
import os
import sys
from typing import Callable, Optional, Sequence

from disttune import _core
from disttune._timing import software_facts

# name -> (help, run): run(arguments after the name, as str) -> exit status.
_EXTRA_COMMANDS: dict[str, tuple[str, Callable[[list[str]], int]]] = {}


def add_command(name: str, help: str, run: Callable[[list[str]], int]) -> None:
    """Adds the subcommand `disttune NAME ...`, run as run(arguments after NAME) -> status.
    Its module must be imported before main() runs (the command modules below are)."""
    _EXTRA_COMMANDS[name] = (help, run)


def _extra(run: Callable[[list[str]], int]) -> Callable[[list[bytes]], int]:
    return lambda arguments: int(run([os.fsdecode(argument) for argument in arguments]))


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Runs the command line on `argv` (default: sys.argv[1:]); returns the exit status."""
    arguments = sys.argv[1:] if argv is None else list(argv)
    extra = [(name, help, _extra(run)) for name, (help, run) in sorted(_EXTRA_COMMANDS.items())]
    return int(_core.run_command_line([os.fsencode(argument) for argument in arguments], extra,
                                      json.dumps(software_facts())))


def _sweep(arguments: list[str]) -> int:
    from disttune import _sweep_command  # imports the user's module (and maybe torch) when run

    return _sweep_command.main(arguments)


add_command("sweep", "tune a tuned function for every shape of a file (on every rank a launcher "
                     "started: torchrun, mpirun); disttune sweep --help", _sweep)
