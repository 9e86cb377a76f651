"""Triton compiles in worker processes: a config's compile runs in a spawned worker, which writes
Triton's file cache, and the process's own compile of it then finds it there. Triton's compiler
holds the GIL through its MLIR and LLVM passes, so threads alone compile a few configs at a
time, whatever the cores; workers compile one per core."""

from __future__ import annotations

import importlib
import inspect
import multiprocessing
import os
import sys
import threading
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any, Callable, Optional

# The worker's record of the kernels it has found, by (module, qualified name).
_found: dict[tuple[str, str], Any] = {}


def _start_worker(path: list[str], modules: list[str]) -> None:
    """A worker's start: the parent's import path, and the modules it had imported that every
    compile needs (triton, and torch when the program uses it), imported once here."""
    sys.path[:] = path
    for name in modules:
        importlib.import_module(name)


def _ready() -> int:
    return os.getpid()


def _jit_function(module: str, qualname: str) -> Any:
    """The @triton.jit function `module`.`qualname` in this worker: the module's attribute of
    that name, through any autotuner or heuristics wrapped around it (their `fn`)."""
    found = _found.get((module, qualname))
    if found is not None:
        return found
    from triton.runtime.jit import JITFunction

    if "<locals>" in qualname:
        raise LookupError(f"{module}.{qualname} is defined inside a function")
    found = importlib.import_module(module)
    for part in qualname.split("."):
        found = getattr(found, part)
    while not isinstance(found, JITFunction):
        found = getattr(found, "fn")
    _found[(module, qualname)] = found
    return found


def compile_in_worker(module: str, qualname: str, cache_key: str, signature: dict, constants: dict,
                      attrs: dict, target: Any, options: dict, env_vars: Any, cache_dir: str) -> None:
    """Compiles one specialisation of the kernel `module`.`qualname` into Triton's file cache
    at `cache_dir`; a LookupError when this worker's kernel of that name is not the caller's
    (its source differs: `cache_key`)."""
    import triton
    from triton import knobs
    from triton.compiler import ASTSource

    fn = _jit_function(module, qualname)
    if fn.cache_key != cache_key:
        raise LookupError(f"{module}.{qualname} in a worker is not the kernel the program runs")
    knobs.cache.dir = cache_dir
    source = ASTSource(fn, signature, constants, attrs)
    triton.compile(source, target=target, options=options, _env_vars=env_vars)


def compile_request(compile_fn: Callable[[], Any]) -> Optional[tuple]:
    """The arguments of compile_in_worker for the compile Triton's JIT queued as `compile_fn`
    (its closure holds the source, target and options), or None when a worker cannot find the
    kernel: defined in the program's main script or inside a function."""
    try:
        held = inspect.getclosurevars(compile_fn).nonlocals
        source, target, options = held["src"], held["target"], held["options"]
        fn = source.fn
        module, qualname = fn.fn.__module__, fn.fn.__qualname__
    except (KeyError, AttributeError, TypeError):
        return None  # not the closure this Triton's JIT queues
    if module == "__main__" or "<locals>" in qualname:
        return None
    from triton import knobs

    return (module, qualname, fn.cache_key, source.signature, source.constants, source.attrs, target,
            options.__dict__, held.get("env_vars"), knobs.cache.dir)


def settle(in_worker: Future) -> None:
    """Waits for a worker's compile, whatever its outcome: the program's own compile that
    follows finds the kernel in Triton's cache, or raises the compile's error itself."""
    try:
        in_worker.result()
    except Exception:  # noqa: BLE001 (any failure is the program's compile's to report)
        pass


class CompileWorkers:
    """`count` spawned worker processes that compile Triton kernels into its file cache. They
    start at once in the background; until the first is up, compiles stay in the program's
    threads (`submit` answers None)."""

    def __init__(self, count: int) -> None:
        modules = [name for name in ("torch", "triton") if name in sys.modules]
        self._pool = ProcessPoolExecutor(count, mp_context=multiprocessing.get_context("spawn"),
                                         initializer=_start_worker, initargs=(list(sys.path), modules))
        self._up = threading.Event()
        self._lock = threading.Lock()
        self.compiled = 0  # compiles the workers finished
        for _ in range(count):
            self._pool.submit(_ready).add_done_callback(lambda _: self._up.set())

    def up(self, timeout: float) -> bool:
        """Whether a worker is up, waiting at most `timeout` seconds for one."""
        return self._up.wait(timeout)

    def _count(self, in_worker: Future) -> None:
        if not in_worker.cancelled() and in_worker.exception() is None:
            with self._lock:
                self.compiled += 1

    def submit(self, compile_fn: Callable[[], Any]) -> Optional[Future]:
        """Starts `compile_fn`'s compile in a worker; None when no worker is up yet or the
        kernel cannot be found there (the caller then compiles it itself)."""
        if not self._up.is_set():
            return None
        request = compile_request(compile_fn)
        if request is None:
            return None
        in_worker = self._pool.submit(compile_in_worker, *request)
        in_worker.add_done_callback(self._count)
        return in_worker

    def shutdown(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
