"""The core under a tuned function: its choices per business key, a key resolved (its choice,
else tuned under the function's lock) and one key's tuning on the engine.

The decorator (disttune.tune) hands every call that the C hit path did not serve to
`FunctionTuning.call`; the sweep (disttune._sweep) resolves keys with `FunctionTuning.choose`.
Both reach the engine only through here: the tuners per timer, the compile pipeline, the one
candidate runner (disttune._candidate_runs) or the isolated worker, and what the stores know
of the function (configs out of resources, read through the engine).
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional

from disttune import _core, _encoding, _exit, _isolation, _options, _prepare, _ranks, _resources, _timing
from disttune._call_check import CallCheck
from disttune._candidate_options import CandidateOptions
from disttune._candidate_runs import launcher_runs

# The engine options that name the stores (the disk cache, its root, Redis): a tuner without
# them keeps its results in memory; a sweep's key claims use them.
STORE_OPTIONS = _options.names(group="stores")


@dataclass(frozen=True)
class Compiles:
    """A tuned function's compile-ahead options: `precompile(entry, *args, **kwargs)` on
    `threads` threads, each compile failed after `timeout_s` (None: no limit)."""

    precompile: Optional[Callable]
    threads: int
    timeout_s: Optional[float]


@dataclass(eq=False, repr=False)
class FunctionTuning:
    """One tuned function's choices and tunings. `fn` is the launcher, `config_space` its
    entries and `candidates` their canonical texts; `tuner_options` are the engine's
    FunctionTuner options (checked by the caller)."""

    fn: Callable
    name: str
    digest: str
    config_space: list[dict]
    candidates: list[str]
    prune_fn: Optional[Callable]
    timer: Any
    timing: _timing.TimingOptions
    candidate_options: CandidateOptions
    tuner_options: dict
    compiles: Compiles
    unrunnable: _resources.Unrunnable = field(init=False, default_factory=_resources.Unrunnable)
    tuners: dict[Any, Any] = field(init=False, default_factory=dict)
    # id(tuner) -> its WorkerTimer (isolate=True)
    worker_timers: dict[int, Any] = field(init=False, default_factory=dict)
    lock: Any = field(init=False, default_factory=threading.RLock)
    # business key -> chosen entry
    cache: dict[Any, dict] = field(init=False, default_factory=dict)
    # business key -> (names, values, the key's report as a later call sees it: source
    # "memory", entry), for the C hit path, which keeps the last hit's as _last_hit
    hits: dict[Any, tuple] = field(init=False, default_factory=dict)
    # For keys that are not hashable: canonical key text -> chosen entry, and their reports
    # (source "memory").
    cache_by_text: dict[str, dict] = field(init=False, default_factory=dict)
    memory_by_text: dict[str, Any] = field(init=False, default_factory=dict)
    # The last call's report when not a C hit.
    last_report: Optional[Any] = field(init=False, default=None)
    # The last tuning's compiles, by start: (candidate, start, end, thread name).
    last_compiles: list[tuple[int, float, float, str]] = field(init=False, default_factory=list)

    def __post_init__(self) -> None:
        self.call_check = CallCheck(self.fn, self.config_space, self.name)
        # The C hit path in front of the function (set by the decorator), by weak reference.
        self.dispatcher: Callable[[], Any] = lambda: None
        _exit.release_at_exit(self, "tuners", "worker_timers", "memory_by_text", "last_report", "timer")

    @property
    def store_options(self) -> dict:
        """The engine options naming this function's stores (STORE_OPTIONS)."""
        return {name: self.tuner_options[name] for name in STORE_OPTIONS}

    def directory_root(self) -> Optional[str]:
        """The root of the first directory store of this function's stores (as the engine
        builds the chain from its options and the environment), or None."""
        root = _core.FunctionTuner(self.name, self.digest, **self.tuner_options).directory_root
        return None if root is None else str(root)

    def record_call(self, report: Optional[Any]) -> None:
        """The last call's report, when the C hit path did not serve it."""
        self.last_report = report
        dispatcher = self.dispatcher()
        if getattr(dispatcher, "_last_hit", None) is not None:
            del dispatcher._last_hit

    def merge(self, kwargs: dict, entry: Mapping[str, Any], allow_overwrite: bool) -> dict:
        """The launcher's keyword arguments: the call's and the entry's."""
        if not kwargs:
            return entry  # type: ignore[return-value]
        clash = kwargs.keys() & entry.keys()
        if clash and not allow_overwrite:
            raise _core.InvalidSetting(
                f"disttune: '{self.name}' was called with {sorted(clash)} which its config entry also "
                "sets; pass autotune_allow_arg_overwrite=True to let the entry's value win"
            )
        return {**kwargs, **entry}

    def lookup(self, key: Any) -> Optional[dict]:
        """The entry this process chose for `key`, or None."""
        try:
            return self.cache.get(key)
        except TypeError:
            return self.cache_by_text.get(_encoding.key_text(key))

    def call(
        self, key: Any, seen: int, args: tuple, kwargs: dict, verbose: bool, group: Any, allow_overwrite: bool
    ) -> Any:
        """A call whose key the caller looked up among the `seen` keys of the hit table and
        did not find (-1: unhashable, not searched): the key's entry (tuned if no thread chose
        it meanwhile), then the launcher's run with it."""
        with self.lock:
            # Another thread may have tuned this key since the caller's lookup, and only
            # then is it looked up again.
            entry = self.lookup(key) if seen != len(self.hits) else None
            if entry is None:
                entry = self._tune(key, args, kwargs, verbose, group, allow_overwrite)
            else:
                self.record_call(self._memory_report(key))
        return self.fn(*args, **self.merge(kwargs, entry, allow_overwrite))

    def choose(self, key: Any, args: tuple, kwargs: dict) -> Any:
        """The report of `key`'s choice, tuned by this rank alone unless already chosen (a
        sweep's step; the launcher's final run is not made)."""
        with self.lock:
            if self.lookup(key) is None:
                self._tune(key, args, kwargs, False, _ranks.ALONE, False)
            else:
                self.record_call(self._memory_report(key))
            return self.last_report

    def _remember(self, key: Any, entry: dict, report: Any) -> None:
        memory = report.from_memory()
        try:
            self.cache[key] = entry
            self.hits[key] = (tuple(entry), tuple(entry.values()), memory, entry)
        except TypeError:
            text = _encoding.key_text(key)
            self.cache_by_text[text] = entry
            self.memory_by_text[text] = memory

    def _memory_report(self, key: Any) -> Optional[Any]:
        """The report of a key this process chose before, source "memory"."""
        try:
            hit = self.hits.get(key)
            return hit[2] if hit is not None else None
        except TypeError:
            return self.memory_by_text.get(_encoding.key_text(key))

    def _tuner(self, args: tuple, kwargs: dict, group: Any) -> Any:
        if self.candidate_options.isolate:
            device = _timing.work_device(args, kwargs, group)
            identity, worker_timer = _isolation.worker_timer_for(device, self.timing.flush_l2, self.timing.graph_runs)
            make_timer: Callable[[], Any] = lambda: worker_timer
        else:
            identity, make_timer = _timing.timer_choice(self.timer, args, kwargs, group, self.timing)
        tuner = self.tuners.get(identity)
        if tuner is None:
            timer = make_timer()
            tuner = _core.FunctionTuner(
                self.name,
                self.digest,
                timer=timer,
                deps_json=json.dumps(_timing.software_facts()),
                **self.tuner_options,
            )
            self.tuners[identity] = tuner
            if self.candidate_options.isolate:
                self.worker_timers[id(tuner)] = timer
        return tuner

    def _compile_pipeline(
        self, surviving: list[int], candidates: list[str], args: tuple, kwargs: dict, tuner: Any, communicator: Any
    ) -> Optional[_prepare.CompilePipeline]:
        """The engine's prepare for one tuning: `precompile` in a pool, ahead of the runs.
        In a rank-split tuning the engine names only this rank's share, and ranks of one
        host (torchrun's LOCAL_WORLD_SIZE) compile on disjoint slices of the cores."""
        precompile = self.compiles.precompile
        if precompile is None:
            return None
        signature = _resources.dtype_signature(args, kwargs)
        self.unrunnable.learn_from_store(tuner, signature)
        cores = None
        if tuner.split_across_ranks and communicator is not None and communicator.size > 1:
            cores = _prepare.rank_cores(communicator.local_rank, int(os.environ.get("LOCAL_WORLD_SIZE", "1")))
        return _prepare.CompilePipeline(
            lambda c: precompile(self.config_space[surviving[c]], *args, **kwargs),
            self.compiles.threads,
            self.compiles.timeout_s,
            cores,
            self.unrunnable.of(candidates.__getitem__, signature),
        )

    def _tune(self, key: Any, args: tuple, kwargs: dict, verbose: bool, group: Any, allow_overwrite: bool) -> dict:
        self.call_check.check(args, kwargs)  # a wrong call is one TypeError, before any run
        text = _encoding.key_text(key)
        surviving = [
            i
            for i, entry in enumerate(self.config_space)
            if self.prune_fn is None or self.prune_fn(entry, *args, **kwargs)
        ]
        if not surviving:
            raise _core.TuningFailed(f"disttune: prune_fn of '{self.name}' removed every config for key {text}")
        if group is None:
            group = _ranks.default_group()
        elif group is _ranks.ALONE:
            group = None
        tuner = self._tuner(args, kwargs, group)
        communicator = _ranks.communicator_for(group) if group is not None else None
        candidates = [self.candidates[i] for i in surviving]
        kept = set(surviving)
        pruned = [text for i, text in enumerate(self.candidates) if i not in kept]
        pipeline = self._compile_pipeline(surviving, candidates, args, kwargs, tuner, communicator)
        prepare = pipeline.prepare if pipeline is not None else None
        prepared = pipeline.prepared if pipeline is not None else None
        options = self.candidate_options
        restorer = options.restorer(self.fn, args, kwargs)
        try:
            if options.isolate:
                tuning = options.worker_tuning(args, kwargs, candidates, self.candidates)
                report = _isolation.resolve(
                    tuner, self.worker_timers[id(tuner)], tuning, options.timeout_s, prepare, text, verbose,
                    communicator, pruned, prepared, self.compiles.threads,
                )
            else:
                calls = [self.merge(kwargs, self.config_space[i], allow_overwrite) for i in surviving]
                reference = options.reference_index()
                reference_call = (
                    self.merge(kwargs, self.config_space[reference], allow_overwrite) if reference is not None else None
                )
                runs = launcher_runs(self.fn, args, kwargs, calls, restorer, options.output_check, reference_call)
                report = tuner.resolve(text, candidates, runs.run, verbose, communicator, prepare, pruned, prepared,
                                       compile_threads=self.compiles.threads)
        finally:
            if pipeline is not None:
                pipeline.close()
                self.last_compiles = sorted(pipeline.timeline, key=lambda event: event[1])
            if restorer is not None:
                restorer.restore_all()  # the final run sees the caller's inputs
        self.record_call(report)
        entry = self.config_space[surviving[report.best]]
        self._remember(key, entry, report)
        return entry
