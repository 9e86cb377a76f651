"""Isolated runs (isolate=True): one persistent worker process per device runs and times the
candidates; a crash or a time-out fails one candidate, and the worker is started again.

The engine's round protocol is unchanged: `run(c)` sends one run to the worker (the first run of
a candidate waits for its check), and `WorkerTimer.collect()` returns the samples the worker
timed with its own device events. Arguments travel by multiprocessing (torch's reductions: CPU
tensors in shared memory, CUDA tensors by CUDA IPC); the launcher by its import path; configs as
canonical JSON.
"""

from __future__ import annotations

import atexit
import multiprocessing
import signal
import sys
import threading
from typing import Any, Callable, Hashable, Optional

from disttune import _core, _isolation_worker, _process_group
from disttune._isolation_worker import Tuning

# How long a new worker may take to start (spawn, imports of disttune and of the launcher's
# module) before its candidate fails.
_START_TIMEOUT_S = 120.0

DEFAULT_CANDIDATE_TIMEOUT_S = 60.0


def import_path(fn: Callable, what: str = "the launcher") -> tuple[str, str]:
    """(module, qualname) by which a worker imports `fn`; ValueError if it cannot."""
    module, qualname = getattr(fn, "__module__", None), getattr(fn, "__qualname__", "")
    where = f"{module}.{qualname}"
    if not module or "<" in qualname:
        raise ValueError(
            f"disttune: isolate=True runs {what} '{getattr(fn, '__name__', fn)}' in a worker process, "
            f"which imports it by its path; '{where}' is not a top-level function of an importable module"
        )
    if module == "__main__" and not getattr(sys.modules.get("__main__"), "__file__", None):
        raise ValueError(
            f"disttune: isolate=True cannot import '{fn.__name__}' from an interactive __main__; "
            "define it in a module (or a script file)"
        )
    return module, qualname


def _context() -> Any:
    if "torch" in sys.modules:
        import torch.multiprocessing  # registers torch's tensor reductions (shared memory, CUDA IPC)

        return torch.multiprocessing.get_context("spawn")
    return multiprocessing.get_context("spawn")


def _exit_reason(code: Optional[int]) -> str:
    if code is None:
        return "the worker stopped answering"
    if code < 0:
        try:
            return f"crashed (signal {signal.Signals(-code).name})"
        except ValueError:
            return f"crashed (signal {-code})"
    return f"the worker exited with status {code}"


class WorkerError(RuntimeError):
    """A candidate failed in the worker (its error, a crash or a time-out)."""


class Worker:
    """The persistent worker process of one device; started on first use and after a crash."""

    def __init__(self, device: Optional[tuple]) -> None:
        self.device = device
        self.lock = threading.Lock()  # one tuning at a time
        self._process: Any = None
        self._connection: Any = None

    def alive(self) -> bool:
        return self._process is not None and self._process.is_alive()

    def start(self) -> None:
        context = _context()
        ours, theirs = context.Pipe()
        process = context.Process(
            target=_isolation_worker.main, args=(theirs, self.device), daemon=True, name="disttune-worker"
        )
        process.start()
        theirs.close()
        self._process, self._connection = process, ours
        reply = self.receive(_START_TIMEOUT_S, "starting the worker")
        if reply[0] != "ready":
            self.stop()
            raise WorkerError(f"disttune: the worker did not start: {reply!r}")

    def send(self, message: tuple) -> None:
        if self._connection is None:
            raise WorkerError("disttune: the worker is not running")
        try:
            self._connection.send(message)
        except (BrokenPipeError, ConnectionResetError, EOFError) as error:
            raise self._lost() from error

    def receive(self, timeout_s: float, doing: str) -> tuple:
        try:
            ready = self._connection.poll(timeout_s)
            if ready:
                return self._connection.recv()
        except (EOFError, ConnectionResetError, OSError) as error:
            raise self._lost() from error
        self.stop()
        raise WorkerError(f"disttune: timed out after {timeout_s:g} s ({doing}); the worker is restarted")

    def _lost(self) -> WorkerError:
        process = self._process
        process.join(timeout=10)  # it may still be exiting: its status says how it ended
        code = process.exitcode
        self.stop()
        return WorkerError(f"disttune: {_exit_reason(code)}")

    def check_processes(self) -> None:
        """After a candidate's runs: a worker group over the bound is killed, failing the candidate."""
        group = self._process.pid
        if len(_process_group.members(group)) > _process_group.MAX_WORKER_PROCESSES:
            self.stop()
            raise WorkerError(
                f"disttune: the config started more than {_process_group.MAX_WORKER_PROCESSES} "
                "processes; they are killed and the worker is restarted"
            )

    def stop(self) -> None:
        """Ends the process and every process of its group (what its configs started), and forgets it."""
        process, connection = self._process, self._connection
        self._process = self._connection = None
        if connection is not None:
            connection.close()
        if process is not None:
            _process_group.kill_group(process.pid)  # the worker leads its group
            if process.is_alive():
                process.kill()  # killed before it made its group
            process.join(timeout=10)


_workers: dict[Hashable, Worker] = {}
_workers_lock = threading.Lock()


def worker_for(device: Optional[tuple]) -> Worker:
    """The process-wide worker of `device` (None: the CPU)."""
    with _workers_lock:
        worker = _workers.get(device)
        if worker is None:
            worker = _workers[device] = Worker(device)
        return worker


@atexit.register
def _stop_workers() -> None:
    for worker in list(_workers.values()):
        worker.stop()


class IsolatedRuns:
    """One tuning's runs in a worker: run(c) for the engine, and the samples for WorkerTimer."""

    def __init__(self, worker: Worker, tuning: Tuning, timeout_s: float, flush_l2: bool) -> None:
        self._worker = worker
        self._tuning = tuning
        self._timeout_s = timeout_s
        self._flush_l2 = flush_l2
        self._sent_tuning = False
        self._candidate: Optional[int] = None
        self._failed = False
        self.timed = False  # set by the timer around a timed run

    def _request(self, message: tuple, doing: str, timeout_s: Optional[float] = None) -> tuple:
        try:
            self._worker.send(message)
            reply = self._worker.receive(timeout_s or self._timeout_s, doing)
        except WorkerError:
            raise
        except BaseException:
            # An interrupt, or arguments that do not pickle: the reply may come later, so a
            # new worker answers the next request.
            self._worker.stop()
            raise
        if reply[0] == "error":
            if reply[2]:
                self._worker.stop()  # it exits: its device context is lost
            raise WorkerError(reply[1])
        if message[0] in ("check", "collect"):
            self._worker.check_processes()
        return reply

    def _open(self, candidate: int) -> None:
        self._candidate, self._failed = candidate, True
        if not self._worker.alive():
            self._sent_tuning = False
            self._worker.start()
        if not self._sent_tuning:
            # Importing the launcher's module is part of starting the worker.
            self._request(("tuning", self._tuning), "importing the launcher", _START_TIMEOUT_S)
            self._sent_tuning = True
        self._request(("check", candidate), "the candidate's first run")
        self._failed = False

    def run(self, candidate: int) -> None:
        if candidate != self._candidate:
            self._open(candidate)
        try:
            self._worker.send(("run", candidate, self.timed, self._flush_l2))
        except WorkerError:
            self._failed = True
            raise

    def collect(self) -> list[float]:
        if self._failed or self._candidate is None:
            return []
        reply = self._request(("collect", self._candidate), "the candidate's runs")
        return list(reply[1])

    def close(self) -> None:
        """Lets the worker drop the tuning's arguments."""
        if self._worker.alive():
            try:
                self._worker.send(("end",))
            except WorkerError:
                pass  # it died after the last candidate: the next tuning starts a new one


def worker_timer_for(device: Any, flush_l2: bool, graph_runs: int) -> tuple[Hashable, "WorkerTimer"]:
    """(identity, timer) of isolated runs on `device` (a torch device or None: the CPU). The
    hardware facts are those of the in-process timer, so records are shared with in-process tuning."""
    if graph_runs:
        raise ValueError("disttune: graph_runs is not available with isolate=True (the worker times single runs)")
    if device is None or device.type == "cpu":
        return ("isolated", None), WorkerTimer("isolated-cpu", "{}", "{}", False, None)
    if device.type != "cuda":
        raise ValueError(f"disttune: isolate=True supports CPU and CUDA launchers, not '{device.type}'")
    torch = sys.modules["torch"]
    index = device.index if device.index is not None else torch.cuda.current_device()
    facts = _core.CudaTimer(flush_l2=flush_l2)
    timer = WorkerTimer("isolated-cuda-events", facts.hardware_json(), facts.deps_json(), flush_l2, ("cuda", index))
    return ("isolated", ("cuda", index)), timer


class WorkerTimer(_core.Timer):
    """The engine's timer in isolated mode: its samples are those the worker measured (device
    events in the worker for CUDA, its CPU clock otherwise). `runs` is the current tuning's."""

    def __init__(
        self, name: str, hardware_json: str, deps_json: str, flush_l2: bool, device: Optional[tuple]
    ) -> None:
        super().__init__(name, hardware_json, deps_json)
        self._flush_l2 = flush_l2
        self.device = device  # the worker's device: None (CPU) or ("cuda", index)
        self.runs: Optional[IsolatedRuns] = None

    def flushes_l2(self) -> bool:
        return self._flush_l2

    def holds_pairs_across_candidates(self) -> bool:
        # The worker times one candidate at a time (its check starts the next one afresh).
        return False

    def start(self) -> None:
        self.runs.timed = True

    def stop(self) -> None:
        self.runs.timed = False

    def collect(self) -> list[float]:
        return self.runs.collect()


def resolve(
    tuner: Any,
    timer: WorkerTimer,
    tuning: Tuning,
    timeout_s: float,
    prepare: Optional[Callable[[list[int], list[int]], list[str]]],
    key_text: str,
    verbose: bool,
    communicator: Any,
    pruned: list[str],
    prepared: Optional[Callable[[int], Optional[float]]],
    compile_threads: int,
) -> Any:
    """tuner.resolve() with every candidate run and timed in the worker of `timer.device`;
    `prepare(now, ahead)`, if given, is the engine's prepare hook, run in this process (precompile),
    on `compile_threads` threads, and `prepared(i)` says which are compiled; `pruned`, the configs
    prune_fn removed, go into the report and record."""
    worker = worker_for(timer.device)
    with worker.lock:
        runs = IsolatedRuns(worker, tuning, timeout_s, timer.flushes_l2())
        timer.runs = runs
        try:
            return tuner.resolve(key_text, tuning.candidates, runs.run, verbose, communicator, prepare, pruned, prepared,
                                 compile_threads=compile_threads)
        finally:
            timer.runs = None
            runs.close()
