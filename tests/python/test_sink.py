"""disttune.set_sink: tables, log lines and warnings go to a callable or a logging.Logger
instead of stderr; None restores stderr."""

import logging
import os
import sys

import pytest

import disttune
from disttune.tune import autotune

from launchers import COST_TIMER, SPACE, CountingLauncher, key_fn


@pytest.fixture(autouse=True)
def stderr_sink_after():
    yield
    disttune.set_sink(None)


def verbose_tuning(cache_dir):
    """A verbose tuning in a cache directory that others may write: refused with a warning."""
    os.makedirs(cache_dir, exist_ok=True)
    os.chmod(cache_dir, 0o777)
    launcher = CountingLauncher()

    @autotune(config_space=SPACE, key_fn=key_fn, cache_dir=str(cache_dir), timer=COST_TIMER)
    def launch(x, alpha=1.0, speed=0.0, tag=None):
        return launcher(x, alpha, speed, tag)

    launch(1, autotune_verbose=True)
    return launch


def test_a_callable_sink_receives_the_table_the_log_and_the_warnings(tmp_path, capfd):
    messages = []
    disttune.set_sink(lambda kind, text: messages.append((kind, text)))
    launch = verbose_tuning(tmp_path / "open-to-all")
    out, err = capfd.readouterr()
    assert err == "" and out == ""
    kinds = {kind for kind, _ in messages}
    assert {"table", "log", "warning"} <= kinds, messages
    assert [text for kind, text in messages if kind == "table"] == [launch.last_report.table()]
    warning = next(text for kind, text in messages if kind == "warning")
    assert "open-to-all" in warning and not warning.startswith("disttune: ")


def test_a_logger_sink_logs_by_kind(tmp_path, capfd, caplog):
    caplog.set_level(logging.DEBUG, logger="disttune.test")
    disttune.set_sink(logging.getLogger("disttune.test"))
    verbose_tuning(tmp_path / "open-to-all")
    assert capfd.readouterr().err == ""
    levels = {record.levelno for record in caplog.records if record.name == "disttune.test"}
    assert logging.WARNING in levels and logging.INFO in levels
    assert any("open-to-all" in r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)


def test_none_restores_stderr(tmp_path, capfd):
    disttune.set_sink(lambda kind, text: None)
    disttune.set_sink(None)
    launch = verbose_tuning(tmp_path / "open-to-all")
    err = capfd.readouterr().err
    assert launch.last_report.table() in err
    assert "disttune: " in err and "open-to-all" in err


def test_a_failing_sink_is_reported_and_tuning_goes_on(tmp_path, monkeypatch):
    def broken(kind, text):
        raise OSError("log server down")

    reported = []
    monkeypatch.setattr(sys, "unraisablehook", lambda unraisable: reported.append(unraisable.exc_value))
    disttune.set_sink(broken)
    launch = verbose_tuning(tmp_path / "open-to-all")
    assert launch.last_report.source == "tuned"
    assert reported and all(isinstance(error, OSError) for error in reported), reported


def test_a_sink_must_be_callable():
    with pytest.raises(disttune.NotCallable, match="set_sink"):
        disttune.set_sink("stderr")
