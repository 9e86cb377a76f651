"""Function-level prepare (the engine's TuningRequest::prepare): the user's precompile call for
each candidate in a thread pool, started ahead of the runs, so that measurement starts with
the first compiled candidate while the pool compiles the rest."""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_for
from typing import Any, Callable, Optional

from disttune import _resources, _triton_setup


def rank_cores(local_rank: int, local_size: int) -> Optional[list[int]]:
    """This process's CPU cores cut into `local_size` disjoint slices, slice `local_rank`:
    ranks on one host then compile on separate cores, as on separate hosts. None if there
    is one rank here or fewer cores than ranks."""
    cores = sorted(os.sched_getaffinity(0))
    if local_size <= 1 or len(cores) < local_size or not 0 <= local_rank < local_size:
        return None
    per_rank = len(cores) // local_size
    return cores[local_rank * per_rank : (local_rank + 1) * per_rank]


class CompileSeconds:
    """Each ended compile's seconds, noted by the compile threads, and what the engine's
    TuningRequest::prepared reads of them without waiting: the search shapes its rounds by the
    compile cost (docs/strategies.md). Shared by autotune(precompile=) and the Triton drop-in."""

    def __init__(self, unrunnable: _resources.CallUnrunnable) -> None:
        self._unrunnable = unrunnable
        self._seconds: dict[int, float] = {}
        self._lock = threading.Lock()

    def note(self, candidate: int, seconds: float) -> None:
        with self._lock:
            self._seconds[candidate] = seconds

    def prepared(self, candidate: int) -> Optional[float]:
        """None while the candidate's compile is queued or running, or was never asked for;
        else the seconds it took (0.0 for a config known not to run, which fails without a
        compile)."""
        if self._unrunnable.reason(candidate) is not None:
            return 0.0
        with self._lock:
            return self._seconds.get(candidate)


class CompilePipeline:
    """prepare(now, ahead) for one tuning: starts compiling every candidate of `now`, then of
    `ahead`, in that order, on `threads` threads (pinned to `cores` if given); returns when
    `now` is compiled, one reason per entry (empty: ready). A compile that raised, a kernel
    Triton finds out of resources, or a compile running longer than `timeout_s` fails its
    candidate; out-of-resources configs are remembered in `unrunnable` (by their config text
    and the call's dtypes) and later fail without a compile. A timed-out compile
    keeps its thread until it returns (a thread cannot be stopped); its result is unused."""

    def __init__(
        self,
        compile_one: Callable[[int], Any],
        threads: int,
        timeout_s: Optional[float],
        cores: Optional[list[int]],
        unrunnable: _resources.CallUnrunnable,
    ) -> None:
        self._compile_one = compile_one
        self._threads = threads
        self._timeout_s = timeout_s
        self._cores = cores
        self._unrunnable = unrunnable
        self._pool: Optional[ThreadPoolExecutor] = None
        self._futures: dict[int, Future] = {}
        self._started: dict[int, float] = {}
        self._lock = threading.Lock()
        self._compile_seconds = CompileSeconds(unrunnable)
        # (candidate, start, end, thread name) of each compile, as it ends: time.perf_counter().
        self.timeline: list[tuple[int, float, float, str]] = []

    def _pin(self) -> None:
        if self._cores:
            os.sched_setaffinity(0, self._cores)  # this thread and the compilers it starts

    def _compile(self, candidate: int) -> Any:
        _triton_setup.wait()  # once per process; a compile's time and timeout start after it
        began = time.perf_counter()
        with self._lock:
            self._started[candidate] = time.monotonic()
        try:
            return self._compile_one(candidate)
        finally:
            ended = time.perf_counter()
            with self._lock:
                self.timeline.append((candidate, began, ended, threading.current_thread().name))
            self._compile_seconds.note(candidate, ended - began)

    def _start(self, candidate: int) -> None:
        if candidate in self._futures or self._unrunnable.reason(candidate) is not None:
            return
        if self._pool is None:
            self._pool = ThreadPoolExecutor(
                max_workers=self._threads, thread_name_prefix="disttune-compile", initializer=self._pin
            )
        self._futures[candidate] = self._pool.submit(self._compile, candidate)

    def _wait(self, candidate: int) -> Optional[str]:
        """Waits for the candidate's compile; the reason it timed out, or None once done."""
        future = self._futures[candidate]
        if self._timeout_s is None:
            wait_for([future])
            return None
        while not future.done():
            with self._lock:
                started = self._started.get(candidate)
            if started is None:  # still queued: its time starts when a thread takes it
                wait_for([future], timeout=0.01)
                continue
            left = started + self._timeout_s - time.monotonic()
            if left <= 0:
                return f"compile timed out after {self._timeout_s:g} s (compile_timeout_s)"
            wait_for([future], timeout=left)
        return None

    def _outcome(self, candidate: int) -> str:
        known = self._unrunnable.reason(candidate)
        if known is not None:
            return known
        late = self._wait(candidate)
        if late is not None:
            return late
        future = self._futures[candidate]
        error = future.exception()
        if error is not None:
            return f"precompile failed: {error!r}"
        return self._unrunnable.judge(candidate, future.result()) or ""

    def prepare(self, now: list[int], ahead: list[int]) -> list[str]:
        for candidate in now:
            self._start(candidate)
        for candidate in ahead:
            self._start(candidate)
        return [self._outcome(candidate) for candidate in now]

    def prepared(self, candidate: int) -> Optional[float]:
        """The engine's TuningRequest::prepared: CompileSeconds.prepared, and a compile running
        longer than `timeout_s` as ended (its prepare fails it at once), so that a round that
        waits for one more compile (docs/strategies.md) never waits past the timeout."""
        seconds = self._compile_seconds.prepared(candidate)
        if seconds is not None or self._timeout_s is None:
            return seconds
        with self._lock:
            started = self._started.get(candidate)
        if started is not None and time.monotonic() - started >= self._timeout_s:
            return self._timeout_s
        return None

    def close(self) -> None:
        """Drops the compiles not started; those running finish on their own."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
