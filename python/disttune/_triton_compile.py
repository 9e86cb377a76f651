"""Compiles the candidate configs of a triton.autotune kernel concurrently: in the background,
each awaited before its config's first launch, or all of them before any is timed."""

from __future__ import annotations

import sys
from concurrent.futures import Executor, ThreadPoolExecutor
from typing import Any, Callable


def start_compiles(
    kernel: Any,
    configs: list,
    args: tuple,
    kwargs: dict,
    pool: Executor,
    skip: Callable[[int], bool] = lambda index: False,
) -> dict[int, Any]:
    """Queues the compile of every config of the Autotuner `kernel` for one launch (`args`,
    `kwargs`) not skipped, in order, on `pool` (Triton's AsyncCompileMode), and returns at
    once: {config index: Triton FutureKernel}; its result() finalizes the compile into the
    kernel's cache (None if it failed: the config's launch then reports the error). Each
    config's pre_hook runs before its compile is queued, as before its launch. Nothing in
    Triton's interpreter or on a Triton without asynchronous compilation."""
    knobs = sys.modules.get("triton.knobs")
    if knobs is not None and knobs.runtime.interpret:
        return {}
    try:
        from triton.runtime import _async_compile
    except ImportError:  # a Triton without async compilation compiles at first launch
        return {}
    named = dict(zip(kernel.arg_names, args))
    compiles: dict[int, Any] = {}
    mode = _async_compile.AsyncCompileMode(pool, ignore_errors=True)
    mode.__enter__()
    try:
        for index, config in enumerate(configs):
            if skip(index):
                continue
            current = dict(kwargs, **config.all_kwargs())
            current["warmup"] = True
            try:
                if config.pre_hook is not None:
                    # It may set what the compile specialises on (e.g. a TMA descriptor's
                    # block shape); the specialisation is read before the compile is queued.
                    config.pre_hook({**named, **current})
                compiling = kernel.fn.run(*args, **current)
            except Exception:  # reported by the candidate's launch
                continue
            if hasattr(compiling, "result"):
                compiles[index] = compiling
    finally:
        # Leaves the mode without its __exit__, which would wait for every compile.
        _async_compile.active_mode.set(None)
    return compiles


def compile_configs(kernel: Any, configs: list, args: tuple, kwargs: dict, threads: int) -> None:
    """Compiles `configs` as start_compiles() does, on `threads` threads, and returns once
    every compile ended, so that timing never waits on a compile."""
    with ThreadPoolExecutor(max_workers=threads) as pool:
        for compiling in start_compiles(kernel, configs, args, kwargs, pool).values():
            compiling.result(ignore_errors=True)
