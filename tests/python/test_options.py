"""autotune()'s options in one table (disttune._options): the table against autotune()'s
signature and the engine's option table, and options(), the grouped spelling."""

import inspect

import pytest

import disttune
from disttune import _core, _options
from disttune._candidate_options import candidate_options
from disttune.tune import autotune


def keyword_only(fn):
    return {p.name for p in inspect.signature(fn).parameters.values() if p.kind is p.KEYWORD_ONLY}


def test_the_table_names_every_keyword_option_of_autotune_once():
    names = [o.name for o in _options.OPTIONS]
    assert len(names) == len(set(names))
    assert set(names) == keyword_only(autotune)
    assert {o.group for o in _options.OPTIONS} == set(_options.GROUPS)


def test_the_engine_takes_its_options_as_the_binding_names_them():
    engine = set(_options.names(taker="engine"))
    assert engine <= set(_core.function_option_names)
    assert set(_core.function_option_names) == engine | set(_options.SET_PER_TUNER)


def test_the_candidate_runs_take_candidate_options_keywords():
    assert set(_options.names(taker="candidates")) == keyword_only(candidate_options)


def test_grouped_options_tune_as_the_flat_keywords(tmp_path):
    runs = []
    grouped = disttune.options(measurement={"warmup_runs": 0, "timed_runs": 2, "timer": "cpu"},
                               stores={"cache_dir": str(tmp_path)}, checks={"reference": 0})
    assert grouped == {"warmup_runs": 0, "timed_runs": 2, "timer": "cpu", "cache_dir": str(tmp_path), "reference": 0}

    @autotune(config_space=[{"block": b} for b in (1, 2)], key_fn=lambda n: n, **grouped)
    def grouped_scale(n, block):
        runs.append(block)
        return n * 2

    assert grouped_scale(3) == 6
    assert grouped_scale.last_report.source == "tuned"
    # The reference's run, then per entry its check's run and 2 timed runs (no warm-up), then the final run.
    assert len(runs) == 1 + 2 * (1 + 2) + 1
    assert list(tmp_path.joinpath("grouped_scale").glob("*.json"))


@pytest.mark.parametrize(
    "given, message",
    [
        ({"measurment": {"timed_runs": 3}}, "options() has no group 'measurment'; the groups are measurement, stores"),
        ({"stores": {"timed_runs": 3}}, "'timed_runs' is not a stores option (it is a measurement option)"),
        ({"checks": {"retol": 1e-3}}, "'retol' is not a checks option (autotune() has no such option)"),
        ({"compile": ["precompile"]}, "options(compile=...) takes a dict of compile options, got list"),
    ],
)
def test_a_wrong_group_is_a_type_error_naming_where_the_option_belongs(given, message):
    with pytest.raises(TypeError) as raised:
        disttune.options(**given)
    assert message in str(raised.value)
