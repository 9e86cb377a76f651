"""The `disttune` command (also `python -m disttune`): list, show, verify, clear, export,
import, report and replay. The command line is defined once, as a table in the engine
(src/cli/command_table.cpp) that the C++ `disttune` tool parses with CLI11; here argparse
parses with a parser built from the same table, and the engine runs the command (values are
checked there). Errors print one line `disttune: error: ...` and exit with status 1 (2 for
arguments that do not parse), never a traceback.

A Python-only subcommand (e.g. `sweep`) registers itself with `add_command`: the command
line lists it, and runs it with the arguments after its name."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Callable, NoReturn, Optional, Sequence

from disttune import _core
from disttune._timing import software_facts

# name -> (help, run): run(arguments after the name, as str) -> exit status.
_EXTRA_COMMANDS: dict[str, tuple[str, Callable[[list[str]], int]]] = {}


def add_command(name: str, help: str, run: Callable[[list[str]], int]) -> None:
    """Adds the subcommand `disttune NAME ...`, run as run(arguments after NAME) -> status.
    Its module must be imported before main() runs (the command modules below are)."""
    _EXTRA_COMMANDS[name] = (help, run)


class _Parser(argparse.ArgumentParser):
    """argparse with the engine's error form: one line `disttune: error: ...`, status 2."""

    def error(self, message: str) -> NoReturn:
        print(f"disttune: error: {message}", file=sys.stderr)
        raise SystemExit(2)


# How argparse reads each arity of the table; every argument defaults to SUPPRESS, so the
# values handed to the engine are those given, as with the C++ tool's parser.
_ARITY: dict[str, dict[str, Any]] = {
    "flag": {"action": "store_true"},
    "one": {},
    "one_or_more": {"nargs": "+", "action": "extend"},
    "pairs": {"nargs": 2, "action": "append", "metavar": ("NAME", "VALUE")},
}


def _add(parser: argparse.ArgumentParser, argument: dict[str, Any]) -> None:
    how = dict(_ARITY[argument["arity"]], default=argparse.SUPPRESS, help=argument["help"])
    if argument["positional"]:
        if argument["arity"] == "one" and not argument["required"]:
            how["nargs"] = "?"
        parser.add_argument(argument["name"], **how)
    else:
        if argument["arity"] in ("one", "one_or_more"):
            how["metavar"] = argument["name"].lstrip("-").upper().replace("-", "_")
        parser.add_argument(argument["name"], dest=argument["name"], required=argument["required"],
                            **how)


def _parser() -> argparse.ArgumentParser:
    table = _core.command_table()
    parser = _Parser(prog=table["program"], description=table["about"])
    parser.add_argument("--version", action="version", version=table["version"])
    for argument in table["global_arguments"]:
        _add(parser, argument)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in table["commands"]:
        subparser = commands.add_parser(command["name"], help=command["help"],
                                        description=command["help"])
        for argument in command["arguments"] + table["global_arguments"]:
            _add(subparser, argument)
    for name, (help, _) in sorted(_EXTRA_COMMANDS.items()):
        commands.add_parser(name, help=help, add_help=False)  # listed in --help; run in main
    return parser


def _extra_command(arguments: list[str]) -> Optional[tuple[str, list[str]]]:
    """The Python-only command the arguments name (after any --root) and the arguments after
    its name, unparsed; None for the engine's commands."""
    i = 0
    while i < len(arguments) and (arguments[i] == "--root" or arguments[i].startswith("--root=")):
        i += 2 if arguments[i] == "--root" else 1
    if i < len(arguments) and arguments[i] in _EXTRA_COMMANDS:
        return arguments[i], arguments[i + 1:]
    return None


def _values(given: Any) -> list[bytes]:
    """An argparse value as the engine takes it: a list of bytes (paths that are not UTF-8
    pass unchanged); a flag as no values, pairs flattened."""
    if given is True:
        return []
    if isinstance(given, str):
        return [os.fsencode(given)]
    return [value for item in given for value in _values(item)]


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Runs the command line on `argv` (default: sys.argv[1:]); returns the exit status."""
    arguments = sys.argv[1:] if argv is None else list(argv)
    extra = _extra_command(arguments)
    if extra is not None:
        name, rest = extra
        return int(_EXTRA_COMMANDS[name][1](rest))
    try:
        parsed = vars(_parser().parse_args(arguments))
    except SystemExit as stop:  # --help, --version (0) or arguments that do not parse (2)
        return int(stop.code or 0)
    command = parsed.pop("command")
    values = {name: _values(given) for name, given in parsed.items()}
    return int(_core.run_command(command, values, json.dumps(software_facts())))


def _sweep(arguments: list[str]) -> int:
    from disttune import _sweep_command  # imports the user's module (and maybe torch) when run

    return _sweep_command.main(arguments)


add_command("sweep", "tune a tuned function for every shape of a file (on every rank a launcher "
                     "started: torchrun, mpirun); disttune sweep --help", _sweep)
