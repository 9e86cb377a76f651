"""disttune.tune.autotune: the spec's decorator semantics on CPU launchers."""

import json
import os
import subprocess
import sys
import warnings

import pytest
import torch

import disttune
from disttune import _core
from disttune.tune import AutotunedFunction, autotune, to_hashable

from launchers import COST_TIMER, SPACE, CountingLauncher, key_fn
from step_timer import StepTimer

RUNS_PER_ENTRY = 5 + 10  # the spec's warm-up and timed runs


def tuned(launcher, space=SPACE, prune_fn=None, **options):
    options.setdefault("timer", COST_TIMER)
    @autotune(config_space=space, key_fn=key_fn, prune_fn=prune_fn, **options)
    def launch(x, alpha=1.0, speed=0.0, tag=None):
        return launcher(x, alpha, speed, tag)

    return launch


def test_first_call_tunes_every_entry_then_runs_the_best():
    launcher = CountingLauncher()
    launch = tuned(launcher)
    assert launch(1, 2.0) == (1, 2.0, "fast")
    assert launcher.runs == {"slow": RUNS_PER_ENTRY, "fast": RUNS_PER_ENTRY + 1, "middle": RUNS_PER_ENTRY}
    assert launch.last_report.source == "tuned"
    assert [c.config for c in launch.last_report.candidates] == launch.candidates


def test_same_key_never_tunes_again():
    launcher = CountingLauncher()
    launch = tuned(launcher)
    launch(1)
    before = launcher.total
    for _ in range(5):
        assert launch(1)[2] == "fast"
    assert launcher.total == before + 5
    launch(2)  # a new key tunes
    assert launcher.total == before + 5 + 3 * RUNS_PER_ENTRY + 1


def test_autotune_false_runs_the_first_entry_without_tuning_or_cache():
    launcher = CountingLauncher()
    launch = tuned(launcher)
    assert launch(1, autotune=False)[2] == "slow"
    assert launcher.total == 1
    assert launch.cache == {}


def test_duplicate_keyword_is_an_error_unless_allowed():
    launcher = CountingLauncher()
    launch = tuned(launcher)
    with pytest.raises(ValueError, match="autotune_allow_arg_overwrite"):
        launch(1, tag="mine")
    assert launcher.total == 0
    assert launch(1, tag="mine", autotune_allow_arg_overwrite=True)[2] == "fast"


def test_other_keywords_pass_through():
    launcher = CountingLauncher()
    launch = tuned(launcher)
    assert launch(1, alpha=3.0) == (1, 3.0, "fast")
    assert launch(1, alpha=4.0, autotune_verbose=True) == (1, 4.0, "fast")


def test_prune_fn_filters_entries():
    launcher = CountingLauncher()
    launch = tuned(launcher, prune_fn=lambda entry, x, *a, **k: entry["tag"] != "fast")
    assert launch(1)[2] == "middle"
    assert "fast" not in launcher.runs
    assert len(launch.last_report.candidates) == 2


def test_prune_fn_removing_everything_is_an_error():
    launch = tuned(CountingLauncher(), prune_fn=lambda *a, **k: False)
    with pytest.raises(RuntimeError, match="removed every config"):
        launch(1)


def test_disk_record_is_reused_by_a_new_process_state(private_cache):
    first = CountingLauncher()
    tuned(first)(7)
    records = list((private_cache / "launch").glob("*.json"))
    assert len(records) == 1
    second = CountingLauncher()
    launch = tuned(second)
    assert launch(7)[2] == "fast"
    assert second.total == 1  # no tuning: the record was used
    assert launch.last_report.source == "disk"


def test_a_grown_space_measures_the_stored_best_with_the_new_entry(private_cache):
    tuned(CountingLauncher())(7)  # "fast" is stored
    launcher = CountingLauncher()
    launch = tuned(launcher, space=SPACE + [{"tag": "faster", "speed": 0.02}])
    assert launch(7)[2] == "faster"
    # Only the stored best and the new entry were measured, in one round.
    assert launcher.runs == {"fast": RUNS_PER_ENTRY, "faster": RUNS_PER_ENTRY + 1}
    assert launch.last_report.source == "tuned"
    record = json.loads(launch.last_report.record_path.read_text())
    assert record["refreshed"]["measured"] == [1, 3]
    assert record["refreshed"]["previous_best"] == 1
    assert record["best"]["index"] == 3
    assert len(record["candidates"]) == 4


def test_always_tune_ignores_stored_results(monkeypatch):
    tuned(CountingLauncher())(7)
    monkeypatch.setenv("TRITON_DIST_AUTOTUNE_ALWAYS_TUNE", "1")
    launcher = CountingLauncher()
    tuned(launcher)(7)
    assert launcher.total == 3 * RUNS_PER_ENTRY + 1


def test_cache_dir_option_and_log_file(tmp_path):
    launch = tuned(CountingLauncher(), cache_dir=str(tmp_path / "elsewhere"))
    launch(3)
    report = launch.last_report
    assert str(report.record_path).startswith(str(tmp_path / "elsewhere" / "launch"))
    assert report.log_path is not None and os.path.exists(report.log_path)


def test_record_says_whether_the_timer_flushed(tmp_path):
    # The CPU timer times the runs (asked for: on a GPU machine an initialised CUDA context
    # would choose device events): flush_l2=True cannot clear a device cache, and the
    # record says that no flush happened.
    launch = tuned(CountingLauncher(), flush_l2=True, timer="cpu", cache_dir=str(tmp_path))
    launch(3)
    record = json.loads(launch.last_report.record_path.read_text())
    assert record["measurement"]["flush_l2"] is False


def test_measurement_options_reach_the_engine():
    launcher = CountingLauncher()
    launch = tuned(launcher, warmup_runs=1, timed_runs=2, statistic="min", disk_cache=False)
    launch(1)
    assert launcher.runs["slow"] == 3
    assert all(len(c.samples) == 2 for c in launch.last_report.candidates)
    with pytest.raises(ValueError):
        tuned(launcher, timed_runs=0)
    with pytest.raises(ValueError):
        tuned(launcher, statistic="mode")
    with pytest.raises(ValueError):
        tuned(launcher, strategy="no-such-strategy")


def test_autotunedfunction_takes_autotunes_options_by_name_with_its_defaults():
    launcher = CountingLauncher()

    def launch(x, alpha=1.0, speed=0.0, tag=None):
        return launcher(x, alpha, speed, tag)

    direct = AutotunedFunction(launch, SPACE, key_fn, timed_runs=2, disk_cache=False, timer=COST_TIMER)
    direct(1)
    assert all(len(c.samples) == 2 for c in direct.last_report.candidates)
    assert launcher.runs["slow"] == 5 + 2  # warmup_runs: autotune()'s default
    with pytest.raises(TypeError, match="timed_run"):
        AutotunedFunction(launch, SPACE, key_fn, timed_run=2)  # a misspelt option is no silent default


def test_a_failing_entry_fails_alone():
    calls = []

    @autotune(config_space=[{"mode": "boom"}, {"mode": "ok"}], key_fn=lambda x: x)
    def launch(x, mode):
        calls.append(mode)
        if mode == "boom":
            raise RuntimeError("out of resources")
        return mode

    assert launch(1) == "ok"
    report = launch.last_report
    assert report.candidates[0].failed and "out of resources" in report.candidates[0].error
    assert calls.count("boom") == 1  # a failed entry is not run again


def test_every_entry_failing_is_an_error_that_says_why():
    @autotune(config_space=[{"mode": 1}, {"mode": 2}], key_fn=lambda x: x)
    def launch(x, mode):
        raise ValueError(f"bad mode {mode}")

    with pytest.raises(RuntimeError, match="bad mode 1(.|\n)*bad mode 2"):
        launch(1)


def test_bad_inputs_are_clear_errors():
    with pytest.raises(ValueError, match="empty"):
        autotune(config_space=[], key_fn=key_fn)(lambda x: x)
    with pytest.raises(TypeError, match="key_fn"):
        autotune(config_space=SPACE, key_fn=None)(lambda x: x)
    with pytest.raises(TypeError, match=r"config_space\[0\]"):
        autotune(config_space=[{"f": object()}], key_fn=key_fn)(lambda x, f: x)

    class Handle:
        pass

    launch = tuned(CountingLauncher())
    with pytest.raises(TypeError, match="memory address"):
        launch(Handle())


def test_unhashable_keys_use_their_canonical_text():
    launcher = CountingLauncher()

    @autotune(config_space=SPACE, key_fn=lambda x, *a, **k: [len(x)], timer=COST_TIMER)
    def launch(x, alpha=1.0, speed=0.0, tag=None):
        return launcher(x, alpha, speed, tag)

    launch([1, 2])
    before = launcher.total
    launch([3, 4])
    assert launcher.total == before + 1


def test_tensor_keys():
    launcher = CountingLauncher()

    @autotune(config_space=SPACE, key_fn=lambda x, *a, **k: (to_hashable(x), str(x.dtype)), timer=COST_TIMER)
    def launch(x, alpha=1.0, speed=0.0, tag=None):
        return launcher(x, alpha, speed, tag)

    x = torch.zeros(8, 4)
    launch(x)
    before = launcher.total
    launch(torch.ones(8, 4))
    assert launcher.total == before + 1
    launch(torch.ones(4, 8))
    assert launcher.total > before + 2


def test_verbose_prints_the_table(capfd):
    tuned(CountingLauncher())(1, autotune_verbose=True)
    err = capfd.readouterr().err
    assert '"tag":"fast"' in err and '"tag":"slow"' in err


def test_function_without_source_falls_back_with_a_warning():
    namespace = {}
    exec("def launch(x, tag=None, speed=0.0):\n    return tag\n", namespace)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        launch = autotune(config_space=SPACE, key_fn=key_fn)(namespace["launch"])
    assert any("no source" in str(w.message) for w in caught)
    assert launch(1) in {"slow", "fast", "middle"}
    assert launch.last_report.source == "tuned"


def test_source_change_gives_a_new_digest():
    first = autotune(config_space=SPACE, key_fn=key_fn)(CountingLauncher.__call__)
    second = tuned(CountingLauncher())
    assert first.digest != second.digest
    assert len(first.digest) == 64


def test_precompile_runs_once_per_entry_before_its_runs():
    order = []

    def precompile(entry, x, *args, **kwargs):
        order.append(("compile", entry["tag"]))

    launcher = CountingLauncher()

    @autotune(config_space=SPACE, key_fn=key_fn, precompile=precompile, disk_cache=False, timer=COST_TIMER)
    def launch(x, alpha=1.0, speed=0.0, tag=None):
        order.append(("run", tag))
        return launcher(x, alpha, speed, tag)

    launch(1)
    compiles = [item for item in order if item[0] == "compile"]
    assert sorted(compiles) == sorted(("compile", e["tag"]) for e in SPACE)
    for entry in SPACE:  # pipelined: each entry's compile precedes its own runs only
        assert order.index(("compile", entry["tag"])) < order.index(("run", entry["tag"]))


def test_precompile_failure_fails_that_entry():
    def precompile(entry, x, *args, **kwargs):
        if entry["tag"] == "fast":
            raise RuntimeError("ptxas error")

    launch = tuned(CountingLauncher(), precompile=precompile, disk_cache=False)
    assert launch(1)[2] == "middle"
    assert "ptxas error" in launch.last_report.candidates[1].error


def test_python_timer_subclass_drives_the_measurement():
    timer = StepTimer("fixed", '{"device": "test"}')
    tuner = _core.FunctionTuner("fixed", "digest", timer=timer, disk_cache=False)
    durations = [3.0, 1.0, 2.0]

    def run(i):
        timer.current = durations[i]

    report = tuner.resolve("[1]", ['{"i":0}', '{"i":1}', '{"i":2}'], run)
    assert report.best == 1
    assert report.candidates[0].samples == [3.0] * 10
    assert '"device":"test"' in timer.hardware_json()
    assert timer.flushes_l2() is False  # the base's answer when a subclass does not override it


def test_importing_disttune_imports_neither_torch_nor_triton():
    code = (
        "import sys, disttune, disttune.tune, disttune.autotuner\n"
        "assert 'torch' not in sys.modules and 'triton' not in sys.modules, sorted(sys.modules)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_package_metadata():
    assert disttune.__version__.count(".") == 2
    assert issubclass(disttune.CollectiveTimeout, TimeoutError)


def test_keyboard_interrupt_ends_the_tuning(private_cache):
    calls = []

    @autotune(config_space=SPACE, key_fn=key_fn, timer=COST_TIMER)
    def launch(x, alpha=1.0, speed=0.0, tag=None):
        calls.append(tag)
        if tag == "fast":
            raise KeyboardInterrupt
        return tag

    with pytest.raises(KeyboardInterrupt):
        launch(1)
    assert "middle" not in calls  # nothing ran after the interrupt
    assert launch.cache == {}
    assert not list(private_cache.rglob("*.json"))  # an interrupted tuning leaves no record


@pytest.mark.parametrize("seconds", [0.0, -1.0, float("nan")])
def test_a_deadline_that_is_not_positive_is_a_clear_error(seconds):
    with pytest.raises(ValueError, match="collective_timeout_s must be positive"):
        _core.FunctionTuner("f", "v1", collective_timeout_s=seconds, disk_cache=False)
    with pytest.raises(ValueError, match="collective_timeout_s must be positive"):
        _core.ContextualAutotuner("f", collective_timeout_s=seconds)
