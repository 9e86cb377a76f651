"""The error hierarchy: disttune.DisttuneError is the base of every error the package raises,
and each specific error is still the built-in class it was."""

import pytest

import disttune
from disttune.autotuner import contextual_autotune
from disttune.tune import autotune

from launchers import SPACE, key_fn

SPECIFIC = {
    "InvalidSetting": ValueError,
    "TuningFailed": RuntimeError,
    "CollectiveTimeout": TimeoutError,
    "RankDisagreement": RuntimeError,
    "ContextualRunActive": RuntimeError,
    "EngineError": RuntimeError,
    "NotCallable": TypeError,
    "EncodingError": TypeError,
}


@pytest.mark.parametrize("name", sorted(SPECIFIC))
def test_every_exported_error_is_a_disttune_error_and_its_builtin_class(name):
    error = getattr(disttune, name)
    assert name in disttune.__all__
    assert issubclass(error, disttune.DisttuneError)
    assert issubclass(error, SPECIFIC[name])
    assert error.__doc__


def test_prune_fn_removing_every_config_is_tuning_failed():
    @autotune(config_space=SPACE, key_fn=key_fn, prune_fn=lambda entry, x: False)
    def launch(x, speed=0.0, tag=None):
        return tag

    with pytest.raises(disttune.TuningFailed, match="removed every config") as raised:
        launch(1)
    assert isinstance(raised.value, disttune.DisttuneError)


def test_every_config_failing_is_tuning_failed():
    @autotune(config_space=SPACE, key_fn=key_fn, disk_cache=False)
    def launch(x, speed=0.0, tag=None):
        raise RuntimeError(f"bad mode {tag}")

    with pytest.raises(disttune.TuningFailed, match="bad mode slow(.|\n)*bad mode fast"):
        launch(1)


def test_decorator_misuse_is_a_disttune_error():
    with pytest.raises(disttune.NotCallable, match="key_fn"):
        autotune(config_space=SPACE, key_fn=None)(lambda x: x)
    with pytest.raises(disttune.InvalidSetting, match="empty"):
        autotune(config_space=[], key_fn=key_fn)(lambda x: x)
    with pytest.raises(disttune.InvalidSetting, match="statistic 'mode'"):
        contextual_autotune(statistic="mode")(lambda x: x)
    with pytest.raises(disttune.EngineError, match="is_dist"):
        contextual_autotune(is_dist=True)(lambda x: x)(1)


def test_engine_errors_without_a_class_of_their_own_are_disttune_errors():
    # The engine refuses a function name that is not a safe directory name (std::invalid_argument).
    with pytest.raises(disttune.InvalidSetting, match="safe directory name"):
        disttune._core.FunctionTuner("../escape", "v1")


def test_a_newline_in_a_function_name_does_not_split_the_one_line_error():
    with pytest.raises(disttune.InvalidSetting, match="safe directory name") as raised:
        disttune._core.FunctionTuner("two\nlines\x1b[2J", "v1")
    assert "\n" not in str(raised.value) and "\x1b" not in str(raised.value)
    assert "two\\nlines\\x1b[2J" in str(raised.value)
