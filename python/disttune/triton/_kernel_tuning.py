"""The engine's tuning of one Triton autotuner (triton.runtime.autotuner.Autotuner or a
library's subclass of it): what replaces Autotuner.run for a kernel the drop-in took."""

from __future__ import annotations

import copy
import hashlib
import json
import sys
import time
import types
from typing import Any, Optional

from triton import knobs
from triton.compiler.errors import CompileTimeAssertionFailure
from triton.runtime.errors import OutOfResources, PTXASError
from triton.runtime.jit import JITFunction

from disttune import _core, _encoding, _exit, _ranks, _resources, _timing, _triton_compile, _triton_hook
from disttune._candidate_runs import CandidateRuns
from disttune.triton import _timeline
from disttune.triton._bench_timer import BenchTimer, NoTime

# Errors that fail one config (Triton's Autotuner times such a config as inf); any other
# error of a config's run ends the launch with that error, as in Triton.
CONFIG_ERRORS = (OutOfResources, CompileTimeAssertionFailure, PTXASError, NoTime)


class _EndTuning(SystemExit):
    """Carries an error that must end the launch, not fail one config: the engine lets a
    SystemExit end a tuning (python/src/interrupt_guard.hpp) and stores no result of it."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


def _jit_function(fn: Any) -> Any:
    while not isinstance(fn, JITFunction) and hasattr(fn, "fn"):
        fn = fn.fn
    return fn


def _digest(fn: Any, base_fn: Any) -> str:
    """What a stored choice depends on in the kernel: Triton's cache key of the JIT function
    (its source and the JIT functions and globals it uses); its source in the interpreter."""
    jit = _jit_function(fn)
    text = getattr(jit, "cache_key", None) if isinstance(jit, JITFunction) else None
    if text is None:
        import inspect

        try:
            text = inspect.getsource(base_fn)
        except (OSError, TypeError):
            text = f"qualname:{base_fn.__module__}.{base_fn.__qualname__}"
    return hashlib.sha256(str(text).encode()).hexdigest()


def _hardware_json(args: tuple, kwargs: dict) -> str:
    device = _timing.device_of(args, kwargs)
    if device is None or device.type == "cpu":
        return "{}"
    backend = getattr(sys.modules["torch"], device.type, None)
    name = backend.get_device_name(device) if hasattr(backend, "get_device_name") else device.type
    return json.dumps({"torch_device": {"type": device.type, "name": str(name)}})


def _hook_identity(hook: Any) -> Optional[str]:
    """A config pre_hook's identity across processes: its module and qualified name and a digest
    of its code (bytecode, names and constants, nested functions' too; not its file's path nor
    the values it captures); None for a hook without code (a partial, a callable object)."""
    code = getattr(hook, "__code__", None)
    if not isinstance(code, types.CodeType):
        return None
    digest = hashlib.sha256()

    def add(code: types.CodeType) -> None:
        digest.update(code.co_code)
        digest.update(repr((code.co_names, code.co_varnames, code.co_freevars)).encode())
        for constant in code.co_consts:
            if isinstance(constant, types.CodeType):
                add(constant)
            else:  # a frozenset's order varies with string hashing between processes
                digest.update(repr(sorted(map(repr, constant)) if isinstance(constant, frozenset) else constant).encode())

    add(code)
    return f"{getattr(hook, '__module__', None)}.{getattr(hook, '__qualname__', None)}#{digest.hexdigest()[:16]}"


def _config_text(config: Any, index: int) -> Optional[str]:
    """A config's canonical text: that of the function-level entry {"cfg": config}, and for a
    config with a pre_hook, {"cfg": the config without it, "pre_hook": the hook's identity};
    None when it has none (such a config is told apart by its place and str())."""
    where = f"configs[{index}]"
    try:
        if config.pre_hook is None:
            return _encoding.entry_text({"cfg": config}, where)
        identity = _hook_identity(config.pre_hook)
        if identity is None:
            return None
        hookless = copy.copy(config)
        hookless.pre_hook = None
        return _encoding.entry_text({"cfg": hookless, "pre_hook": identity}, where)
    except _encoding.EncodingError:
        return None


def _candidates(configs: list) -> tuple[list, list[str], bool]:
    """(distinct configs, their canonical texts, storable): each config's _config_text; a
    config without one is told apart by its place and str(), and the tuning is not stored.
    Equal configs count once, as in Triton (its timings are a dict keyed by config, whose
    equality takes the pre_hook object): two whose texts match but whose hooks are two objects
    of the same code (closures over other values) are told apart by their place."""
    distinct, texts, storable = [], [], True
    for index, config in enumerate(configs):
        text = _config_text(config, index)
        if text is None:
            storable = False
            hook = getattr(config.pre_hook, "__qualname__", "hook")
            text = _encoding.value_text({"config": str(config), "pre_hook": hook, "index": index})
        elif text in texts and config.pre_hook is not distinct[texts.index(text)].pre_hook:
            text = _encoding.value_text({"config": text, "index": index})
        if text not in texts:
            distinct.append(config)
            texts.append(text)
    return distinct, texts, storable


# The strategies that compile every config, in whatever order: their compiles can be queued
# longest first. The others (search, random) name what to compile in the order they want it.
COMPILES_EVERY_CONFIG = frozenset({"converge", "exhaustive"})


def strategy_for(count: int) -> str:
    """The engine strategy of a tuning over `count` configs: TRITON_DIST_AUTOTUNE_STRATEGY when
    set, else converge below TRITON_DIST_AUTOTUNE_SEARCH_FROM configs (80 by default), search
    from there (docs/triton-dropin.md)."""
    named = _core.strategy_setting()
    if named:
        return named
    return "search" if count >= _core.search_from_setting() else "converge"


class KernelState:
    """What the engine keeps per autotuner object: its tuners (by timer, storability,
    strategy and search effort), the configs found out of resources across its keys, and its
    digest."""

    def __init__(self) -> None:
        self.tuners: dict[Any, tuple[Any, Optional[BenchTimer]]] = {}
        self.unrunnable = _resources.Unrunnable()
        self.digest: Optional[str] = None


def state_of(kernel: Any) -> KernelState:
    state = kernel.__dict__.get("_disttune_kernel")
    if state is None:
        state = kernel.__dict__["_disttune_kernel"] = KernelState()
        # The engine objects it holds go before the interpreter's teardown (disttune._exit).
        _exit.release_at_exit(kernel, "_disttune_kernel", "last_report")
    return state


def run(kernel: Any, args: tuple, kwargs: dict) -> Any:
    """Autotuner.run(*args, **kwargs) of `kernel` with the engine tuning a new key; the
    kernel's attributes (cache, best_config, configs_timings, bench_time) and hooks behave
    as in Triton's."""
    kernel.nargs = dict(zip(kernel.arg_names, args))
    tuned = False
    if len(kernel.configs) > 1:
        key = triton_key(kernel, kwargs)
        if key not in kernel.cache:
            tuned = _tune(kernel, key, args, kwargs)
        config = kernel.cache[key]
    else:
        config = kernel.configs[0]
    kernel.best_config = config
    if knobs.autotuning.print and tuned:
        print(f"Triton autotuning for function {kernel.base_fn.__name__},\nwith key as {key},\n"
              f"finished after {kernel.bench_time:.2f}s,\nbest config selected: {kernel.best_config};")
    if config.pre_hook is not None:
        config.pre_hook({**kernel.nargs, **kwargs, **config.all_kwargs()})
    result = kernel.fn.run(*args, **kwargs, **config.all_kwargs())
    kernel.nargs = None
    return result


def triton_key(kernel: Any, kwargs: dict) -> tuple:
    """Triton's key (the `key` arguments' values, then the dtype of every argument that has
    one), with the dtypes in the kernel's parameter order whatever the keyword order."""
    named = {**kernel.nargs, **{k: v for k, v in kwargs.items() if k in kernel.arg_names}}
    key = [named[name] for name in kernel.keys if name in named]
    key += [str(named[name].dtype) for name in kernel.arg_names if hasattr(named.get(name), "dtype")]
    return tuple(key)


def _tune(kernel: Any, key: tuple, args: tuple, kwargs: dict) -> bool:
    """Puts the engine's choice for `key` into kernel.cache; whether configs were measured."""
    begin = time.time()
    configs, texts, storable = _candidates(kernel.prune_configs(kwargs))
    for config in configs:
        conflicts = kwargs.keys() & config.kwargs.keys()
        if conflicts:
            raise ValueError(f"Conflicting meta-parameters: {', '.join(conflicts)}."
                             " Make sure that you don't re-define auto-tuned symbols.")
    kernel.configs_timings = {}
    if len(configs) == 1:
        # One survivor of pruning: nothing to choose between, nothing is run.
        kernel.cache[key] = configs[0]
        kernel.bench_time = time.time() - begin
        return False
    state = state_of(kernel)
    group = _ranks.default_group()
    communicator = _ranks.communicator_for(group) if group is not None else None
    strategy = "exhaustive" if kernel._do_bench is not None else strategy_for(len(configs))
    tuner, bench_timer = _tuner(kernel, state, args, kwargs, group, storable, strategy)
    signature = _resources.dtype_signature(args, kwargs)
    state.unrunnable.learn_from_store(tuner, signature)
    compiles = _triton_compile.KernelCompiles(kernel, configs, args, kwargs,
                                              state.unrunnable.of(texts.__getitem__, signature), CONFIG_ERRORS,
                                              longest_first=strategy in COMPILES_EVERY_CONFIG)
    kernel_runs = _KernelRuns(kernel, configs, args, kwargs, bench_timer)
    runs = CandidateRuns(kernel_runs.call)
    key_text = _triton_hook.key_text(key)
    began = time.perf_counter()
    try:
        report = tuner.resolve(key_text, texts, runs.run, bool(knobs.autotuning.print), communicator,
                               compiles.prepare, prepared=compiles.prepared,
                               compile_threads=_triton_compile.process_pool_threads())
    except _EndTuning as end:
        raise end.error from None
    finally:
        compiles.close()
    ended = time.perf_counter()
    kernel.last_report = report
    kernel.bench_time = time.time() - begin
    kernel.configs_timings = {
        config: float("inf") if result.failed else result.agreed_ms
        for config, result in zip(configs, report.candidates)
    }
    kernel.cache[key] = configs[report.best]
    _timeline.note(kernel.base_fn.__name__, key_text, strategy, report, compiles, began, ended)
    if kernel_runs.count:
        full_nargs = {**kernel.nargs, **kwargs, **kernel.cache[key].all_kwargs()}
        kernel.pre_hook(full_nargs, reset_only=True)
    listener = getattr(knobs.autotuning, "listener", None)
    if listener is not None:
        listener(fn=_jit_function(kernel.fn), key=key, best_config=kernel.cache[key],
                 configs_timings=kernel.configs_timings, duration=kernel.bench_time,
                 cache_hit=report.source != "tuned")
    return kernel_runs.count > 0


def _tuner(kernel: Any, state: KernelState, args: tuple, kwargs: dict, group: Any, storable: bool,
           strategy: str) -> tuple[Any, Optional[BenchTimer]]:
    """The engine's FunctionTuner for this launch's timer, and its BenchTimer when a
    benchmarker measures (made once per timer, store, strategy and search effort)."""
    if kernel._do_bench is not None:
        identity: Any = ("bench",)
        timer: Any = None
        measurement = dict(strategy=strategy, warmup_runs=0, timed_runs=1)
    else:
        # Triton's do_bench times a cold L2 cache and takes the median; so does the engine.
        identity, timer = _timing.select_timer(None, args, kwargs, group, _timing.TimingOptions(flush_l2=True))
        measurement = dict(strategy=strategy, statistic="median")
    effort = _core.search_effort_setting() if strategy == "search" else None
    if effort is not None:
        measurement["strategy_options"] = {"effort": effort}
    made = state.tuners.get((identity, storable, strategy, effort))
    if made is None:
        bench_timer = BenchTimer(kernel._do_bench, _hardware_json(args, kwargs)) if timer is None else None
        if state.digest is None:
            state.digest = _digest(kernel.fn, kernel.base_fn)
        tuner = _core.FunctionTuner(kernel.base_fn.__name__, state.digest,
                                    timer=timer if timer is not None else bench_timer,
                                    deps_json=json.dumps(_timing.software_facts()), disk_cache=storable,
                                    **measurement)
        made = state.tuners[(identity, storable, strategy, effort)] = (tuner, bench_timer)
    return made


class _KernelRuns:
    """The call of one tuning's candidate runs (disttune._candidate_runs runs them): each run
    wrapped in the kernel's hooks as Triton's benchmark wraps it (the engine's prepare
    compiled the config before its first run)."""

    def __init__(self, kernel: Any, configs: list, args: tuple, kwargs: dict,
                 bench_timer: Optional[BenchTimer]) -> None:
        self._kernel = kernel
        self._bench_timer = bench_timer
        self._configs = configs
        self._args = args
        self._kwargs = kwargs
        self.count = 0

    def call(self, index: int) -> None:
        kernel = self._kernel
        self.count += 1
        config = self._configs[index]
        current = dict(self._kwargs, **config.all_kwargs())
        full_nargs = {**kernel.nargs, **current}

        def kernel_call() -> None:
            if config.pre_hook:
                config.pre_hook(full_nargs)
            kernel.pre_hook(full_nargs)
            try:
                kernel.fn.run(*self._args, **current)
            except Exception as error:
                kernel.post_hook(full_nargs, exception=error)
                raise
            kernel.post_hook(full_nargs, exception=None)

        try:
            if self._bench_timer is not None:
                self._bench_timer.measure(kernel_call, config)
            else:
                kernel_call()
        except CONFIG_ERRORS:
            raise  # this config fails; the others are measured
        except Exception as error:
            raise _EndTuning(error) from error
