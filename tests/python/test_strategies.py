"""The converge strategy and the baseline option of disttune.tune.autotune, on CPU launchers."""

import json

import pytest

from disttune.tune import autotune

from launchers import COST_TIMER, SPACE, CountingLauncher, key_fn


def tuned(launcher, space=SPACE, **options):
    options.setdefault("timer", COST_TIMER)
    @autotune(config_space=space, key_fn=key_fn, **options)
    def launch(x, alpha=1.0, speed=0.0, tag=None):
        return launcher(x, alpha, speed, tag)

    return launch


def record_of(launch):
    return json.loads(launch.last_report.record_path.read_text())


def test_the_spec_method_stays_the_python_default(tmp_path):
    launch = tuned(CountingLauncher(), cache_dir=str(tmp_path))
    launch(1)
    assert record_of(launch)["measurement"]["strategy"] == "exhaustive"
    assert "baseline" not in record_of(launch)


def test_converge_drops_clearly_slower_entries_after_one_sample(tmp_path):
    launcher = CountingLauncher()
    launch = tuned(launcher, strategy="converge", cache_dir=str(tmp_path))
    assert launch(1)[2] == "fast"
    slow = launch.last_report.candidates[0]
    assert len(slow.samples) == 1 and slow.dropped
    assert launcher.runs["slow"] == 2  # one warm-up and one timed run: 10x slower is screened out
    measurement = record_of(launch)["measurement"]
    assert measurement["strategy"] == "converge"
    # None given: converge's defaults, which the record does not repeat.
    assert not {"max_noise", "min_time_ms", "budget_ms", "strategy_options"} & set(measurement)


def test_converges_keywords_fill_its_options_and_the_record_keeps_them_as_numbers(tmp_path):
    launch = tuned(CountingLauncher(), strategy="converge", max_noise=0.01, budget_ms=50,
                   strategy_options={"min_time_ms": "0.25"}, cache_dir=str(tmp_path))
    assert launch(1)[2] == "fast"
    measurement = record_of(launch)["measurement"]
    assert (measurement["max_noise"], measurement["min_time_ms"], measurement["budget_ms"]) == (0.01, 0.25, 50)
    assert "strategy_options" not in measurement


def test_a_keyword_and_the_same_strategy_option_are_refused_together():
    with pytest.raises(ValueError, match=r"max_noise= and strategy_options\['max_noise'\] are both given"):
        tuned(CountingLauncher(), strategy="converge", max_noise=0.01, strategy_options={"max_noise": 0.02})


def test_converges_keywords_are_refused_by_a_strategy_without_them():
    # Before converge owned them they were silently ignored by the other strategies.
    with pytest.raises(ValueError, match="strategy 'exhaustive' has no option 'max_noise'"):
        tuned(CountingLauncher(), max_noise=0.01)  # the decorator's default strategy
    with pytest.raises(ValueError, match="strategy 'adaptive' has no option 'budget_ms'"):
        tuned(CountingLauncher(), strategy="adaptive", budget_ms=10.0)
    # The search hands max_noise and min_time_ms to its final race; its budget is budget_s.
    tuned(CountingLauncher(), strategy="search", max_noise=0.01, min_time_ms=0.1)
    with pytest.raises(ValueError, match="strategy 'search' has no option 'budget_ms'"):
        tuned(CountingLauncher(), strategy="search", budget_ms=10.0)


def test_a_record_tuned_with_other_converge_settings_is_still_a_hit(tmp_path):
    # Measurement settings are not part of a record's identity (function, hardware, key): a
    # stored choice is reused whatever settings found it, as before converge owned them.
    first = tuned(CountingLauncher(), strategy="converge", max_noise=0.005, cache_dir=str(tmp_path))
    first(1)
    assert first.last_report.source == "tuned"
    launcher = CountingLauncher()
    second = tuned(launcher, strategy="converge", max_noise=0.01, cache_dir=str(tmp_path))
    second(1)
    assert second.last_report.source == "disk"
    assert launcher.runs.get("slow", 0) == 0


def test_a_baseline_is_replaced_only_by_a_clearly_faster_entry(tmp_path):
    launch = tuned(CountingLauncher(), baseline=SPACE[0], cache_dir=str(tmp_path))
    assert launch(1)[2] == "fast"  # 0.2 ms against the baseline's 2 ms
    outcome = record_of(launch)["baseline"]
    assert outcome["index"] == 0 and outcome["won"] is False
    assert outcome["chosen_ms"] < outcome["baseline_ms"]
    assert record_of(launch)["measurement"]["baseline"] == {"tag": "slow", "speed": 2.0}


def test_a_baseline_within_noise_of_the_fastest_is_kept(tmp_path):
    space = [{"tag": "a", "speed": 1.0}, {"tag": "b", "speed": 1.0}, {"tag": "c", "speed": 3.0}]
    for strategy in ("exhaustive", "converge"):
        launch = tuned(CountingLauncher(), space=space, baseline=space[1], strategy=strategy,
                       cache_dir=str(tmp_path / strategy))
        assert launch(1)[2] == "b", strategy
        outcome = record_of(launch)["baseline"]
        assert outcome["index"] == 1 and outcome["won"] is True
        assert launch.last_report.candidates[1].within_noise
        assert "(within noise)" in launch.last_report.table()


def test_a_baseline_outside_the_space_is_a_clear_error():
    with pytest.raises(ValueError, match="baseline .* not an entry"):
        tuned(CountingLauncher(), baseline={"tag": "other", "speed": 0.0})


def test_converge_settings_out_of_range_are_clear_errors():
    with pytest.raises(ValueError, match="max_noise"):
        tuned(CountingLauncher(), strategy="converge", max_noise=0.0)
    with pytest.raises(ValueError, match="budget_ms"):
        tuned(CountingLauncher(), strategy="converge", budget_ms=-1.0)
