"""Compiles the candidate configs of a triton.autotune kernel concurrently, before any is timed."""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any


def compile_configs(kernel: Any, configs: list, args: tuple, kwargs: dict, threads: int) -> None:
    """Compiles `configs` of the Autotuner `kernel` for one launch (`args`, `kwargs`) on
    `threads` threads (Triton's AsyncCompileMode), so that timing never waits on a compile
    (each config's pre_hook runs before its compile is queued, as before its launch);
    a config that fails to compile reports its error when it is launched. Does nothing in
    Triton's interpreter or on a Triton without asynchronous compilation."""
    knobs = sys.modules.get("triton.knobs")
    if knobs is not None and knobs.runtime.interpret:
        return
    try:
        from triton.runtime._async_compile import AsyncCompileMode
    except ImportError:  # a Triton without async compilation compiles at first launch
        return
    named = dict(zip(kernel.arg_names, args))
    with ThreadPoolExecutor(max_workers=threads) as pool:
        with AsyncCompileMode(pool, ignore_errors=True):
            for config in configs:
                current = dict(kwargs, **config.all_kwargs())
                current["warmup"] = True
                try:
                    if config.pre_hook is not None:
                        # It may set what the compile specialises on (e.g. a TMA descriptor's
                        # block shape); the specialisation is read before the compile is queued.
                        config.pre_hook({**named, **current})
                    kernel.fn.run(*args, **current)
                except Exception:  # reported by the candidate's launch
                    pass
