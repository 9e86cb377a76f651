"""Compiles the candidate configs of a Triton autotuner concurrently, on the process's one compile
pool: in the background, each awaited before its config's first launch (contextual tuning), or
as the engine's prepare names them (the drop-in)."""

from __future__ import annotations

import sys
import threading
import time
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from typing import Any, Callable, Optional

from disttune import _core, _prepare, _resources, _triton_setup, _triton_stages

_pool_lock = threading.Lock()
_pool: Optional[ThreadPoolExecutor] = None
_pool_threads = 0


def process_pool() -> ThreadPoolExecutor:
    """The one compile pool of the process (TRITON_DIST_AUTOTUNE_COMPILE_THREADS threads, read
    when it is made, at first use): every drop-in kernel queues its compiles there, so concurrent
    tunings share the cores instead of each starting threads of its own."""
    global _pool, _pool_threads
    with _pool_lock:
        if _pool is None:
            _pool_threads = _core.compile_threads_setting()
            _pool = ThreadPoolExecutor(max_workers=_pool_threads, thread_name_prefix="disttune-compile")
        return _pool


def process_pool_threads() -> int:
    """The threads of the process's compile pool (process_pool()): what the engine tells the
    strategy a drop-in tuning compiles on."""
    process_pool()
    return _pool_threads


class Cancellable:
    """An executor over `pool` that keeps what it queued, so that cancel() drops the compiles
    not started yet (a contextual call's, when the call ends) and leaves the pool to others."""

    def __init__(self, pool: Executor) -> None:
        self._pool = pool
        self._queued: list[Future] = []

    def submit(self, compile_fn: Callable[[], Any]) -> Future:
        future = self._pool.submit(compile_fn)
        self._queued.append(future)
        return future

    def cancel(self) -> None:
        for future in self._queued:
            future.cancel()  # a compile that runs finishes; one not started is dropped
        self._queued.clear()


class _Timed:
    """The executor Triton's AsyncCompileMode is given: runs each compile on `pool`, its stages
    after TTGIR shared through `memo`, and reports (start, end) of it, in time.perf_counter()
    seconds, to `done`."""

    def __init__(self, pool: Executor, memo: _triton_stages.StageMemo,
                 done: Callable[[float, float], None]) -> None:
        self._pool = pool
        self._memo = memo
        self._done = done

    def submit(self, compile_fn: Callable[[], Any]) -> Future:
        def timed() -> Any:
            began = time.perf_counter()
            try:
                return _triton_stages.within(self._memo, compile_fn)
            finally:
                self._done(began, time.perf_counter())

        return self._pool.submit(timed)


def _async_compile() -> Any:
    """Triton's async compile module, or None in its interpreter or on a Triton without it
    (the configs then compile at their first launch)."""
    knobs = sys.modules.get("triton.knobs")
    if knobs is not None and knobs.runtime.interpret:
        return None
    try:
        from triton.runtime import _async_compile
    except ImportError:
        return None
    return _async_compile


def start_compiles(
    kernel: Any,
    configs: list,
    args: tuple,
    kwargs: dict,
    executor: Any,
    indices: Optional[list[int]] = None,
) -> dict[int, Any]:
    """Queues the compile of configs[i] for every i of `indices` (default: all), in order, for
    one launch (`args`, `kwargs`) of the Autotuner `kernel` on `executor` (Triton's
    AsyncCompileMode), and returns at once: {index: Triton FutureKernel, or the compiled
    kernel when Triton's cache already held it}; a FutureKernel's result() finalizes the compile
    into the kernel's cache (None if it failed: the config's launch then reports the error).
    Each config's pre_hook runs before its compile is queued, as before its launch. Nothing
    in Triton's interpreter or on a Triton without asynchronous compilation."""
    async_compile = _async_compile()
    if async_compile is None:
        return {}
    _triton_setup.wait()  # else the first launch computes Triton's cache key here, serially
    named = dict(zip(kernel.arg_names, args))
    compiles: dict[int, Any] = {}
    mode = async_compile.AsyncCompileMode(executor, ignore_errors=True)
    mode.__enter__()
    try:
        for index in range(len(configs)) if indices is None else indices:
            config = configs[index]
            current = dict(kwargs, **config.all_kwargs())
            current["warmup"] = True
            try:
                if config.pre_hook is not None:
                    # It may set what the compile specialises on (e.g. a TMA descriptor's
                    # block shape); the specialisation is read before the compile is queued.
                    config.pre_hook({**named, **current})
                compiles[index] = kernel.fn.run(*args, **current)
            except Exception:  # reported by the candidate's launch
                continue
    finally:
        # Leaves the mode without its __exit__, which would wait for every compile.
        async_compile.active_mode.set(None)
    return compiles


def _predicted_length(config: Any) -> tuple:
    """What orders a config's compile before it runs, longest first: fewer warps make longer
    compiles (each thread's share of the tile is larger: measured on fla's kernels,
    docs/triton-dropin.md), then a larger tile (the product of the integer meta-parameters)
    times num_stages."""
    tile = 1
    for value in config.kwargs.values():
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            tile *= value
    return (config.num_warps or 0, -tile * (config.num_stages or 1))


def submission_order(configs: list, indices: list[int]) -> list[int]:
    """The order in which a tuning queues the compiles of `indices`: predicted longest first
    (the last compiles then are short ones, and the tuning waits less for a long one started
    late), each config that differs from one queued before it only in num_stages after the
    others (it may reach that one's TTGIR and take its later stages: disttune._triton_stages)."""
    longest_first = sorted(indices, key=lambda index: (_predicted_length(configs[index]), index))
    return _triton_stages.stage_variants_last(configs, longest_first)


class KernelCompiles:
    """The engine's prepare(now, ahead) for one tuning of a Triton autotuner: queues the
    compiles of `now`, then of `ahead`, on the process's compile pool and returns once those of
    `now` are done, one reason per entry ('' when ready). With `longest_first` (a strategy that
    compiles every config: converge, exhaustive) each lot is queued in `submission_order`;
    without it (the search: `ahead` holds its round's later picks and then its guesses, in
    the order it wants them) as the engine names them. What its configs have in common
    compiles once (`stages_reused` counts the steps taken from another config's compile:
    disttune._triton_stages). A config known or found out of resources (`unrunnable`, by its
    text and the call's dtypes) fails without a launch; a config error in the compile
    (`config_errors`) fails its config; any other compile error is left to the config's
    launch, which raises it. What compiled, when, and
    how long prepare waited are kept (`events`, `waited_s`); `prepared` tells the engine which
    compiles ended and how long each took (0 s, not known, for one Triton's cache held)."""

    def __init__(self, kernel: Any, configs: list, args: tuple, kwargs: dict,
                 unrunnable: _resources.CallUnrunnable, config_errors: tuple, longest_first: bool) -> None:
        self._kernel = kernel
        self._configs = configs
        self._args = args
        self._kwargs = kwargs
        self._unrunnable = unrunnable
        self._config_errors = config_errors
        self._longest_first = longest_first
        self._compiles: dict[int, Any] = {}
        self._started: set[int] = set()
        self._lock = threading.Lock()
        self.events: list[tuple[int, float, float]] = []  # (config index, start, end), perf_counter s
        self.waited_s = 0.0
        self._compile_seconds = _prepare.CompileSeconds(unrunnable)
        self._memo = _triton_stages.StageMemo()
        _triton_stages.install()

    @property
    def stages_reused(self) -> int:
        return self._memo.reused

    def _start(self, indices: list[int]) -> None:
        new = [i for i in indices if i not in self._started and self._unrunnable.reason(i) is None]
        self._started.update(new)
        for index in submission_order(self._configs, new) if self._longest_first else new:
            executor = _Timed(process_pool(), self._memo,
                              lambda began, ended, index=index: self._note(index, began, ended))
            started = start_compiles(self._kernel, self._configs, self._args, self._kwargs, executor, [index])
            for compiled in started.values():
                if not hasattr(compiled, "result"):  # Triton's cache held it: prepared, no compile timed
                    self._compile_seconds.note(index, 0.0)
            self._compiles.update(started)

    def _note(self, index: int, began: float, ended: float) -> None:
        with self._lock:
            self.events.append((index, began, ended))
        self._compile_seconds.note(index, ended - began)

    def _outcome(self, index: int) -> str:
        known = self._unrunnable.reason(index)
        if known is not None:
            return known
        compiling = self._compiles.pop(index, None)
        if compiling is None:
            return ""  # compiles at its launch (the interpreter, or its compile did not start)
        compiled = compiling.result(ignore_errors=True) if hasattr(compiling, "result") else compiling
        if compiled is None:
            error = compiling.future.exception()
            return f"{type(error).__name__}: {error}" if isinstance(error, self._config_errors) else ""
        return self._unrunnable.judge(index, compiled) or ""

    def prepare(self, now: list[int], ahead: list[int]) -> list[str]:
        began = time.perf_counter()
        self._start(now)
        self._start(ahead)
        reasons = [self._outcome(index) for index in now]
        self.waited_s += time.perf_counter() - began
        return reasons

    def prepared(self, candidate: int) -> Optional[float]:
        """The engine's TuningRequest::prepared: CompileSeconds.prepared."""
        return self._compile_seconds.prepared(candidate)

    def close(self) -> None:
        """Drops the compiles not yet started (those running finish on their own)."""
        for compiling in self._compiles.values():
            future = getattr(compiling, "future", None)
            if future is not None:
                future.cancel()
        self._compiles.clear()
