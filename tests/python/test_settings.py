"""Settings: defaults defined once in the engine, environment variables honoured or refused,
bounds on numeric options, and collective deadlines (also with two gloo ranks)."""

import inspect
import json
import math
import pathlib

import pytest
import torch.distributed as dist

import disttune
from disttune import _core, _options
from disttune.autotuner import contextual_autotune
from disttune.tune import autotune

from launchers import COST_TIMER, SPACE, CountingLauncher, key_fn
from spawn_ranks import run_ranks


def tuned(launcher=None, **options):
    launcher = launcher or CountingLauncher()

    options.setdefault("timer", COST_TIMER)
    @autotune(config_space=SPACE, key_fn=key_fn, **options)
    def launch(x, alpha=1.0, speed=0.0, tag=None):
        return launcher(x, alpha, speed, tag)

    return launch


def test_the_signatures_show_the_engines_defaults():
    function = inspect.signature(autotune).parameters
    assert function["warmup_runs"].default == _core.function_defaults["warmup_runs"] == 5
    assert function["timed_runs"].default == _core.function_defaults["timed_runs"] == 10
    assert function["statistic"].default == "median"
    assert function["strategy"].default is None
    contextual = inspect.signature(contextual_autotune).parameters
    assert contextual["n_repeat"].default == _core.contextual_defaults["n_repeat"] == 5
    assert contextual["n_warmup"].default == _core.contextual_defaults["n_warmup"] == 3
    assert contextual["is_dist"].default is False
    assert contextual["statistic"].default == "mean"
    assert {name: _core.function_defaults[name] for name in ("max_noise", "min_time_ms", "budget_ms")} == {
        "max_noise": None, "min_time_ms": None, "budget_ms": None}  # the strategy's defaults
    assert contextual["strategy"].default == _core.contextual_defaults["strategy"] == "exhaustive"  # the spec's
    assert contextual["log_dir"].default is _core.contextual_defaults["log_dir"] is None  # ./.autotune_logs


@pytest.mark.parametrize(
    "decorator, module, set_per_tuner, names, defaults, positional",
    [
        (autotune, disttune.tune, _options.SET_PER_TUNER, _core.function_option_names, _core.function_defaults, ()),
        (contextual_autotune, disttune.autotuner, disttune.autotuner._SET_PER_TUNER, _core.contextual_option_names,
         _core.contextual_defaults, ("is_dist", "n_repeat", "n_warmup")),
    ],
    ids=["autotune", "contextual_autotune"],
)
def test_the_decorators_engine_keywords_are_the_bindings_table(decorator, module, set_per_tuner, names, defaults,
                                                               positional):
    """Each decorator spells its engine options out (the spec's API: contextual_autotune takes
    is_dist, n_repeat and n_warmup positionally first, the rest by keyword); the binding's one
    table of its tuner's options defines them: the same names and the same defaults."""
    parameters = inspect.signature(decorator).parameters
    assert set(defaults) == set(names)
    passed = set(module._ENGINE_OPTIONS)
    assert passed == {name for name in names if name in parameters} - {"timer"}
    assert names and all(name in passed or name in set_per_tuner for name in names)
    assert tuple(parameters)[: len(positional)] == positional
    for name in passed:
        kind = inspect.Parameter.POSITIONAL_OR_KEYWORD if name in positional else inspect.Parameter.KEYWORD_ONLY
        assert parameters[name].kind is kind, name
        assert parameters[name].default == defaults[name], name


def test_the_function_tuner_refuses_an_option_outside_its_table():
    with pytest.raises(_core.InvalidSetting, match="FunctionTuner has no option 'max_nois'"):
        _core.FunctionTuner("f", "v1", max_nois=0.01, disk_cache=False)
    with pytest.raises(TypeError, match="option disk_cache must be a bool"):
        _core.FunctionTuner("f", "v1", disk_cache="no")
    with pytest.raises(_core.InvalidSetting, match="max_noise must be a number or None"):
        _core.FunctionTuner("f", "v1", strategy="converge", max_noise="0.01", disk_cache=False)


def test_the_contextual_tuner_refuses_an_option_outside_its_table():
    with pytest.raises(_core.InvalidSetting, match="ContextualAutotuner has no option 'n_warmpu'"):
        _core.ContextualAutotuner("f", n_warmpu=1)
    with pytest.raises(TypeError, match="option is_dist must be a bool"):
        _core.ContextualAutotuner("f", is_dist="no")
    with pytest.raises(TypeError, match="option n_repeat must be an int"):
        _core.ContextualAutotuner("f", n_repeat=2.5)
    with pytest.raises(TypeError, match="unexpected keyword argument 'n_warmpu'"):
        contextual_autotune(n_warmpu=1)
    with pytest.raises(TypeError, match="unexpected keyword argument 'n_warmpu'"):
        disttune.autotuner.ContextualFunction(lambda: None, n_warmpu=1)


def test_the_contextual_log_dir_takes_paths_and_none_or_empty_is_the_default(tmp_path):
    default = pathlib.Path(".autotune_logs") / "rank-0.log"
    assert _core.ContextualAutotuner("f").log_path == default
    assert _core.ContextualAutotuner("f", log_dir=None).log_path == default
    assert _core.ContextualAutotuner("f", log_dir="").log_path == default
    assert _core.ContextualAutotuner("f", log_dir=tmp_path).log_path == tmp_path / "rank-0.log"
    with pytest.raises(disttune.InvalidSetting, match="log_dir .* holds a NUL byte"):
        _core.ContextualAutotuner("f", log_dir="a\0b")


def test_the_environment_table_names_every_variable():
    names = [name for name, _, _ in _core.environment_settings()]
    assert names == [
        "TRITON_DIST_AUTOTUNE_CACHE_DIR",
        "TRITON_DIST_AUTOTUNE_CACHE_KEEP",
        "TRITON_DIST_AUTOTUNE_ALWAYS_TUNE",
        "TRITON_DIST_AUTOTUNE_VERSION_CHECK",
        "TRITON_DIST_AUTOTUNE_TABLE_MISMATCH",
        "TRITON_DIST_AUTOTUNE_TIMEOUT",
        "TRITON_DIST_AUTOTUNE_STRATEGY",
        "TRITON_DIST_AUTOTUNE_STORES",
        "TRITON_DIST_AUTOTUNE_REDIS_URL",
        "TRITON_DIST_AUTOTUNE_REDIS_PREFIX",
        "TRITON_DIST_AUTOTUNE_REDIS_TIMEOUT",
        "TRITON_DIST_AUTOTUNE_TRITON_DROPIN",
        "TRITON_DIST_AUTOTUNE_WARM_START",
        "TRITON_DIST_AUTOTUNE_SEARCH_FROM",
        "TRITON_DIST_AUTOTUNE_SEARCH_EFFORT",
        "TRITON_DIST_AUTOTUNE_TIMELINE",
        "TRITON_DIST_AUTOTUNE_COMPILE_THREADS",
    ]


def test_strategy_variable_applies_when_no_strategy_is_given(monkeypatch):
    monkeypatch.setenv("TRITON_DIST_AUTOTUNE_STRATEGY", "adaptive")
    launch = tuned()
    launch(1)
    record = json.loads(launch.last_report.record_path.read_text())
    assert record["measurement"]["strategy"] == "adaptive"
    explicit = tuned(strategy="exhaustive")
    explicit(2)
    record = json.loads(explicit.last_report.record_path.read_text())
    assert record["measurement"]["strategy"] == "exhaustive"


def test_an_unknown_strategy_in_the_variable_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("TRITON_DIST_AUTOTUNE_STRATEGY", "bogus")
    with pytest.raises(disttune.InvalidSetting, match="TRITON_DIST_AUTOTUNE_STRATEGY.*'bogus'") as raised:
        tuned()
    assert isinstance(raised.value, ValueError)
    with pytest.raises(disttune.InvalidSetting, match="TRITON_DIST_AUTOTUNE_STRATEGY.*'bogus'"):
        tuned(strategy="exhaustive")  # checked whatever the tuner's own strategy
    monkeypatch.delenv("TRITON_DIST_AUTOTUNE_STRATEGY")
    with pytest.raises(disttune.InvalidSetting, match="unknown strategy 'bogus'"):
        tuned(strategy="bogus")


def test_a_bad_switch_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("TRITON_DIST_AUTOTUNE_ALWAYS_TUNE", "sometimes")
    with pytest.raises(disttune.InvalidSetting, match="TRITON_DIST_AUTOTUNE_ALWAYS_TUNE.*'sometimes'"):
        tuned()  # when the tuner is made
    monkeypatch.delenv("TRITON_DIST_AUTOTUNE_ALWAYS_TUNE")
    launch = tuned()
    monkeypatch.setenv("TRITON_DIST_AUTOTUNE_ALWAYS_TUNE", "sometimes")
    with pytest.raises(disttune.InvalidSetting, match="TRITON_DIST_AUTOTUNE_ALWAYS_TUNE.*'sometimes'"):
        launch(1)  # and on a miss


@pytest.mark.parametrize("count", [0, 2**40, 2**100, 1_000_001])
def test_run_counts_out_of_bounds_name_the_setting(count):
    with pytest.raises(disttune.InvalidSetting, match=f"timed_runs must be between 1 and 1000000, got"):
        tuned(timed_runs=count)
    with pytest.raises(disttune.InvalidSetting, match="n_repeat must be between 1 and 1000000"):
        contextual_autotune(n_repeat=count)(lambda: None)
    if count:
        with pytest.raises(disttune.InvalidSetting, match="warmup_runs must be between 0 and 1000000"):
            tuned(warmup_runs=count if count > 1 else -1)
        with pytest.raises(disttune.InvalidSetting, match="n_warmup must be between 0 and 1000000"):
            contextual_autotune(n_warmup=count if count > 1 else -1)(lambda: None)


def test_an_empty_cache_dir_means_the_default(private_cache):
    launch = tuned(cache_dir="")
    launch(1)
    assert launch.last_report.record_path.is_relative_to(private_cache)


@pytest.mark.parametrize("seconds", [1e-9, 0.0004])
def test_a_deadline_under_a_millisecond_is_a_clear_error(seconds):
    with pytest.raises(disttune.InvalidSetting, match="collective_timeout_s must be positive: at least 0.001"):
        tuned(collective_timeout_s=seconds)
    with pytest.raises(disttune.InvalidSetting, match="collective_timeout_s must be positive: at least 0.001"):
        contextual_autotune(collective_timeout_s=seconds)(lambda: None)


def test_an_infinite_or_huge_deadline_is_no_deadline():
    assert _core.collective_timeout_s(math.inf) == math.inf
    assert _core.collective_timeout_s(1e300) == math.inf
    assert _core.collective_timeout_s(2.0) == 2.0
    launch = tuned(collective_timeout_s=math.inf)
    assert launch(1) == (1, 1.0, "fast")


@pytest.mark.parametrize("text, seconds", [("inf", math.inf), ("none", math.inf), ("1e10", 1e10), ("2.5", 2.5)])
def test_the_timeout_variable_is_read_by_the_engines_rule(monkeypatch, text, seconds):
    monkeypatch.setenv("TRITON_DIST_AUTOTUNE_TIMEOUT", text)
    assert _core.collective_timeout_setting_s() == seconds


def test_a_timeout_variable_under_a_millisecond_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("TRITON_DIST_AUTOTUNE_TIMEOUT", "1e-9")
    with pytest.raises(disttune.InvalidSetting, match="TRITON_DIST_AUTOTUNE_TIMEOUT='1e-9' must be positive"):
        tuned()
    with pytest.raises(disttune.InvalidSetting, match="TRITON_DIST_AUTOTUNE_TIMEOUT"):
        _core.collective_timeout_setting_s()


def _tune_two_configs(rank, world):
    @autotune(config_space=[{"tag": "a"}, {"tag": "b"}], key_fn=lambda x: x)
    def launch(x, tag):
        return tag

    return (launch(1), launch.last_report.source)


def _two_ranks(tmp_path, timeout):
    env = {"TRITON_DIST_AUTOTUNE_CACHE_DIR": tmp_path, "TRITON_DIST_AUTOTUNE_TIMEOUT": timeout}
    outcomes = run_ranks(_tune_two_configs, 2, "gloo", env=env, timeout_s=120)
    assert sorted(outcomes) == [0, 1], outcomes
    return outcomes


@pytest.mark.skipif(not dist.is_available(), reason="torch.distributed is not built in this torch")
@pytest.mark.parametrize("timeout", ["1e10", "inf"])
def test_two_ranks_tune_normally_without_a_practical_deadline(tmp_path, timeout):
    outcomes = _two_ranks(tmp_path, timeout)
    assert outcomes[0] == outcomes[1], outcomes
    assert outcomes[0][0] in ("a", "b") and outcomes[0][1] == "tuned", outcomes


@pytest.mark.skipif(not dist.is_available(), reason="torch.distributed is not built in this torch")
def test_two_ranks_refuse_a_timeout_under_a_millisecond(tmp_path):
    outcomes = _two_ranks(tmp_path, "1e-9")
    for rank in range(2):
        assert outcomes[rank]["error"].startswith("InvalidSetting: disttune: TRITON_DIST_AUTOTUNE_TIMEOUT='1e-9'"), outcomes


@pytest.mark.parametrize("threads, made", [("3", 3), ("40", 40)])
def test_the_compile_pool_has_the_threads_the_variable_names(monkeypatch, threads, made):
    # The process's one pool is made at first use; a fresh process makes it under the variable.
    import subprocess
    import sys

    monkeypatch.setenv("TRITON_DIST_AUTOTUNE_COMPILE_THREADS", threads)
    shown = subprocess.run(
        [sys.executable, "-c", "from disttune import _triton_compile; print(_triton_compile.process_pool()._max_workers)"],
        capture_output=True, text=True, check=True,
    )
    assert int(shown.stdout) == made


def test_a_bad_compile_threads_is_refused_naming_the_variable(monkeypatch):
    from disttune import _triton_compile

    monkeypatch.setattr(_triton_compile, "_pool", None)
    monkeypatch.setenv("TRITON_DIST_AUTOTUNE_COMPILE_THREADS", "0")
    with pytest.raises(_core.InvalidSetting, match="TRITON_DIST_AUTOTUNE_COMPILE_THREADS must be a whole number of threads from 1 to 256, got '0'"):
        _triton_compile.process_pool()
