"""The compile pipeline of autotune(precompile=...): compiles ahead of the runs, measuring
while the pool compiles, configs out of resources failing before launch and remembered
across keys (in process and from stored records), compile_timeout_s, rank core slices."""

import threading
import time

import pytest

from disttune import _core, _prepare, _resources
from disttune.tune import autotune

import compile_seen_strategy
from step_timer import StepTimer

SPACE = [{"tag": tag, "ms": ms} for tag, ms in (("a", 3.0), ("b", 1.0), ("c", 2.0), ("d", 4.0))]


class OutOfResources(Exception):
    """Named as Triton's: what CompiledKernel._init_handles raises for a kernel too big."""


class FakeKernel:
    """What a Triton precompile returns: loading it runs Triton's resource check."""

    def __init__(self, fits):
        self.fits = fits
        self.loads = 0

    def _init_handles(self):
        self.loads += 1
        if not self.fits:
            raise OutOfResources("out of resource: shared memory, Required: 262144, Hardware limit: 232448")


def make(precompile, on_run=None, **options):
    """A launcher over SPACE whose timed runs take the entry's `ms` (a StepTimer: no clock);
    `on_run(tag)` is called at each run."""
    timer = StepTimer()
    runs = []

    @autotune(config_space=SPACE, key_fn=lambda x: x, precompile=precompile, timer=timer, strategy="exhaustive",
              warmup_runs=1, timed_runs=2, **options)
    def launch(x, tag, ms):
        if on_run is not None:
            on_run(tag)
        runs.append(tag)
        timer.current = ms
        return tag

    return launch, runs


def test_measuring_starts_while_later_entries_still_compile():
    first_run = threading.Event()
    compiled = []

    def precompile(entry, x):
        if entry["tag"] == "d":
            # Without a pipeline no run happens before every compile ends: this would time out.
            assert first_run.wait(30), "no run started while an entry was compiling"
        compiled.append(entry["tag"])

    launch, runs = make(precompile, on_run=lambda tag: first_run.set(), disk_cache=False, precompile_threads=2)
    assert launch(1) == "b"
    assert sorted(compiled) == ["a", "b", "c", "d"]  # each entry once
    assert runs.count("a") == 3 and runs.count("d") == 3
    assert launch.last_report.prepared == 4  # compiled, against the 4 measured


def test_each_entry_compiles_before_its_own_first_run():
    order = []

    def precompile(entry, x):
        order.append(("compile", entry["tag"]))

    launch, _ = make(precompile, on_run=lambda tag: order.append(("run", tag)), disk_cache=False)
    launch(1)
    for entry in SPACE:
        tag = entry["tag"]
        assert order.index(("compile", tag)) < order.index(("run", tag))
    assert sum(1 for kind, _ in order if kind == "compile") == len(SPACE)


def test_out_of_resources_fails_before_launch_and_is_remembered_for_other_keys():
    compiles = []

    def precompile(entry, x):
        compiles.append(entry["tag"])
        return FakeKernel(fits=entry["tag"] != "b")

    launch, runs = make(precompile, disk_cache=False)
    assert launch(1) == "c"
    failed = launch.last_report.candidates[1]
    assert failed.failed and failed.error.startswith("out of resources: out of resource: shared memory")
    assert "b" not in runs  # never launched
    compiles.clear()
    assert launch(2) == "c"  # another key: "b" is not compiled again, and fails the same way
    assert sorted(compiles) == ["a", "c", "d"]
    assert launch.last_report.candidates[1].error == failed.error


def test_out_of_resources_is_read_from_stored_records_of_other_keys(tmp_path):
    def precompile(entry, x):
        compiles.append(entry["tag"])
        return FakeKernel(fits=entry["tag"] != "b")

    compiles = []
    first, _ = make(precompile, cache_dir=str(tmp_path))
    assert first(1) == "c"
    compiles.clear()
    # A new process would have a new function object: nothing in memory, the record on disk.
    again, _ = make(precompile, cache_dir=str(tmp_path))
    assert again(2) == "c"
    assert sorted(compiles) == ["a", "c", "d"]
    assert again.last_report.candidates[1].error.startswith("out of resources: ")


def test_a_compile_longer_than_compile_timeout_s_fails_its_entry():
    release = threading.Event()

    def precompile(entry, x):
        if entry["tag"] == "b":
            release.wait(30)

    launch, runs = make(precompile, disk_cache=False, compile_timeout_s=0.2)
    try:
        assert launch(1) == "c"
    finally:
        release.set()
    assert launch.last_report.candidates[1].error == "compile timed out after 0.2 s (compile_timeout_s)"
    assert "b" not in runs


def test_a_compile_error_fails_only_its_entry():
    def precompile(entry, x):
        if entry["tag"] == "b":
            raise RuntimeError("ptxas error")

    launch, _ = make(precompile, disk_cache=False)
    assert launch(1) == "c"
    assert "ptxas error" in launch.last_report.candidates[1].error


@pytest.mark.parametrize("bad", [0, -1.0, float("inf"), float("nan"), "5"])
def test_bad_compile_timeout_is_refused(bad):
    with pytest.raises(_core.InvalidSetting, match="compile_timeout_s"):
        make(lambda entry, x: None, disk_cache=False, compile_timeout_s=bad)


def test_bad_precompile_threads_is_refused():
    with pytest.raises(_core.InvalidSetting, match="precompile_threads"):
        make(lambda entry, x: None, disk_cache=False, precompile_threads=0)


def test_ranks_of_one_host_get_disjoint_core_slices(monkeypatch):
    monkeypatch.setattr(_prepare.os, "sched_getaffinity", lambda pid: set(range(16)))
    slices = [_prepare.rank_cores(rank, 2) for rank in range(2)]
    assert slices == [list(range(8)), list(range(8, 16))]
    assert _prepare.rank_cores(0, 1) is None  # alone on its host: every core
    assert _prepare.rank_cores(3, 32) is None  # fewer cores than ranks: no pinning


class _FakeCompile:
    """A Triton FutureKernel stand-in: result() hands the compiled kernel over."""

    def __init__(self, kernel):
        self.kernel = kernel

    def result(self, ignore_errors=False):
        return self.kernel


class _FakeAutotuned:
    """The parts of a triton.autotune kernel the contextual hook's _KernelKey reads."""

    def __init__(self, configs):
        self.configs = configs
        self.base_fn = lambda: None
        self.base_fn.__name__ = "fake_kernel"

    def prune_configs(self, kwargs):
        return self.configs


def test_contextual_candidates_out_of_resources_fail_before_launch_and_skip_later_keys():
    triton = pytest.importorskip("triton")
    from disttune import _triton_hook

    kernel = _FakeAutotuned([triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 4096})])
    first = _triton_hook._KernelKey(kernel, (1024,), (), {})
    first.compiles = {0: _FakeCompile(FakeKernel(fits=True)), 1: _FakeCompile(FakeKernel(fits=False))}
    first.ready(0)  # compiled and fits: launches
    with pytest.raises(_core.EngineError, match="out of resources: out of resource: shared memory"):
        first.ready(1)
    # Another key of the same kernel: no compile to wait for, it fails at once.
    second = _triton_hook._KernelKey(kernel, (2048,), (), {})
    assert second.compiles == {}
    with pytest.raises(_core.EngineError, match="out of resources"):
        second.ready(1)
    second.ready(0)


def test_a_compile_past_compile_timeout_s_counts_as_ended():
    """A round that waits for one more compile asks `prepared`: a compile running longer than
    the timeout answers as ended (its prepare then fails it), so the wait ends."""
    release = threading.Event()

    def compile_one(candidate):
        assert release.wait(30)

    unrunnable = _resources.Unrunnable().of(str, ())
    pipeline = _prepare.CompilePipeline(compile_one, 1, 0.2, None, unrunnable)
    try:
        assert pipeline.prepare([], [0]) == []
        deadline = time.monotonic() + 10
        while pipeline.prepared(0) is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert pipeline.prepared(0) == 0.2
        assert pipeline.prepare([0], []) == ["compile timed out after 0.2 s (compile_timeout_s)"]
    finally:
        release.set()
        pipeline.close()


def test_the_pipeline_says_without_waiting_which_entries_are_compiled():
    """CompilePipeline.prepared (the engine's TuningRequest::prepared): None while an entry's
    compile is queued or running or was never asked for, then the seconds it took."""
    release = threading.Event()

    def compile_one(candidate):
        if candidate == 1:
            assert release.wait(30)

    unrunnable = _resources.Unrunnable().of(str, ())
    pipeline = _prepare.CompilePipeline(compile_one, 2, None, None, unrunnable)
    try:
        assert pipeline.prepare([0], [1]) == [""]
        assert pipeline.prepared(0) is not None and pipeline.prepared(0) >= 0.0
        assert pipeline.prepared(1) is None  # still compiling
        assert pipeline.prepared(2) is None  # never asked for
        release.set()
        assert pipeline.prepare([1], []) == [""]
        assert pipeline.prepared(1) is not None and pipeline.prepared(1) >= 0.0
    finally:
        release.set()
        pipeline.close()


def test_a_strategy_is_told_which_entries_are_compiled_and_how_long_each_took():
    """autotune(precompile=...) hands the pipeline's answers to the engine: after a round, the
    strategy's standings say which entries' compiles ended, with their seconds (at least the
    precompile's 20 ms sleep), and that those never named were not compiled. The search shapes
    its rounds by them (docs/strategies.md, "Rounds shaped by the compile cost")."""
    compile_seen_strategy.seen.clear()
    timer = StepTimer()

    @autotune(config_space=SPACE, key_fn=lambda x: x, precompile=lambda entry, x: time.sleep(0.02), timer=timer,
              strategy=compile_seen_strategy.NAME, disk_cache=False)
    def launch(x, tag, ms):
        timer.current = ms
        return tag

    assert launch(1) == "b"
    seen = compile_seen_strategy.seen
    assert len(seen) == 1
    assert [prepared for prepared, _ in seen[0]] == [True, True, False, False]
    assert all(seconds >= 0.02 for _, seconds in seen[0][:2])
    assert all(seconds == 0.0 for _, seconds in seen[0][2:])


def test_the_search_names_no_more_compiles_than_the_precompile_threads_leave_free():
    """The engine tells the strategy the pipeline's threads (TuningRequest::compile_threads): on 2
    threads the search's rounds of 4 leave none free, so it names nothing ahead and compiles
    exactly what it measures; on the default 16 it also compiles guesses named ahead
    (docs/strategies.md, "search")."""
    space = [{"tag": i, "ms": 1.0 + 0.01 * abs(i - 123)} for i in range(300)]
    for threads in (2, 16):
        timer = StepTimer()

        @autotune(config_space=space, key_fn=lambda x: x, precompile=lambda entry, x: None, timer=timer,
                  strategy="search", disk_cache=False, precompile_threads=threads)
        def launch(x, tag, ms):
            timer.current = ms
            return tag

        launch(1)
        report = launch.last_report
        measured = sum(1 for candidate in report.candidates if candidate.measured)
        if threads == 2:
            assert report.prepared == measured
        else:
            assert report.prepared > measured
