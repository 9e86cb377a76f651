"""Messages a person can act on, and what a tuning leaves to read: a wrong call is one
TypeError, settings are checked alike and mistyped ones named, TuningFailed is one line per
config with the tracebacks in its log, and the report says where a choice came from and
gives its candidates as data."""

import json
import os
import re
import subprocess
import sys

import pytest

import disttune
from disttune.tune import autotune

from launchers import COST_TIMER, SPACE, CountingLauncher, key_fn


def counted(launcher, **options):
    options.setdefault("timer", COST_TIMER)

    @autotune(config_space=SPACE, key_fn=lambda *args, **kwargs: args[:1], **options)
    def scale(x, alpha, speed=0.0, tag=None):
        return launcher(x, alpha, speed, tag)

    return scale


@pytest.mark.parametrize(
    "args, kwargs, reason",
    [
        ((1, 2.5, 3, 4, 5), {}, "too many positional arguments"),
        ((1,), {}, "missing a required argument: 'alpha'"),
        ((1, 2.5), {"beta": 3}, "got an unexpected keyword argument 'beta'"),
    ],
    ids=["one too many", "one too few", "a wrong name"],
)
def test_a_wrong_call_is_one_type_error_naming_the_function_before_any_run(args, kwargs, reason):
    launcher = CountingLauncher()
    scale = counted(launcher)
    with pytest.raises(TypeError) as raised:
        scale(*args, **kwargs)
    assert str(raised.value) == (
        f"disttune: the call of 'scale' does not fit its launcher ({reason}): call it as "
        "scale(x, alpha); its config entries supply speed, tag"
    )
    assert raised.value.__cause__ is None and raised.value.__suppress_context__
    assert launcher.total == 0 and scale.last_report is None
    assert scale(1, 2.5)[2] == "fast"  # a right call tunes as before


def test_a_call_the_entries_complete_is_not_refused():
    launcher = CountingLauncher()
    scale = counted(launcher)
    assert scale(1, alpha=2.5)[1] == 2.5
    assert scale(2, 2.5, speed=9.0, autotune_allow_arg_overwrite=True)[2] == "fast"


def test_the_launchers_own_type_error_fails_its_configs_and_names_where_it_was_raised(tmp_path):
    @autotune(config_space=SPACE, key_fn=key_fn, timer=COST_TIMER)
    def launch(x, speed=0.0, tag=None):
        raise TypeError(f"mode {tag} takes a tensor\nsecond line of the message")

    with pytest.raises(disttune.TuningFailed) as raised:
        launch(1)
    lines = str(raised.value).splitlines()
    assert lines[0] == "disttune: every config of 'launch' failed for key {\"$tuple\":[1]}:"
    assert len(lines) == 1 + len(SPACE) + 1, lines  # one line per config, then the log
    here = __file__
    for index, entry in enumerate(SPACE):
        config = json.dumps(entry, sort_keys=True, separators=(",", ":"))
        assert re.fullmatch(
            rf"  \[{index}\] {re.escape(config)}: TypeError: mode {entry['tag']} takes a tensor "
            rf"\(raised at {re.escape(here)}:\d+ in launch\)",
            lines[1 + index],
        ), lines[1 + index]
    assert lines[-1].startswith("  each failure in full (tracebacks too) is in the log ")
    log = lines[-1].split(" is in the log ", 1)[1]
    text = open(log).read()
    assert text.count("Traceback (most recent call last):") >= len(SPACE)
    assert "second line of the message" in text
    # `disttune show` prints that log.
    shown = subprocess.run([sys.executable, "-m", "disttune", "show", log], capture_output=True, text=True,
                           timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith(f"tuning log {log}:\nfunction launch digest ")
    assert shown.stdout.count("TypeError: mode slow takes a tensor") >= 2  # its summary, then its traceback


def test_without_a_cache_directory_the_message_says_how_to_see_the_tracebacks():
    @autotune(config_space=SPACE, key_fn=key_fn, timer=COST_TIMER, disk_cache=False)
    def launch(x, speed=0.0, tag=None):
        raise RuntimeError(f"bad mode {tag}")

    with pytest.raises(disttune.TuningFailed) as raised:
        launch(1)
    assert str(raised.value).splitlines()[-1] == (
        "  no log was written (no cache directory); a verbose call prints each failure in full"
    )


@pytest.mark.parametrize("disk_cache", [True, False], ids=["disk cache on", "disk cache off"])
@pytest.mark.parametrize(
    "name, value",
    [("ALWAYS_TUNE", "abc"), ("VERSION_CHECK", "abc"), ("WARM_START", "abc"), ("CACHE_KEEP", "0x10"),
     ("TIMEOUT", " 5"), ("REDIS_TIMEOUT", "+5"), ("TABLE_MISMATCH", "abc")],
)
def test_every_setting_is_refused_alike_whatever_the_others(monkeypatch, disk_cache, name, value):
    scale = counted(CountingLauncher(), disk_cache=disk_cache)
    monkeypatch.setenv(f"TRITON_DIST_AUTOTUNE_{name}", value)
    with pytest.raises(disttune.InvalidSetting, match=rf"TRITON_DIST_AUTOTUNE_{name} must be .*got '{re.escape(value)}'"):
        scale(1, 2.5)
    with pytest.raises(disttune.InvalidSetting, match=rf"TRITON_DIST_AUTOTUNE_{name} must be "):
        counted(CountingLauncher(), disk_cache=disk_cache)  # and when the next tuner is made


def test_a_mistyped_variable_is_one_warning_naming_the_closest_setting(tmp_path):
    program = tmp_path / "mistyped.py"
    program.write_text(
        "from disttune.tune import autotune\n"
        "\n"
        "\n"
        "def launch(x, tag):\n"
        "    return x\n"
        "\n"
        "\n"
        "for _ in range(2):\n"
        "    autotune(config_space=[{'tag': 1}], key_fn=lambda x: x, disk_cache=False)(launch)(1)\n"
    )
    env = {**os.environ, "TRITON_DIST_AUTOTUNE_WARMUP": "abc"}
    done = subprocess.run([sys.executable, str(program)], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr == (
        "disttune: TRITON_DIST_AUTOTUNE_WARMUP is not a disttune setting and is ignored; did you mean "
        "TRITON_DIST_AUTOTUNE_WARM_START? (docs/settings.md lists them)\n"
    )


def test_last_report_says_where_the_choice_came_from(tmp_path):
    launcher = CountingLauncher()
    scale = counted(launcher)
    scale(1, 2.5)
    assert scale.last_report.source == "tuned"
    scale(1, 2.5)  # the C hit path
    assert scale.last_report.source == "memory"
    assert scale.last_report.candidates[scale.last_report.best].config == '{"speed":0.2,"tag":"fast"}'
    scale(1, alpha=2.5)  # a keyword call: the Python path
    assert scale.last_report.source == "memory"
    scale(2, 2.5)
    assert scale.last_report.source == "tuned"
    again = counted(CountingLauncher())  # same source, so the same records
    again(1, 2.5)
    assert again.last_report.source == "disk"
    again(1, 2.5)
    assert again.last_report.source == "memory"
    assert again(1, 2.5, autotune=False)[2] == "slow"


def test_candidate_results_are_readable_and_available_as_data():
    scale = counted(CountingLauncher(), prune_fn=lambda entry, x, alpha: entry["tag"] != "middle")
    scale(1, 2.5)
    report = scale.last_report
    assert repr(report.candidates[1]) == (
        "CandidateResult(config='{\"speed\":0.2,\"tag\":\"fast\"}', status='ok', agreed_ms=0.2, samples=10)"
    )
    rows = report.rows()
    assert [row["config"] for row in rows] == [{"speed": 2.0, "tag": "slow"}, {"speed": 0.2, "tag": "fast"}]
    assert rows[1] == {"index": 1, "config": {"speed": 0.2, "tag": "fast"}, "status": "ok", "chosen": True,
                       "agreed_ms": 0.2, "noise": 0.0, "samples": 10, "within_noise": False, "error": None}
    assert report.pruned == ['{"speed":1.0,"tag":"middle"}']
    assert '  pruned for this key (1, never run): {"speed":1.0,"tag":"middle"}\n' in report.table()
    record = json.loads(report.record_path.read_text())
    assert record["pruned"] == [{"speed": 1.0, "tag": "middle"}]
    shown = subprocess.run([sys.executable, "-m", "disttune", "show", str(report.record_path)],
                           capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert '  pruned for this key (1, never run): {"speed":1.0,"tag":"middle"}\n' in shown.stdout
    assert "  timer: cost-model\n" in shown.stdout


def test_a_failed_candidate_reads_as_one_line():
    @autotune(config_space=SPACE, key_fn=key_fn, timer=COST_TIMER)
    def launch(x, speed=0.0, tag=None):
        if tag == "slow":
            raise RuntimeError("out of resources")
        return CountingLauncher()(x, 1.0, speed, tag)

    launch(1)
    failed = launch.last_report.candidates[0]
    assert re.fullmatch(r"CandidateResult\(config='\{\"speed\":2.0,\"tag\":\"slow\"\}', status='failed', "
                        r"error='RuntimeError: out of resources \(raised at .*:\d+ in launch\)'\)", repr(failed))
    assert launch.last_report.rows()[0]["error"].startswith("RuntimeError: out of resources (raised at ")
    assert failed.error.splitlines()[1] == "Traceback (most recent call last):"  # in full, as the log has it
