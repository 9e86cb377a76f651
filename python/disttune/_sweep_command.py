"""`disttune sweep`: tune a list of shapes for a tuned function named by module and name,
on one process or on every rank a launcher (torchrun, mpirun) started."""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import os
import stat
import sys
from pathlib import Path
from typing import Any, Callable

from disttune import _core, _encoding
from disttune._sweep import made_by_autotune, sweep


class CliError(Exception):
    """A sweep argument that is wrong: printed as one line `disttune: error: ...`, status 1."""


# The largest shapes file read: far more shapes than any sweep tunes.
_MOST_SHAPES_BYTES = 64 << 20

# mpirun (Open MPI) names the ranks differently from torchrun; torch.distributed reads these.
_OPEN_MPI = {"RANK": "OMPI_COMM_WORLD_RANK", "WORLD_SIZE": "OMPI_COMM_WORLD_SIZE",
             "LOCAL_RANK": "OMPI_COMM_WORLD_LOCAL_RANK"}


def load(name: str, what: str) -> Any:
    """`module:attribute` imported; CliError naming what is wrong."""
    module_name, _, attribute = name.partition(":")
    if not module_name or not attribute:
        raise CliError(f"{what} must be MODULE:NAME, got {_shown(name)}")
    if module_name.startswith("."):
        raise CliError(f"{what} module {_shown(module_name)} is a relative name; give the module's full name")
    try:
        module = importlib.import_module(module_name)
    except Exception as error:  # the module's own code may raise anything
        raise CliError(f"cannot import {what} module {_shown(module_name)}: {_one_line(error)}") from None
    try:
        return getattr(module, attribute)
    except AttributeError:
        raise CliError(f"module {_shown(module_name)} has no {what} {_shown(attribute)}") from None


def _shown(text: str) -> str:
    """`text` quoted, its control characters and lone surrogates escaped: one line."""
    return ascii(text)


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split()) or type(error).__name__


def _shapes_text(path: Path) -> str:
    """The text of the regular file at `path`, at most _MOST_SHAPES_BYTES; opened without
    blocking (a FIFO with no writer) and checked before any read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except OSError as error:
        raise CliError(f"cannot read {path}: {error.strerror}") from None
    with os.fdopen(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # a FIFO blocks, a device may never end
            raise CliError(f"{path} is not a regular file: shapes are read from a regular file only")
        data = file.read(_MOST_SHAPES_BYTES + 1)
    if len(data) > _MOST_SHAPES_BYTES:
        raise CliError(f"{path} is larger than {_MOST_SHAPES_BYTES} bytes, the most a shapes file may hold")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise CliError(f"{path} is not UTF-8 text: {error}") from None


def _check_shape(path: Path, index: int, shape: Any) -> None:
    """A shape whose values have no canonical text (an integer over 64 bits, a lone
    surrogate, nesting deeper than a key may) is refused before anything is tuned."""
    try:
        _encoding.value_text(shape)
    except RecursionError:
        raise CliError(f"{path}: shape {index} nests deeper than a key may") from None
    except (_core.DisttuneError, ValueError) as error:
        raise CliError(f"{path}: shape {index}: {_one_line(error).removeprefix('disttune: ')}") from None


def read_shapes(path: Path) -> list:
    """The shapes file: a JSON list whose entries are lists (positional arguments) or
    objects (keyword arguments) of the argument factory."""
    try:
        shapes = json.loads(_shapes_text(path))
    except (ValueError, RecursionError) as error:
        raise CliError(f"{path} is not valid JSON: {error}") from None
    if not isinstance(shapes, list) or not shapes:
        raise CliError(f"{path} must hold a non-empty JSON list of shapes")
    for i, shape in enumerate(shapes):
        if not isinstance(shape, (list, dict)):
            raise CliError(f"{path}: shape {i} must be a list or an object, not {type(shape).__name__}")
        _check_shape(path, i, shape)
    return shapes


def _check_arguments(path: Path, shapes: list[Any], function: Callable[..., Any], name: str) -> None:
    """Every shape binds to `function`'s parameters (its arity, its keyword names), checked
    before anything is tuned; a function without a signature is not checked."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return
    for i, shape in enumerate(shapes):
        try:
            if isinstance(shape, dict):
                signature.bind(**shape)
            else:
                signature.bind(*shape)
        except TypeError as error:
            raise CliError(f"{path}: shape {i} does not fit {name}: {error}") from None


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
    world_size = os.environ.get("WORLD_SIZE", "1")
    try:
        ranks = int(world_size)
    except ValueError:
        raise CliError(f"WORLD_SIZE must be a whole number of ranks, got {_shown(world_size)}") from None
    if ranks <= 1:
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
    if not made_by_autotune(tuned):
        raise CliError(f"{_shown(args.function)} is not a tuned function (one made by disttune.autotune)")
    if args.table is not None:
        problem = _core.output_file_problem(Path(args.table))
        if problem:
            raise CliError(problem)
    shapes = read_shapes(Path(args.shapes))
    if args.make_args is not None:
        factory = load(args.make_args, "argument factory")
        _check_arguments(Path(args.shapes), shapes, factory, args.make_args)
        items = [_item(factory, shape) for shape in shapes]
    else:
        for i, shape in enumerate(shapes):
            if not isinstance(shape, list):
                raise CliError(f"{args.shapes}: shape {i} is an object; objects need --make-args")
        _check_arguments(Path(args.shapes), shapes, tuned.key_fn, "the key function of " + args.function)
        items = [tuple(shape) for shape in shapes]
    _init_ranks(args.backend)
    summary = sweep(tuned, items, table=args.table, progress=not args.no_progress)
    return 0 if len(summary.outcomes) == len(items) else 1
