"""Function-level autotuning (the spec's ``triton_dist.tune.autotune``) on the C++ engine.

    @autotune(config_space=[{"cfg": triton.Config(...)}, ...], key_fn=key_fn, prune_fn=prune_fn)
    def scale(x, alpha, cfg): ...

    y = scale(x, 2.5)                 # tunes on a new key, then runs the best entry
    y = scale(x, 2.5, autotune=False) # runs the first entry, no tuning, no cache

Each entry's items are passed as keyword arguments. Python keeps the in-process cache
(business key -> entry); on a miss the engine does the rest: disk store, rank agreement,
measurement, record and log.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import math
import warnings
import weakref
from typing import Any, Callable, Mapping, Optional, Sequence

from disttune import _checks, _core, _encoding, _options, _timing, _triton_setup
from disttune._candidate_options import candidate_options
from disttune._function_tuning import Compiles, FunctionTuning
from disttune._strategy_options import strategy_option_texts
from disttune._signatures import P, R, AutotunedCallable

__all__ = ["autotune", "options", "to_hashable", "AutotunedFunction"]

options = _options.options

# The defaults of the engine's options (the binding's one table of them); the signature of
# autotune() shows them, and a test checks that it does.
_DEFAULTS = _core.function_defaults
# autotune()'s options by what takes them (disttune._options, the one table of them): the
# engine's, passed through as given; those of the per-candidate runs (isolation, output
# check, restored inputs), candidate_options()'s keyword parameters.
_ENGINE_OPTIONS = _options.names(taker="engine")
_CANDIDATE_OPTIONS = _options.names(taker="candidates")


def to_hashable(tensor: Any) -> tuple:
    """A key part for a tensor: (shape, stride, dtype), hashable and canonically encodable."""
    return (tuple(tensor.shape), tuple(tensor.stride()), tensor.dtype)


def _source_digest(fn: Callable) -> str:
    try:
        source = inspect.getsource(fn)
    except (OSError, TypeError):
        name = f"{fn.__module__}.{fn.__qualname__}"
        warnings.warn(
            f"disttune: no source for '{name}'; its disk cache is keyed by its qualified name, so "
            "editing it will not invalidate stored results",
            stacklevel=3,
        )
        return hashlib.sha256(("qualname:" + name).encode()).hexdigest()
    return hashlib.sha256(source.encode()).hexdigest()


class AutotunedFunction:
    """A launcher tuned per business key over a config space. Call it like the launcher,
    without the entry's keyword arguments, plus the spec's flags. Its choices and tunings are
    its `tuning` (disttune._function_tuning.FunctionTuning), which the sweep shares."""

    def __init__(
        self,
        fn: Callable,
        config_space: Sequence[Mapping[str, Any]],
        key_fn: Callable,
        prune_fn: Optional[Callable] = None,
        **options: Any,
    ) -> None:
        """`options` are autotune()'s keyword options: its signature is their one definition
        (names, defaults); an unknown name is a TypeError."""
        chosen = inspect.signature(autotune).bind(config_space, key_fn, prune_fn, **options)
        chosen.apply_defaults()
        option = chosen.arguments
        precompile = option["precompile"]
        if not callable(fn):
            raise _core.NotCallable("disttune: autotune decorates a callable")
        if not callable(key_fn):
            raise _core.NotCallable(f"disttune: key_fn of '{fn.__name__}' must be callable")
        if prune_fn is not None and not callable(prune_fn):
            raise _core.NotCallable(f"disttune: prune_fn of '{fn.__name__}' must be callable or None")
        if precompile is not None and not callable(precompile):
            raise _core.NotCallable(f"disttune: precompile of '{fn.__name__}' must be callable or None")
        self.fn = fn
        self.config_space = list(config_space)
        if not self.config_space:
            raise _core.InvalidSetting(f"disttune: config_space of '{fn.__name__}' is empty")
        self.candidates = [
            _encoding.entry_text(entry, f"config_space[{i}]") for i, entry in enumerate(self.config_space)
        ]
        baseline_text = ""
        if option["baseline"] is not None:
            baseline_text = _encoding.entry_text(option["baseline"], "baseline")
            if baseline_text not in self.candidates:
                raise _core.InvalidSetting(f"disttune: baseline of '{fn.__name__}' is not an entry of its config_space")
        self.key_fn = key_fn
        self.prune_fn = prune_fn
        self.name = fn.__name__
        self.digest = _source_digest(fn)
        self.precompile = precompile
        if precompile is not None:
            _triton_setup.start()  # in the background until the first compile needs it
        self.precompile_threads = option["precompile_threads"]
        if not isinstance(self.precompile_threads, int) or self.precompile_threads < 1:
            raise _core.InvalidSetting(f"disttune: precompile_threads of '{fn.__name__}' must be an int >= 1")
        self.compile_timeout_s = option["compile_timeout_s"]
        if self.compile_timeout_s is not None and not (
            isinstance(self.compile_timeout_s, (int, float)) and math.isfinite(self.compile_timeout_s)
            and self.compile_timeout_s > 0
        ):
            raise _core.InvalidSetting(
                f"disttune: compile_timeout_s of '{fn.__name__}' must be None or a finite number of seconds > 0"
            )
        _timing.check_timer_choice(option["timer"], self.name)
        self.timer = option["timer"]
        self.candidate_options = candidate_options(
            fn, len(self.config_space), **{name: option[name] for name in _CANDIDATE_OPTIONS}
        )
        tuner_options = {name: option[name] for name in _ENGINE_OPTIONS}
        tuner_options["baseline"] = baseline_text
        tuner_options["strategy_options"] = strategy_option_texts(option["strategy_options"])
        if option["key_distance"] is not None:
            if not callable(option["key_distance"]):
                raise _core.NotCallable(f"disttune: key_distance of '{fn.__name__}' must be callable or None")
            tuner_options["key_distance"] = _encoding.text_distance(option["key_distance"])
        # Check the options now (the engine validates them) rather than on the first miss.
        # Stores are checked as given (a chain's URLs too) and not opened: disk_cache=False.
        _core.FunctionTuner(self.name, self.digest, **{**tuner_options, "disk_cache": False})
        self.tuning = FunctionTuning(
            fn,
            self.name,
            self.digest,
            self.config_space,
            self.candidates,
            prune_fn,
            self.timer,
            _timing.TimingOptions(flush_l2=option["flush_l2"], graph_runs=option["graph_runs"]),
            self.candidate_options,
            tuner_options,
            Compiles(precompile, self.precompile_threads, self.compile_timeout_s),
        )
        self.cache = self.tuning.cache  # business key -> chosen entry

    @property
    def last_report(self) -> Optional[Any]:
        """The report of the last call's choice: its `source` says where the choice came from
        ('memory' for a key this process had chosen before, 'disk', 'redis' or 'tuned');
        None before the first call."""
        hit = getattr(self.tuning.dispatcher(), "_last_hit", None)
        return hit[2] if hit is not None else self.tuning.last_report

    @property
    def last_compiles(self) -> list[tuple[int, float, float, str]]:
        """The last tuning's compiles, by start: (candidate, start, end, thread name), times
        from time.perf_counter(); candidates are indices into the tuning's report."""
        return self.tuning.last_compiles

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """A call the hit path hands over whole: one with keywords (the call flags among them)."""
        enabled = kwargs.pop("autotune", True)
        verbose = kwargs.pop("autotune_verbose", False)
        group = kwargs.pop("autotune_pg", None)
        allow_overwrite = kwargs.pop("autotune_allow_arg_overwrite", False)
        tuning = self.tuning
        if not enabled:
            return self.fn(*args, **tuning.merge(kwargs, self.config_space[0], allow_overwrite))
        key = self.key_fn(*args, **kwargs)
        seen = len(tuning.hits)
        try:
            hit = tuning.hits.get(key)
        except TypeError:
            hit, seen = None, -1  # unhashable: found by its canonical text, under the lock
        if hit is not None:
            tuning.record_call(hit[2])
            return self.fn(*args, **tuning.merge(kwargs, hit[3], allow_overwrite))
        return tuning.call(key, seen, args, kwargs, verbose, group, allow_overwrite)

    def _miss(self, key: Any, seen: int, *args: Any) -> Any:
        """A positional call whose key the hit path computed (once) and did not find among
        the `seen` keys of the hit table (-1: the key is unhashable, not searched)."""
        return self.tuning.call(key, seen, args, {}, False, None, False)


def autotune(
    config_space: Sequence[Mapping[str, Any]],
    key_fn: Callable[P, Any],
    prune_fn: Optional[Callable[..., Any]] = None,
    *,
    warmup_runs: int = _DEFAULTS["warmup_runs"],
    timed_runs: int = _DEFAULTS["timed_runs"],
    statistic: str = _DEFAULTS["statistic"],
    strategy: Optional[str] = _DEFAULTS["strategy"],
    baseline: Optional[Mapping[str, Any]] = _DEFAULTS["baseline"],
    budget_ms: Optional[float] = _DEFAULTS["budget_ms"],
    max_noise: Optional[float] = _DEFAULTS["max_noise"],
    min_time_ms: Optional[float] = _DEFAULTS["min_time_ms"],
    strategy_options: Optional[Mapping[str, Any]] = _DEFAULTS["strategy_options"],
    flush_l2: bool = False,
    graph_runs: int = 0,
    collective_timeout_s: Optional[float] = _DEFAULTS["collective_timeout_s"],
    cache_dir: Optional[str] = _DEFAULTS["cache_dir"],
    disk_cache: bool = _DEFAULTS["disk_cache"],
    redis_url: Optional[str] = _DEFAULTS["redis_url"],
    stores: Optional[Sequence[str]] = _DEFAULTS["stores"],
    precompile: Optional[Callable] = None,
    precompile_threads: int = 16,
    compile_timeout_s: Optional[float] = None,
    timer: Any = None,
    split_across_ranks: bool = _DEFAULTS["split_across_ranks"],
    key_distance: Optional[Callable[[Any, Any], float]] = _DEFAULTS["key_distance"],
    isolate: bool = False,
    candidate_timeout_s: Optional[float] = None,
    reference: Optional[_checks.Reference] = None,
    check: Optional[Callable[[Any, Any], bool]] = None,
    rtol: float = 1e-5,
    atol: float = 1e-8,
    restore_value: Sequence[str] = (),
    reset_to_zero: Sequence[str] = (),
) -> Callable[[Callable[..., R]], AutotunedCallable[P, R]]:
    """Tunes the decorated launcher over `config_space` per business key `key_fn(*args, **kwargs)`.

    Entries are dicts of keyword arguments (values: triton.Config, torch.dtype, numbers,
    strings, bools, None, tuples, lists, dicts); `prune_fn(entry, *args, **kwargs)` keeps an
    entry when true. Measurement: `warmup_runs` untimed and `timed_runs` timed runs per entry
    (the spec's 5 and 10; each at most 1,000,000), summarised by `statistic` ("median",
    "mean", "min"); `strategy` names a registered engine strategy ("exhaustive", the spec's,
    "adaptive" or "converge"); None takes TRITON_DIST_AUTOTUNE_STRATEGY, else "exhaustive".
    "converge" stops sampling an entry once the relative error of its statistic is under
    `max_noise` after `min_time_ms` of device time; `budget_ms` > 0 bounds the total
    (docs/strategies.md). These three are converge's own parameters: a keyword fills
    strategy_options of the same name (None: the strategy's default); a strategy that does
    not declare it refuses it (InvalidSetting), as does giving it both ways. "search" measures a budgeted fraction of a large space chosen by a
    model of the entries' parameters, then races a shortlist; `strategy_options` are the
    strategy's own named parameters, e.g. {"effort": "quick", "seed": 7} (values str, int or
    float; each strategy refuses names it does not declare). `baseline`, an entry of `config_space`, is kept unless another entry
    is faster by more than the noise (any strategy; off by default). `flush_l2`
    clears the device cache before each timed run; `graph_runs` > 0 times CUDA-graph replays
    of that many runs. `collective_timeout_s` is the deadline of each engine collective in
    seconds (at least 0.001; math.inf: none); None takes TRITON_DIST_AUTOTUNE_TIMEOUT, else 600.
    `precompile(entry, *args, **kwargs)`, if given, is a compile-only call (e.g. Triton's
    `kernel.warmup(..., grid=(1,))`) run on `precompile_threads` threads ahead of the runs:
    measurement starts as soon as the first entry is compiled, while the others compile
    (docs/python.md, "Compile pipeline"). What it returns, if a Triton CompiledKernel, is
    checked against the device before any launch: an entry out of resources (shared memory,
    registers) fails at once and is remembered for the function's later keys (and read from
    its stored records of other keys). `compile_timeout_s` (None: no limit) fails an entry
    whose compile runs longer.
    `timer` None (default) follows the work: device events when the call's tensors (nested
    ones too) are on an accelerator or, with no tensor, when `autotune_pg` is an NCCL/HCCL
    group or an accelerator context is initialised; the CPU clock otherwise. "cuda", "cpu"
    or a disttune._core.Timer instance choose it.
    `split_across_ranks=True` (for launchers whose runs do not communicate): with several
    ranks, each rank precompiles and measures only its share of the surviving entries (ranks
    of one host compile on disjoint CPU cores, by torchrun's LOCAL_WORLD_SIZE), the
    results are all-gathered once and every rank takes the same best entry (off by default:
    every rank measures every entry, times MAX over ranks).
    Warm start (TRITON_DIST_AUTOTUNE_WARM_START, on by default): a new key starts from the
    stored records of the nearest other keys with the same config space, and measures their
    best entries first (docs/many-shapes.md); `key_distance(key_a, key_b) -> float` (key
    values as key_fn returns them; inf: not a neighbour) replaces the default distance
    (|log2 a - log2 b| summed over numbers, a large constant for any other part that differs).
    `cache_dir` overrides TRITON_DIST_AUTOTUNE_CACHE_DIR (None or "": the variable, else
    ~/.triton_dist/autotune); `redis_url` (redis://host:port/db, "" for none) overrides
    TRITON_DIST_AUTOTUNE_REDIS_URL, a Redis store read after the directory;
    `stores` gives the chain of stores as URLs, first read first ("file:///path" or a path,
    "redis://host:port/db", a registered scheme's; docs/cache.md), instead of `cache_dir` and
    `redis_url` (None: those, else TRITON_DIST_AUTOTUNE_STORES when set);
    `disk_cache=False` keeps results in memory only (no directory, no Redis). Bad settings
    raise disttune.InvalidSetting (a ValueError) naming the setting.
    `isolate=True` runs and times every candidate in a persistent worker process per device
    (the launcher must be a top-level function of an importable module): a crash or a run
    longer than `candidate_timeout_s` (default 60) fails that candidate only; the final run is
    in the caller's process. `reference` (a callable with the launcher's arguments, or a
    config_space index) gives the expected result; each candidate's result is checked once
    before it is timed, with `check(result, expected) -> bool` or by default equality
    (torch.allclose with `rtol`/`atol` for tensors, element-wise through containers).
    `restore_value` / `reset_to_zero` name tensor arguments put back to their values / zeroed
    before every tuning run; the final run sees the caller's original inputs.
    Call flags: autotune=True, autotune_verbose=False, autotune_pg=None,
    autotune_allow_arg_overwrite=False. The result is a callable whose other attributes
    (cache, last_report, last_compiles, candidates, digest) are those of its
    AutotunedFunction. Type checkers see it called with key_fn's parameters and returning
    the launcher's result (disttune._signatures says why).
    """
    options = dict(locals())  # exactly the parameters above, by name

    def decorate(fn: Callable[..., R]) -> AutotunedCallable[P, R]:
        tuned = AutotunedFunction(fn, **options)
        # Positional-only calls run key_fn once in the C hit path; a cached key runs there, a
        # miss reaches tuned._miss with that key, and calls with keywords (call flags among
        # them) reach tuned.__call__. Attributes are read from `tuned`.
        dispatcher: Any = _core.make_hit_path(fn, key_fn, tuned.tuning.hits, tuned, tuned._miss, tuned)
        functools.update_wrapper(dispatcher, fn)
        tuned.tuning.dispatcher = weakref.ref(dispatcher)
        return dispatcher

    return decorate
