"""The disttune command for Python users (python -m disttune): list, show, verify, clear,
export, import and report, on records written by real CPU tunings; replay on the recorded
tables; the argparse parser built from the engine's command table."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from disttune import _core, cli

from launchers import COST_TIMER, SPACE, CountingLauncher, key_fn
from disttune.tune import autotune


REPLAY_TABLE = Path(__file__).resolve().parents[1] / "data" / "replay" / "split_k_fp16_128x8192x8192.json"


def key_text(n):
    """The canonical key text of key_fn(n): the tuple (n,)."""
    return '{"$tuple":[%d]}' % n


def run_cli(*args, root=None):
    """`python -m disttune ARGS` in a new process: (exit status, stdout, stderr)."""
    command = [sys.executable, "-m", "disttune", *args]
    if root is not None:
        command += ["--root", str(root)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    return done.returncode, done.stdout, done.stderr


def tune_into(root, *keys, counter=None):
    """Tunes the CPU launcher `launch` on each key with its disk cache under `root`; its runs
    are counted in `counter` (a CountingLauncher) when given."""
    counter = counter if counter is not None else CountingLauncher()

    @autotune(config_space=SPACE, key_fn=key_fn, cache_dir=str(root), timer=COST_TIMER)
    def launch(x, alpha=1.0, speed=0.0, tag=None):
        return counter(x, alpha, speed, tag)

    for key in keys:
        launch(key)
    return launch


def test_list_show_verify_clear_on_real_records(tmp_path):
    root = tmp_path / "cache"
    tune_into(root, 1, 2)
    (root / "launch" / ("b" * 64 + ".json")).write_text("{no")

    status, out, _ = run_cli("list", root=root)
    assert status == 0
    lines = out.splitlines()
    assert sum(line.startswith("launch  ") for line in lines) == 2
    assert all('best {"speed":0.2,"tag":"fast"}' in line for line in lines if line.startswith("launch"))
    assert any(line.startswith("BAD launch/" + "b" * 64 + ".json: it is not valid JSON") for line in lines)

    good_id = next(line.split()[1] for line in lines if line.startswith("launch"))
    status, out, _ = run_cli("show", good_id, root=root)
    assert status == 0
    assert "disttune: launch key" in out and '"tag":"fast"' in out
    assert "measurement: warmup_runs 5, timed_runs 10, statistic median" in out

    status, out, _ = run_cli("verify", root=root)
    assert status == 1
    assert "3 record files checked, 2 good, 1 bad" in out

    status, _, err = run_cli("clear", "launch", root=root)
    assert status == 1 and err.strip() == "disttune: error: clear removes records; refusing without --yes"
    status, out, _ = run_cli("clear", "launch", "--yes", root=root)
    assert status == 0 and "removed" in out
    assert not (root / "launch").exists()


def test_clear_removes_every_entry_type_and_honours_older_than(tmp_path):
    root = tmp_path / "cache"
    tune_into(root, 1)
    directory = root / "launch"
    record = next(directory.glob("*.json"))
    record_id = record.name[: -len(".json")]
    # A directory that stood at a record's name, moved aside by the engine, with content.
    bad_dir = directory / f"{record_id}.bad-20261129T093000.000000Z"
    (bad_dir / "inner").mkdir(parents=True)
    (bad_dir / "inner" / "file").write_text("x")
    outside = tmp_path / "outside.txt"
    outside.write_text("kept")
    (directory / f"{record_id}.bad-20261129T093001.000000Z").symlink_to(outside)
    old_log = directory / f"{record_id}.log-20261101T000000.000000Z"
    old_log.write_text("old")
    two_days_ago = os.path.getmtime(record) - 49 * 3600
    for old in (old_log, bad_dir):
        os.utime(old, (two_days_ago, two_days_ago))
    new_logs = [p for p in directory.iterdir() if ".log-" in p.name and p != old_log]

    status, _, err = run_cli("clear", "--yes", "--older-than", "2days", root=root)
    assert status == 1
    assert err == "disttune: error: --older-than takes a number and a unit (s, m, h or d), e.g. 30d; got '2days'\n"

    status, out, _ = run_cli("clear", "--yes", "--older-than", "2d", root=root)
    assert status == 0, out
    assert "removed 2 files of launch" in out
    assert not bad_dir.exists() and not old_log.exists()
    assert record.exists() and all(log.exists() for log in new_logs)

    status, out, _ = run_cli("clear", "--yes", root=root)
    assert status == 0, out
    assert f"removed {2 + len(new_logs)} files of launch" in out
    assert not directory.exists()
    assert outside.read_text() == "kept"  # the link went, not what it named


def test_errors_are_one_line_without_traceback(tmp_path):
    status, _, err = run_cli("list", root=tmp_path / "missing")
    assert status == 1
    assert err == f"disttune: error: cache root {tmp_path / 'missing'} does not exist\n"
    tune_into(tmp_path / "cache", 1)
    status, _, err = run_cli("show", "0" * 5, root=tmp_path / "cache")
    assert status == 1 and err == "disttune: error: no record id starts with '00000'\n"
    status, _, err = run_cli("list", "nosuch", root=tmp_path / "cache")
    assert status == 1 and "unknown function 'nosuch'" in err


def test_export_then_import_into_another_root_is_read_without_tuning(tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    tune_into(first, 3, 4)
    table = tmp_path / "table.json"
    status, out, _ = run_cli("export", str(table), root=first)
    assert status == 0 and "exported 2 records" in out
    exported = json.loads(table.read_text())
    assert exported["schema"] == "disttune.table" and exported["schema_version"] == 1
    assert sorted(exported["functions"]["launch"]) == [key_text(3), key_text(4)]

    status, out, _ = run_cli("import", str(table), root=second)
    assert status == 0 and out.count("wrote launch") == 2
    for path in (second / "launch").glob("*.json"):
        assert oct(path.stat().st_mode & 0o777) == "0o600"

    # A new process with the second root: the tuned function reads the choice, no tuning.
    code = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {os.path.dirname(__file__)!r})
        from test_cli import tune_into
        launch = tune_into({str(second)!r}, 3)
        assert launch.last_report.source == "table", launch.last_report.source  # read from disk
        print("read from disk")
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "read from disk" in done.stdout


def test_import_keeps_a_newer_record_unless_forced(tmp_path):
    root = tmp_path / "cache"
    tune_into(root, 5)
    table = tmp_path / "table.json"
    assert run_cli("export", str(table), root=root)[0] == 0
    data = json.loads(table.read_text())
    record = data["functions"]["launch"][key_text(5)]
    (digest,) = record.keys()
    record[digest]["created_utc"] = "2000-01-01T00:00:00Z"
    record[digest]["best"] = {"index": 2, "config": record[digest]["candidates"][2]["config"]}
    table.write_text(json.dumps(data))

    status, out, _ = run_cli("import", str(table), root=root)
    assert status == 0 and out.startswith("kept  launch") and "--force" in out
    assert 'best {"speed":0.2,"tag":"fast"}' in run_cli("list", root=root)[1]
    status, out, _ = run_cli("import", str(table), "--force", root=root)
    assert status == 0 and out.startswith("wrote launch")
    assert 'best {"speed":1.0,"tag":"middle"}' in run_cli("list", root=root)[1]


@pytest.mark.parametrize(
    "content, message",
    [
        ("{not json", "is not a disttune table: it is not valid JSON"),
        ('{"schema": "other"}', "is not a disttune table: its schema is 'other'"),
        ('{"functions": ' + "[" * 100000 + "]" * 100000 + "}", "it is not valid JSON"),
        ('{"schema": "disttune.table", "schema_version": 9, "functions": {}}',
         "table schema_version 9 is not supported"),
        ('{"schema": "disttune.table", "schema_version": 1, "functions": '
         '{"f": {"[1]": {"aa": {"schema": "disttune.record"}}}}}', "is not a valid record"),
    ],
    ids=["not-json", "other-schema", "too-deep", "other-version", "bad-record"],
)
def test_a_broken_table_is_one_clear_error_and_writes_nothing(tmp_path, content, message):
    table = tmp_path / "table.json"
    table.write_text(content)
    status, out, err = run_cli("import", str(table), root=tmp_path / "cache")
    assert status == 1 and out == ""
    assert err.startswith("disttune: error: ") and message in err
    assert "Traceback" not in err and len(err.splitlines()) == 1
    assert not (tmp_path / "cache").exists()


def test_a_record_filed_under_another_identity_is_refused(tmp_path):
    root = tmp_path / "cache"
    tune_into(root, 6)
    table = tmp_path / "table.json"
    assert run_cli("export", str(table), root=root)[0] == 0
    data = json.loads(table.read_text())
    data["functions"]["launch"][key_text(7)] = data["functions"]["launch"].pop(key_text(6))
    table.write_text(json.dumps(data))
    status, _, err = run_cli("import", str(table), root=tmp_path / "other")
    assert status == 1 and "filed under another identity" in err


def test_console_script_and_module_run_the_engines_command_line():
    assert cli.main.__module__ == "disttune.cli"
    status, out, _ = run_cli("--version")
    assert status == 0 and out.startswith("disttune ")
    status, _, err = run_cli("nosuch")
    assert status == 2 and err.startswith("disttune: error: ")


def test_a_python_command_added_with_add_command_gets_its_arguments(tmp_path):
    code = textwrap.dedent("""
        import sys
        from disttune import cli
        cli.add_command("echo", "print the arguments", lambda args: print("echo", args) or 3)
        raise SystemExit(cli.main(sys.argv[1:]))
    """)
    done = subprocess.run([sys.executable, "-c", code, "echo", "--root", "x", "b\udcff"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 3, done.stderr
    assert done.stdout == "echo ['--root', 'x', 'b\\udcff']\n"
    done = subprocess.run([sys.executable, "-c", code, "--help"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and "echo" in done.stdout and "print the arguments" in done.stdout


def test_help_lists_every_command_of_the_engines_table_and_its_arguments():
    status, out, _ = run_cli("--help")
    assert status == 0
    out = " ".join(out.split())  # argparse wraps long lines
    table = _core.command_table()
    for command in table["commands"]:
        assert command["name"] in out and command["help"] in out
    assert "sweep" in out
    status, out, _ = run_cli("replay", "--help")
    assert status == 0
    out = " ".join(out.split())
    replay = next(command for command in table["commands"] if command["name"] == "replay")
    for argument in replay["arguments"]:
        assert argument["name"] in out
    assert "(default: search random)" in out


def test_replay_runs_from_python_as_from_the_cpp_tool():
    status, out, err = run_cli("replay", str(REPLAY_TABLE), "--strategy", "random", "--seeds", "2",
                               "--each", "--option", "effort", "quick")
    assert status == 0, err
    assert "  seed 1: x" in out
    assert "split_k_fp16_128x8192x8192 (1152 entries) random over 2 seeds: median x" in out


def test_arguments_that_do_not_parse_or_that_the_table_refuses_are_one_line_and_status_2():
    status, out, err = run_cli("replay", str(REPLAY_TABLE), "--compile-threads", "0")
    assert (status, out) == (2, "")
    assert err == "disttune: error: --compile-threads: 0 is not in [1, 4096]\n"
    status, _, err = run_cli("replay", str(REPLAY_TABLE), "--compiles", "never")
    assert status == 2 and err == "disttune: error: --compiles: 'never' is not one of per-key, shared\n"
    status, _, err = run_cli("list", "--nosuch")
    assert status == 2 and err.startswith("disttune: error: ") and len(err.splitlines()) == 1
    status, _, err = run_cli("show")
    assert status == 2 and err.startswith("disttune: error: ") and len(err.splitlines()) == 1
