"""The five tuners the suite compares, behind one shape: a fresh tuning of a case (empty
caches), called like the launcher, then asked which config it chose."""

import json
from typing import Callable, Optional

from cases import Case
from spec_method import SpecMethodTuner

TUNERS = ("triton.autotune", "spec method", "disttune exhaustive", "disttune exhaustive (clock control off)",
          "disttune adaptive", "disttune converge")


class FreshTuning:
    """One tuner with nothing cached for the case: the first call(*args) tunes, later calls
    hit its cache."""

    timing = ""  # how the tuner times a candidate, for the table
    call: Callable  # the tuned launcher, set by each tuner

    def __init__(self, case: Case) -> None:
        self.case = case

    def chosen(self) -> int:
        """The index of the chosen config in case.configs."""
        raise NotImplementedError

    def timed_runs(self) -> Optional[int]:
        """Timed samples the last tuning took (None when the tuner does not say)."""
        return None

    def candidate_ms(self) -> list:
        """The time the last tuning measured for each config of the case (None where it
        measured none), for comparing with the oracle."""
        return [None] * len(self.case.configs)

    def clocks(self) -> dict:
        """What the clock control cost the last tuning (CudaTimer.clocks(); {} for none)."""
        return {}


class TritonAutotuneTuning(FreshTuning):
    """triton.autotune with its own benchmarker (do_bench: 25 ms warm-up, 100 ms of runs
    per config, L2 flushed before each run, median)."""

    timing = "do_bench (L2 flush, median)"

    def __init__(self, case: Case) -> None:
        super().__init__(case)
        case.autotuner.cache.clear()
        self.call = case.launch_autotuned

    def chosen(self) -> int:
        return self.case.index_of(self.case.autotuner.best_config)

    def candidate_ms(self) -> list:
        times = [None] * len(self.case.configs)
        for config, quantiles in self.case.autotuner.configs_timings.items():
            times[self.case.index_of(config)] = quantiles[0]
        return times


class SpecMethodTuning(FreshTuning):
    """The spec's method (spec_method.py): 5 + 10 runs per config, event pairs, mean."""

    timing = "event pair per run, mean of 10"

    def __init__(self, case: Case) -> None:
        super().__init__(case)
        self.tuner = SpecMethodTuner(case.launch, case.entries(), case.key_fn, case.prune_fn)
        self.call = self.tuner

    def chosen(self) -> int:
        return self.case.index_of(next(iter(self.tuner.cache.values()))["cfg"])

    def timed_runs(self) -> Optional[int]:
        return self.tuner.last_timed_runs

    def candidate_ms(self) -> list:
        times = [None] * len(self.case.configs)
        for index, ms in self.tuner.last_times_ms:
            times[index] = ms
        return times


def _cuda_timer(graph_runs: int, steady_clock: bool):
    """The engine's CUDA timer on torch's current stream, as autotune makes it by default;
    kept by the tuning to read its clocks. Without steady_clock it has no clock control (no
    settling before the tuning, no clock probe after each timed run, no lead kernel): what
    that control costs the measurement phase."""
    import torch

    from disttune import _core

    return _core.CudaTimer(stream=torch.cuda.current_stream().cuda_stream, graph_runs=graph_runs,
                           steady_clock=steady_clock)


class DisttuneTuning(FreshTuning):
    """disttune.tune.autotune with a strategy, no disk cache; `graph_runs` > 0 times CUDA
    graph replays of that many runs (the launch-bound mode of the engine's CudaTimer);
    `precompile` compiles every config concurrently before measuring (first calls)."""

    def __init__(self, case: Case, strategy: str, graph_runs: int, precompile: bool, steady_clock: bool = True) -> None:
        super().__init__(case)
        from disttune.tune import autotune

        self.timing = (f"graph replay x{graph_runs}" if graph_runs else "event pair per run") + ", median"
        self.timer = _cuda_timer(graph_runs, steady_clock)
        self.tuned = autotune(
            config_space=case.entries(),
            key_fn=case.key_fn,
            prune_fn=case.prune_fn,
            strategy=strategy,
            graph_runs=graph_runs,
            disk_cache=False,
            precompile=case.compile_only if precompile else None,
            timer=self.timer,
        )(case.launch)
        self.call = self.tuned

    def chosen(self) -> int:
        return self.case.index_of(next(iter(self.tuned.cache.values()))["cfg"])

    def timed_runs(self) -> Optional[int]:
        return sum(len(candidate.samples) for candidate in self.tuned.last_report.candidates)

    def clocks(self) -> dict:
        return json.loads(self.timer.clocks())

    def candidate_ms(self) -> list:
        case = self.case
        surviving = [
            index
            for index, entry in enumerate(case.entries())
            if case.prune_fn is None or case.prune_fn(entry, *case.args)
        ]
        times = [None] * len(case.configs)
        for index, candidate in zip(surviving, self.tuned.last_report.candidates):
            if candidate.measured and not candidate.failed:
                times[index] = candidate.agreed_ms
        return times


def selected(names: str) -> tuple:
    """The tuners named in a comma-separated list, in TUNERS order; all for an empty list."""
    wanted = [name.strip() for name in names.split(",") if name.strip()]
    unknown = [name for name in wanted if name not in TUNERS]
    if unknown:
        raise ValueError(f"unknown tuners {unknown}; expected some of {TUNERS}")
    return tuple(name for name in TUNERS if not wanted or name in wanted)


def fresh_tuning(tuner: str, case: Case, graph_runs: int, first_call: bool = False) -> FreshTuning:
    """A fresh tuning of `case` by `tuner` (one of TUNERS). disttune times launch-bound cases
    with `graph_runs`-run CUDA graphs; `first_call` turns on its parallel precompile."""
    if tuner == "triton.autotune":
        return TritonAutotuneTuning(case)
    if tuner == "spec method":
        return SpecMethodTuning(case)
    if tuner in ("disttune exhaustive", "disttune adaptive", "disttune converge"):
        strategy = tuner.split()[1]
        return DisttuneTuning(case, strategy, graph_runs if case.launch_bound else 0, first_call)
    if tuner == "disttune exhaustive (clock control off)":
        return DisttuneTuning(case, "exhaustive", graph_runs if case.launch_bound else 0, first_call, steady_clock=False)
    raise ValueError(f"unknown tuner '{tuner}'; expected one of {TUNERS}")
