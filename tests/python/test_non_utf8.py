"""Text that is not valid UTF-8 never crashes the caller and always reads (issue 26): a failing
config's error with a lone surrogate (in-process and isolated), a setting's bytes, a NUL in a
path. Each reproduction runs in a child interpreter, so a crash is a failed test, not a dead run."""

import json
import os
import subprocess
import sys
from pathlib import Path

import disttune

HERE = Path(__file__).resolve().parent

# os.fsdecode of a Latin-1 file name on a UTF-8 system: the byte 0xe9 becomes '\udce9'.
FAILING = """
import json, os, sys
import torch
from disttune.tune import autotune
import isolated_launchers

BAD_NAME = os.fsdecode(b"/data/caf\\xe9.bin")

def launch(x, bad):
    if bad:
        raise OSError(f"cannot open {BAD_NAME}")
    return x

isolate = sys.argv[1] == "isolated"
tuned = isolated_launchers.surrogate_failure if isolate else autotune(
    config_space=[{"bad": True}, {"bad": False}], key_fn=lambda x: tuple(x.shape), warmup_runs=0,
    timed_runs=1)(launch)
x = torch.ones(2)
assert torch.equal(tuned(x), x)
report = tuned.last_report
record = json.loads(open(report.record_path, encoding="utf-8").read())
print(json.dumps({"error": report.candidates[0].error, "table": report.table(),
                  "record": record["candidates"][0].get("error", "")}))
"""


def _python(code, *args, env=None):
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]))
    environment.update(env or {})
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, env=environment, timeout=600)


def _failing_config(mode, tmp_path):
    done = _python(FAILING, mode, env={"TRITON_DIST_AUTOTUNE_CACHE_DIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr.decode(errors="backslashreplace")[-3000:]
    return json.loads(done.stdout.decode().splitlines()[-1])


def test_a_failing_configs_error_with_a_lone_surrogate_is_a_readable_reason(tmp_path):
    shown = _failing_config("in-process", tmp_path)
    assert "OSError: cannot open /data/caf\\udce9.bin" in shown["error"], shown
    assert "caf\\udce9.bin" in shown["table"], shown["table"]
    assert "caf\\udce9.bin" in shown["record"], shown


def test_an_isolated_configs_error_with_a_lone_surrogate_is_a_readable_reason(tmp_path):
    shown = _failing_config("isolated", tmp_path)
    assert "OSError: cannot open /data/caf\\udce9.bin" in shown["error"], shown
    assert "caf\\udce9.bin" in shown["table"] and "caf\\udce9.bin" in shown["record"], shown


def test_a_setting_that_is_not_utf8_is_invalid_setting_with_a_message():
    code = """
import disttune
from disttune.tune import autotune
def launch(a):
    return a

try:
    autotune(config_space=[{"a": 1}], key_fn=lambda: ())(launch)()
except disttune.InvalidSetting as error:
    print(repr(str(error)))
"""
    env = dict(os.environ)
    env_bytes = {k.encode(): v.encode() for k, v in env.items()}
    env_bytes[b"TRITON_DIST_AUTOTUNE_ALWAYS_TUNE"] = b"on\xff"
    env_bytes[b"PYTHONPATH"] = str(HERE).encode()
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, env=env_bytes, timeout=300)
    assert done.returncode == 0, done.stderr.decode(errors="backslashreplace")[-3000:]
    message = done.stdout.decode()
    assert "TRITON_DIST_AUTOTUNE_ALWAYS_TUNE must be" in message and "on\\\\xff" in message, message


def test_a_nul_in_cache_dir_is_invalid_setting(tmp_path):
    for cache_dir in (f"{tmp_path}/a\0b", os.fsencode(f"{tmp_path}/a\0b"), Path(f"{tmp_path}/a\0b")):
        try:
            disttune._core.FunctionTuner("nul", "v1", cache_dir=cache_dir)
        except disttune.InvalidSetting as error:
            assert "cache_dir" in str(error) and "NUL byte" in str(error), error
        else:
            raise AssertionError(f"{cache_dir!r} was accepted")
    # A path that is not UTF-8 but holds no NUL is a path like any other.
    tuner = disttune._core.FunctionTuner("bytes_dir", "v1", cache_dir=os.fsdecode(os.fsencode(str(tmp_path)) + b"/caf\xe9"))
    assert tuner.name == "bytes_dir"
