"""The drop-in Autotuner: triton.autotune's kernel object whose tuning is the engine's."""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from typing import Any, Optional

from triton import knobs
from triton.compiler.errors import CompileTimeAssertionFailure
from triton.runtime.autotuner import Autotuner as TritonAutotuner
from triton.runtime.errors import OutOfResources, PTXASError
from triton.runtime.jit import JITFunction

from disttune import _core, _encoding, _exit, _ranks, _timing, _triton_compile, _triton_hook
from disttune.triton._bench_timer import BenchTimer, NoTime

# Errors that fail one config (Triton's Autotuner times such a config as inf); any other
# error of a config's run ends the launch with that error, as in Triton.
CONFIG_ERRORS = (OutOfResources, CompileTimeAssertionFailure, PTXASError, NoTime)

# Threads compiling a kernel's candidate configs at once.
COMPILE_THREADS = min(32, os.cpu_count() or 1)


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


def _candidates(configs: list) -> tuple[list, list[str], bool]:
    """(distinct configs, their canonical texts, storable): a config's text is that of the
    function-level entry {"cfg": config}; a config with a pre_hook (no canonical form) is told
    apart by its place and str(), and its tuning is not stored. Equal configs count once, as
    in Triton (its timings are a dict keyed by config)."""
    distinct, texts, storable = [], [], True
    for index, config in enumerate(configs):
        try:
            text = _encoding.entry_text({"cfg": config}, f"configs[{index}]")
        except _encoding.EncodingError:
            storable = False
            hook = getattr(config.pre_hook, "__qualname__", "hook")
            text = _encoding.value_text({"config": str(config), "pre_hook": hook, "index": index})
        if text not in texts:
            distinct.append(config)
            texts.append(text)
    return distinct, texts, storable


class Autotuner(TritonAutotuner):
    """triton.runtime.autotuner.Autotuner (same constructor, attributes and hooks) whose
    tuning of a new key is the engine's: candidates compiled concurrently, measured by the
    engine's strategy or by the given benchmarker, agreed across the ranks of torch's default
    process group (MAX), and kept in the engine's stores (directory, Redis)."""

    def __init__(self, fn, arg_names, configs, key, reset_to_zero, restore_value, pre_hook=None, post_hook=None,
                 prune_configs_by=None, warmup=None, rep=None, use_cuda_graph=False, do_bench=None,
                 cache_results=False):
        super().__init__(fn, arg_names, configs, key, reset_to_zero, restore_value, pre_hook=pre_hook,
                         post_hook=post_hook, prune_configs_by=prune_configs_by, warmup=warmup, rep=rep,
                         use_cuda_graph=use_cuda_graph, do_bench=do_bench, cache_results=cache_results)
        # The benchmarker the user chose (do_bench=, or Triton's from warmup/rep/use_cuda_graph);
        # None: the engine measures.
        self.benchmarker = self._do_bench
        self.name = self.base_fn.__name__
        self.last_report: Optional[Any] = None
        self._digest: Optional[str] = None
        self._tuners: dict[Any, Any] = {}
        _exit.release_at_exit(self, "_tuners", "last_report")

    def run(self, *args, **kwargs):
        if _triton_hook.active_on_this_thread():
            # A contextual call drives every triton.autotune kernel launched inside it.
            return TritonAutotuner.run(self, *args, **kwargs)
        self.nargs = dict(zip(self.arg_names, args))
        tuned = False
        if len(self.configs) > 1:
            key = self._key(kwargs)
            if key not in self.cache:
                tuned = True
                self._tune(key, args, kwargs)
            config = self.cache[key]
        else:
            config = self.configs[0]
        self.best_config = config
        if knobs.autotuning.print and tuned:
            print(f"Triton autotuning for function {self.base_fn.__name__},\nwith key as {key},\n"
                  f"finished after {self.bench_time:.2f}s,\nbest config selected: {self.best_config};")
        if config.pre_hook is not None:
            config.pre_hook({**self.nargs, **kwargs, **config.all_kwargs()})
        result = self.fn.run(*args, **kwargs, **config.all_kwargs())
        self.nargs = None
        return result

    def _key(self, kwargs: dict) -> tuple:
        """Triton's key (the `key` arguments' values, then the dtype of every argument that
        has one), with the dtypes in the kernel's parameter order whatever the keyword order."""
        named = {**self.nargs, **{k: v for k, v in kwargs.items() if k in self.arg_names}}
        key = [named[name] for name in self.keys if name in named]
        key += [str(named[name].dtype) for name in self.arg_names if hasattr(named.get(name), "dtype")]
        return tuple(key)

    def _tune(self, key: tuple, args: tuple, kwargs: dict) -> None:
        begin = time.time()
        configs, texts, storable = _candidates(self.prune_configs(kwargs))
        for config in configs:
            conflicts = kwargs.keys() & config.kwargs.keys()
            if conflicts:
                raise ValueError(f"Conflicting meta-parameters: {', '.join(conflicts)}."
                                 " Make sure that you don't re-define auto-tuned symbols.")
        self.configs_timings = {}
        if len(configs) == 1:
            # One survivor of pruning: nothing to choose between, nothing is run.
            self.cache[key] = configs[0]
            self.bench_time = time.time() - begin
            return
        group = _ranks.default_group()
        communicator = _ranks.communicator_for(group) if group is not None else None
        tuner, bench_timer = self._tuner(args, kwargs, group, storable)
        runs = _CandidateRuns(self, configs, args, kwargs, bench_timer)
        try:
            report = tuner.resolve(_triton_hook._key_text(key), texts, runs.run, bool(knobs.autotuning.print),
                                   communicator)
        except _EndTuning as end:
            raise end.error from None
        self.last_report = report
        self.bench_time = time.time() - begin
        self.configs_timings = {
            config: float("inf") if result.failed else result.agreed_ms
            for config, result in zip(configs, report.candidates)
        }
        self.cache[key] = configs[report.best]
        if runs.count:
            full_nargs = {**self.nargs, **kwargs, **self.cache[key].all_kwargs()}
            self.pre_hook(full_nargs, reset_only=True)

    def _tuner(self, args: tuple, kwargs: dict, group: Any, storable: bool) -> tuple[Any, Optional[BenchTimer]]:
        """The engine's FunctionTuner for this launch's timer, and its BenchTimer when a
        benchmarker measures (made once per timer and store)."""
        if self.benchmarker is not None:
            identity: Any = ("bench",)
            timer: Any = None
            measurement = dict(strategy="exhaustive", warmup_runs=0, timed_runs=1)
        else:
            # Triton's do_bench times a cold L2 cache and takes the median; so does the engine.
            identity, timer = _timing.select_timer(None, args, kwargs, group, _timing.TimingOptions(flush_l2=True))
            measurement = dict(strategy=_core.strategy_setting() or "converge", statistic="median")
        made = self._tuners.get((identity, storable))
        if made is None:
            bench_timer = BenchTimer(self.benchmarker, _hardware_json(args, kwargs)) if timer is None else None
            if self._digest is None:
                self._digest = _digest(self.fn, self.base_fn)
            tuner = _core.FunctionTuner(self.name, self._digest, timer=timer if timer is not None else bench_timer,
                                        deps_json=json.dumps(_timing.software_facts()), disk_cache=storable,
                                        **measurement)
            made = self._tuners[(identity, storable)] = (tuner, bench_timer)
        return made


class _CandidateRuns:
    """The runs of one tuning: every candidate compiled concurrently before the first run;
    each run wrapped in the kernel's hooks as Triton's benchmark wraps it."""

    def __init__(self, kernel: Autotuner, configs: list, args: tuple, kwargs: dict,
                 bench_timer: Optional[BenchTimer]) -> None:
        self._kernel = kernel
        self._bench_timer = bench_timer
        self._configs = configs
        self._args = args
        self._kwargs = kwargs
        self.count = 0

    def run(self, index: int) -> None:
        kernel = self._kernel
        if self.count == 0:
            _triton_compile.compile_configs(kernel, self._configs, self._args, self._kwargs, COMPILE_THREADS)
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
