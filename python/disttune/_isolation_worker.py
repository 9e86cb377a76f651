"""The isolated worker process: runs and times one device's candidates for the caller's tunings.

Messages from the caller (tuples over a multiprocessing Pipe), and the worker's replies:

    ("tuning", Tuning)            a new tuning's launcher, arguments and options -> ("ok",) | error
    ("check", c)                  restore, check candidate c's result once       -> ("ok",) | error
    ("run", c, timed, flush_l2)   one run of c (timed: between device events)    -> no reply
    ("collect", c)                c's timed samples (ms) since the last collect  -> ("samples", [..]) | error

where an error is ("error", text, exiting): `exiting` when the device context is lost.
    ("end",)                      drop the tuning's arguments                    -> no reply

A run that raises is remembered and reported at the next check or collect. After a device
error the worker replies and exits: its CUDA context is lost, the caller starts a new one.
The worker leads a process group of its own: processes its configs start are killed at the
tuning's end ("end") or with the worker; a process a config forked never answers the caller.
"""

from __future__ import annotations

import importlib
import os
import signal
import sys
import time
from dataclasses import dataclass
from typing import Any, Optional

from disttune import _process_group
from disttune._candidate_runs import CandidateRuns, launcher_runs
from disttune._checks import OutputCheck
from disttune._encoding import entry_from_text
from disttune._restore import InputRestorer, RestoredNames

# Bytes zeroed before each timed run when the L2 cache is flushed (as the torch event timer does).
_FLUSH_BYTES = 256 << 20

# Exit status of a worker that ended itself after a device error (the caller learns it from
# the error reply sent first, never from the status: a config may exit with any status).
DEVICE_LOST_EXIT = 3


@dataclass
class Tuning:
    """What the worker needs for one tuning (pickled by multiprocessing; configs as canonical JSON)."""

    module: str
    qualname: str
    args: tuple
    kwargs: dict
    candidates: list[str]
    reference_entry: Optional[str]
    check: Optional[OutputCheck]
    restored: RestoredNames


def resolve_launcher(module: str, qualname: str) -> Any:
    """The launcher at `module`.`qualname`; a tuned function resolves to its undecorated launcher."""
    target: Any = importlib.import_module(module)
    for part in qualname.split("."):
        target = getattr(target, part)
    if type(target).__module__ == "disttune._core" and type(target).__name__ == "HitPath":
        target = target.fn
    return target


def describe(error: BaseException) -> str:
    """An error as a failure reason: disttune's own messages as they are, others with their type."""
    text = str(error)
    return text if text.startswith("disttune:") else f"{type(error).__name__}: {text}"


class _Worker:
    def __init__(self, device: Optional[tuple]) -> None:
        self._torch = sys.modules.get("torch")
        self._cuda = device is not None and device[0] == "cuda"
        if self._cuda:
            import torch

            self._torch = torch
            torch.cuda.set_device(device[1])
        self._runs: Optional[CandidateRuns] = None
        self._failure: Optional[str] = None
        self._pairs: list[tuple[Any, Any]] = []
        self._cpu_samples: list[float] = []
        self._flush: Any = None

    def begin(self, tuning: Tuning) -> None:
        fn = resolve_launcher(tuning.module, tuning.qualname)
        calls = [{**tuning.kwargs, **entry_from_text(text)} for text in tuning.candidates]
        reference_call = (
            {**tuning.kwargs, **entry_from_text(tuning.reference_entry)} if tuning.reference_entry else None
        )
        restorer = InputRestorer(fn, tuning.restored, tuning.args, tuning.kwargs) if tuning.restored else None
        self._runs = launcher_runs(fn, tuning.args, tuning.kwargs, calls, restorer, tuning.check, reference_call)

    def check(self, candidate: int) -> None:
        self._failure = None
        self._pairs, self._cpu_samples = [], []
        self._runs.check_once(candidate)
        if self._cuda:
            self._torch.cuda.synchronize()

    def run(self, candidate: int, timed: bool, flush_l2: bool) -> None:
        if self._failure is not None:
            return
        try:
            self._runs.restore()
            if not timed:
                self._runs.call(candidate)
            elif self._cuda:
                if flush_l2:
                    self._flush_l2()
                start = self._torch.cuda.Event(enable_timing=True)
                stop = self._torch.cuda.Event(enable_timing=True)
                start.record()
                self._runs.call(candidate)
                stop.record()
                self._pairs.append((start, stop))
            else:
                began = time.perf_counter_ns()
                self._runs.call(candidate)
                self._cpu_samples.append((time.perf_counter_ns() - began) / 1e6)
        except Exception as error:  # the candidate fails; reported at the collect
            self._failure = describe(error)

    def collect(self) -> list[float]:
        pairs, self._pairs = self._pairs, []
        samples, self._cpu_samples = self._cpu_samples, []
        if self._cuda and pairs:
            pairs[-1][1].synchronize()
            samples = [float(start.elapsed_time(stop)) for start, stop in pairs]
        if self._failure is not None:
            raise RuntimeError(self._failure)
        return samples

    def _flush_l2(self) -> None:
        if self._flush is None:
            self._flush = self._torch.empty(_FLUSH_BYTES, dtype=self._torch.int8, device="cuda")
        self._flush.zero_()

    def device_lost(self) -> bool:
        """After an error: true if the CUDA context is no longer usable (a sticky error)."""
        if not self._cuda:
            return False
        try:
            self._torch.cuda.synchronize()
            return False
        except Exception:
            return True


def main(connection: Any, device: Optional[tuple]) -> None:
    """The worker's loop (the target of the spawned process)."""
    # Ctrl-C in a terminal reaches the whole process group: the caller decides, not the worker.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # A group of its own: the caller kills it as a whole; kill_strays() ends a tuning's leftovers.
    _process_group.lead_own_group()
    me = os.getpid()
    worker = _Worker(device)
    keep = set(_process_group.members(os.getpgid(0)))
    connection.send(("ready",))
    while True:
        try:
            message = connection.recv()
        except EOFError:
            return  # the caller is gone
        kind = message[0]
        if kind == "run":
            worker.run(message[1], message[2], message[3])
            if os.getpid() != me:
                os._exit(0)  # a process the config forked never acts as the worker
            continue
        if kind == "end":
            worker._runs = None
            _process_group.kill_strays(keep)  # what the tuning's configs left running
            continue
        try:
            if kind == "tuning":
                worker.begin(message[1])
                keep = set(_process_group.members(os.getpgid(0)))  # the launcher's module's own
                reply: tuple = ("ok",)
            elif kind == "check":
                worker.check(message[1])
                reply = ("ok",)
            elif kind == "collect":
                reply = ("samples", worker.collect())
            else:
                reply = ("error", f"unknown message {kind!r}", False)
        except Exception as error:
            lost = worker.device_lost()
            suffix = " (the device context is lost; the worker restarts)" if lost else ""
            reply = ("error", describe(error) + suffix, lost)
        if os.getpid() != me:
            os._exit(0)
        connection.send(reply)
        if reply[0] == "error" and reply[2]:
            sys.exit(DEVICE_LOST_EXIT)
