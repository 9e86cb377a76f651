"""The hook on ``triton.runtime.autotuner.Autotuner.run`` that lets the contextual engine
drive ``triton.autotune`` kernels. Inert (one attribute read) unless a contextual call is
active on the calling thread."""

from __future__ import annotations

import json
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Optional

from disttune import _core, _encoding, _resources, _triton_compile

_lock = threading.Lock()
_session: Optional["Session"] = None
_original_run = None

# The Triton versions whose Autotuner has the attributes this hook reads and sets (configs,
# nargs, arg_names, keys, prune_configs, pre_hook, post_hook, fn, base_fn, cache,
# best_config): from 3.2 up to, not including, 3.7. Tested with 3.6 (CI and the H200).
SUPPORTED_TRITON = ((3, 2), (3, 7))


def check_triton_version(
    version: str, feature: str = "contextual_autotune", supported_range: tuple = SUPPORTED_TRITON
) -> None:
    """EngineError (a DisttuneError and RuntimeError) naming `feature`, `version` and the
    supported range (low inclusive, high exclusive) if `version` is outside it."""
    low, high = supported_range
    supported = f">= {low[0]}.{low[1]}, < {high[0]}.{high[1]}"
    match = re.match(r"(\d+)\.(\d+)", version)
    if match is None or not low <= (int(match[1]), int(match[2])) < high:
        raise _core.EngineError(
            f"disttune: {feature} supports Triton {supported}; this process has "
            f"Triton {version}: install a supported Triton (pip install 'triton{supported.replace(' ', '')}')"
        )


def install() -> None:
    """Wraps Autotuner.run once per process (imports Triton; checks its version first)."""
    global _original_run
    if _original_run is not None:  # installed: no import, no lock (it is never uninstalled)
        return
    import triton
    from triton.runtime.autotuner import Autotuner

    with _lock:
        if _original_run is not None:
            return
        check_triton_version(str(getattr(triton, "__version__", "unknown")))
        _original_run = Autotuner.run

        def run(self, *args, **kwargs):
            session = _session
            if session is None or session.thread != threading.get_ident():
                return _original_run(self, *args, **kwargs)
            return session.launch(self, args, kwargs)

        run.__wrapped__ = _original_run
        run.__doc__ = _original_run.__doc__
        Autotuner.run = run


def active_on_this_thread() -> bool:
    """Whether a contextual call is running on the calling thread (it then drives every
    triton.autotune kernel launched there, drop-in ones included)."""
    session = _session
    return session is not None and session.thread == threading.get_ident()


def begin(session: "Session") -> None:
    """Makes `session` the active one; ContextualRunActive if another is active."""
    global _session
    with _lock:
        if _session is not None:
            raise _core.ContextualRunActive(
                f"disttune: contextual function '{session.function_name}' was called while "
                f"'{_session.function_name}' is running; contextual tuning allows one active "
                "call per process (no nesting, no concurrent use)"
            )
        _session = session


def end(session: "Session") -> None:
    """Ends `session` (the active one)."""
    global _session
    with _lock:
        if _session is session:
            _session = None


def _kept(kernel: Any, attribute: str, make: Any) -> Any:
    """What the kernel keeps under `attribute` across keys and calls, made by make() at first."""
    kept = getattr(kernel, attribute, None)
    if kept is None:
        kept = make()
        setattr(kernel, attribute, kept)
    return kept


def _state_of(kernel: Any) -> Any:
    """The kernel's engine state (its choices per key)."""
    return _kept(kernel, "_disttune_state", lambda: _core.KernelTuningState(kernel.base_fn.__name__))


def _config_text(kernel: Any, config: Any) -> str:
    """Canonical JSON of a kernel config: its place in kernel.configs and its encoding (its
    str() when it cannot be encoded, e.g. a config with a pre_hook)."""
    position = next((i for i, c in enumerate(kernel.configs) if c is config), -1)
    try:
        encoded = _encoding.encode(config, "config")
    except _encoding.EncodingError:
        encoded = str(config)
    return _core.canonical_json(json.dumps({"index": position, "config": encoded}))


def key_text(key: tuple) -> str:
    try:
        return _encoding.value_text(key)
    except _encoding.EncodingError:
        return _core.canonical_json(json.dumps([str(part) for part in key]))


def _triton_key(kernel: Any, args: tuple, kwargs: dict) -> tuple:
    """The key Autotuner.run uses for its cache: the `key` arguments and every argument's dtype."""
    all_args = {**kernel.nargs, **kwargs}
    named = {k: v for k, v in all_args.items() if k in kernel.arg_names}
    key = [named[name] for name in kernel.keys if name in named]
    for value in named.values():
        if hasattr(value, "dtype"):
            key.append(str(value.dtype))
    return tuple(key)


def _unrunnable_of(kernel: Any) -> _resources.Unrunnable:
    """The kernel's configs found out of resources."""
    return _kept(kernel, "_disttune_unrunnable", _resources.Unrunnable)


class _KernelKey:
    """What contextual calls know of one kernel and key: its pruned configs and their texts,
    their compiles while they are tuned, and the engine's choice among them while the
    kernel's state says it holds (its epoch is unchanged)."""

    def __init__(self, kernel: Any, key: tuple, args: tuple, kwargs: dict) -> None:
        self.kernel = kernel
        self.key = key
        self.configs = kernel.prune_configs(kwargs)
        self.texts = [_config_text(kernel, config) for config in self.configs]
        self.launch_kwargs = [config.all_kwargs() for config in self.configs]  # all_kwargs(), made once
        self.candidates = _core.CandidateTexts(self.texts)
        self.key_text = key_text(key)
        self.state = _state_of(kernel)
        self.unrunnable = _unrunnable_of(kernel).of(self.texts.__getitem__, _resources.dtype_signature(args, kwargs))
        self.compiles: dict[int, Any] = {}  # config index -> FutureKernel (or a cached kernel), until awaited
        self.to_compile: list[int] = []  # named by the engine ahead, queued at the next launch
        self._index: Optional[int] = None  # the cached choice, read at state epoch _epoch
        self._epoch = -1

    @classmethod
    def of(cls, kernel: Any, key: tuple, args: tuple, kwargs: dict) -> "_KernelKey":
        """The kernel's known entry for `key` while its choice holds (as Triton, a cache hit
        neither prunes nor encodes the configs again), else a new one (pruned for these
        arguments) that later calls reuse once it is chosen."""
        known = _kept(kernel, "_disttune_keys", dict)  # Triton key -> _KernelKey
        entry = known.get(key)
        if entry is not None and entry.state is _state_of(kernel) and entry.chosen_index() is not None:
            return entry
        entry = cls(kernel, key, args, kwargs)
        known[key] = entry
        return entry

    def ready(self, index: int) -> None:
        """Waits for config `index`'s background compile, then raises (failing the candidate
        before any launch) if it is known or found out of resources on this device."""
        known = self.unrunnable.reason(index)
        if known is not None:
            raise _core.EngineError(known)
        compiling = self.compiles.pop(index, None)
        if compiling is None:
            return
        # Finalizes the compile into the kernel's cache (a compile error is raised again by
        # the launch, which compiles it in the foreground).
        compiled = compiling.result(ignore_errors=True) if hasattr(compiling, "result") else compiling
        problem = self.unrunnable.judge(index, compiled)
        if problem is not None:
            raise _core.EngineError(problem)

    def chosen_index(self) -> Optional[int]:
        """The index of the engine's cached choice for this key, read from the engine only
        when the state's epoch moved since the last answer (a choice replaced, the cache
        emptied) or there was no choice yet."""
        epoch = self.state.epoch()  # before the cache is read, as the engine's own kernels do
        if self._index is not None and epoch == self._epoch:
            return self._index
        self._index = self.state.cached_index(self.key_text, self.candidates)
        self._epoch = epoch
        return self._index

    def chosen(self) -> Optional[Any]:
        index = self.chosen_index()
        return None if index is None else self.configs[index]


class Session:
    """One active contextual call: the engine tuner, and the kernels and keys it saw."""

    def __init__(self, function_name: str, tuner: Any, compile_threads: Optional[int]) -> None:
        self.function_name = function_name
        self.tuner = tuner
        self.compile_threads = compile_threads  # None: the process's compile pool
        self.thread = threading.get_ident()
        self.seen: dict[tuple[int, tuple], _KernelKey] = {}
        self.own_pool: Optional[ThreadPoolExecutor] = None  # with compile_threads only
        self.compiles: Optional[_triton_compile.Cancellable] = None

    def launch(self, kernel: Any, args: tuple, kwargs: dict) -> Any:
        if len(kernel.configs) <= 1:
            return _original_run(kernel, *args, **kwargs)
        kernel.nargs = dict(zip(kernel.arg_names, args))
        key = _triton_key(kernel, args, kwargs)
        seen = self.seen.get((id(kernel), key))
        if seen is None:
            seen = _KernelKey.of(kernel, key, args, kwargs)
            self.seen[(id(kernel), key)] = seen
        chosen = seen.chosen_index()
        tuning = chosen is None
        result = []
        interrupted: list[BaseException] = []

        def launch_one(index: int) -> None:
            # A Ctrl-C must end the call, not fail the candidate (which restarts the run):
            # keep it from the engine and raise it once the launch is over.
            try:
                launch_config(index)
            except (KeyboardInterrupt, SystemExit) as stop:
                interrupted.append(stop)

        def launch_config(index: int) -> None:
            if tuning:
                # What the engine named since the last launch compiles with this launch's
                # arguments (none are kept between launches).
                self._compile(seen, args, kwargs)
                seen.ready(index)
            config = seen.configs[index]
            current = dict(kwargs, **seen.launch_kwargs[index])
            if not tuning:
                if config.pre_hook is not None:
                    config.pre_hook({**kernel.nargs, **current})
                result.append(kernel.fn.run(*args, **current))
                return
            full_nargs = {**kernel.nargs, **current}
            if config.pre_hook is not None:
                config.pre_hook(full_nargs)
            # A tuning run: the kernel's own hooks (reset_to_zero, restore_value, pre/post_hook)
            # surround it, as in Triton's benchmark.
            kernel.pre_hook(full_nargs)
            try:
                result.append(kernel.fn.run(*args, **current))
            except Exception as error:
                kernel.post_hook(full_nargs, exception=error)
                raise
            kernel.post_hook(full_nargs, exception=None)

        try:
            self.tuner.launch(seen.state, seen.key_text, seen.candidates, launch_one,
                              seen.to_compile.extend if tuning else None)
        finally:
            kernel.nargs = None
        if interrupted:
            raise interrupted[0]
        if not tuning:
            _publish(seen, seen.configs[chosen])
        return result[0] if result else None

    def _compile(self, seen: _KernelKey, args: tuple, kwargs: dict) -> None:
        """Starts compiling the candidate configs the engine named (seen.to_compile: before
        each one's turn, its round, then the strategy's guesses, so that a search compiles what
        it measures, not the whole space) in the background, in that order, on the process's
        compile pool (or `compile_threads` threads of this call's own), and returns at once:
        each candidate's first launch waits for its own compile only (_KernelKey.ready), so
        measurement runs while later configs compile. Configs known to be out of resources are
        not compiled; the engine names each config once per tuning (KeyTuning's prepare hook),
        so none is queued twice."""
        indices, seen.to_compile[:] = list(seen.to_compile), []
        if not indices:
            return
        if self.compiles is None:
            if self.compile_threads is None:
                pool = _triton_compile.process_pool()
            else:
                pool = self.own_pool = ThreadPoolExecutor(
                    max_workers=self.compile_threads, thread_name_prefix="disttune-compile"
                )
            self.compiles = _triton_compile.Cancellable(pool)
        wanted = [i for i in indices if seen.unrunnable.reason(i) is None]
        seen.compiles.update(
            _triton_compile.start_compiles(seen.kernel, seen.configs, args, kwargs, self.compiles, wanted)
        )

    def close(self) -> None:
        """After the call: its compiles not started are dropped; those running finish."""
        if self.compiles is not None:
            self.compiles.cancel()
            self.compiles = None
            if self.own_pool is not None:
                self.own_pool.shutdown(wait=False)
                self.own_pool = None
            for seen in self.seen.values():
                seen.compiles.clear()  # this call's: a later call queues its own
                seen.to_compile.clear()

    def publish_all(self) -> None:
        """After the call: every kernel's cache holds its choice and best_config is set."""
        for seen in self.seen.values():
            config = seen.chosen()
            if config is not None:
                _publish(seen, config)


def _publish(seen: _KernelKey, config: Any) -> None:
    """Makes `config` the kernel's choice for the key, as Triton's Autotuner keeps it."""
    seen.kernel.cache[seen.key] = config
    seen.kernel.best_config = config
