"""`disttune sweep`: tune a list of shapes for a tuned function named by module and name,
on one process or on every rank a launcher (torchrun, mpirun) started."""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from pathlib import Path
from typing import Any, Callable

from disttune._sweep import sweep


class CliError(Exception):
    """A sweep argument that is wrong: printed as one line `disttune: error: ...`, status 1."""

# mpirun (Open MPI) names the ranks differently from torchrun; torch.distributed reads these.
_OPEN_MPI = {"RANK": "OMPI_COMM_WORLD_RANK", "WORLD_SIZE": "OMPI_COMM_WORLD_SIZE",
             "LOCAL_RANK": "OMPI_COMM_WORLD_LOCAL_RANK"}


def load(name: str, what: str) -> Any:
    """`module:attribute` imported; CliError naming what is wrong."""
    module_name, _, attribute = name.partition(":")
    if not module_name or not attribute:
        raise CliError(f"{what} must be MODULE:NAME, got '{name}'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise CliError(f"cannot import {what} module '{module_name}': {error}") from None
    try:
        return getattr(module, attribute)
    except AttributeError:
        raise CliError(f"module '{module_name}' has no {what} '{attribute}'") from None


def read_shapes(path: Path) -> list:
    """The shapes file: a JSON list whose entries are lists (positional arguments) or
    objects (keyword arguments) of the argument factory."""
    try:
        shapes = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise CliError(f"cannot read {path}: {error.strerror}") from None
    except (ValueError, RecursionError) as error:
        raise CliError(f"{path} is not valid JSON: {error}") from None
    if not isinstance(shapes, list) or not shapes:
        raise CliError(f"{path} must hold a non-empty JSON list of shapes")
    for i, shape in enumerate(shapes):
        if not isinstance(shape, (list, dict)):
            raise CliError(f"{path}: shape {i} must be a list or an object, not {type(shape).__name__}")
    return shapes


def _item(factory: Callable, shape: Any) -> Callable[[], tuple]:
    def make() -> tuple:
        made = factory(**shape) if isinstance(shape, dict) else factory(*shape)
        if isinstance(made, tuple) and len(made) == 2 and isinstance(made[1], dict):
            return made
        return (made if isinstance(made, tuple) else (made,)), {}

    return make


def _init_ranks(backend: str) -> None:
    """Joins torch.distributed when a launcher started several ranks (torchrun's variables,
    or Open MPI's with MASTER_ADDR and MASTER_PORT set)."""
    for variable, mpi in _OPEN_MPI.items():
        if variable not in os.environ and mpi in os.environ:
            os.environ[variable] = os.environ[mpi]
    if int(os.environ.get("WORLD_SIZE", "1")) <= 1:
        return
    for variable in ("MASTER_ADDR", "MASTER_PORT"):
        if variable not in os.environ:
            raise CliError(f"{variable} must be set to run a sweep on several ranks (torchrun sets it)")
    import torch
    import torch.distributed as dist

    if backend == "auto":
        backend = "nccl" if torch.cuda.is_available() else "gloo"
    if backend == "nccl":
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    dist.init_process_group(backend)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="disttune sweep",
        description="tune a tuned function for every shape of a file (on every rank a launcher "
                    "started: torchrun, mpirun)")
    parser.add_argument("function", help="the tuned function, MODULE:NAME (made by disttune.autotune)")
    parser.add_argument("--shapes", required=True,
                        help="a JSON list of shapes: lists (positional arguments) or objects "
                             "(keyword arguments) of --make-args; without it, lists of the "
                             "function's own arguments")
    parser.add_argument("--make-args", metavar="MODULE:NAME",
                        help="a factory: called with a shape, returns the call's arguments "
                             "(a tuple, or (args, kwargs))")
    parser.add_argument("--table", help="also write the sweep's records into this table (rank 0)")
    parser.add_argument("--backend", default="auto", choices=("auto", "nccl", "gloo"),
                        help="torch.distributed backend when several ranks run (auto: nccl with CUDA)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser


def main(arguments: list) -> int:
    """`disttune sweep ARGUMENTS`: the exit status (2 for arguments that do not parse, 1 for
    a module, name or shapes file that is wrong, one line `disttune: error: ...`)."""
    try:
        return run(_parser().parse_args(arguments))
    except SystemExit as stop:  # argparse: --help (0) or arguments that do not parse (2)
        return int(stop.code or 0)
    except CliError as error:
        print(f"disttune: error: {error}", file=sys.stderr)
        return 1


def run(args: Any) -> int:
    tuned = load(args.function, "tuned function")
    shapes = read_shapes(Path(args.shapes))
    if args.make_args is not None:
        factory = load(args.make_args, "argument factory")
        items = [_item(factory, shape) for shape in shapes]
    else:
        for i, shape in enumerate(shapes):
            if not isinstance(shape, list):
                raise CliError(f"{args.shapes}: shape {i} is an object; objects need --make-args")
        items = [tuple(shape) for shape in shapes]
    _init_ranks(args.backend)
    summary = sweep(tuned, items, table=args.table, progress=not args.no_progress)
    return 0 if len(summary.outcomes) == len(items) else 1
