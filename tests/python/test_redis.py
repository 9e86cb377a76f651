"""The Redis store from Python, against a real redis-server started on a free port."""

import json
import os
import shutil
import socket
import subprocess
import sys
import textwrap
import time

import pytest

from disttune.tune import autotune

REDIS_SERVER = shutil.which("redis-server")
REDIS_CLI = shutil.which("redis-cli")
pytestmark = pytest.mark.skipif(
    REDIS_SERVER is None or REDIS_CLI is None,
    reason="redis-server and redis-cli (Debian: redis-server) are installed by scripts/setup.sh",
)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    """redis-server without persistence on 127.0.0.1, killed by stop()."""

    def __init__(self):
        self.port = _free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process = subprocess.Popen(
            [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        for _ in range(200):
            if self.process.poll() is not None:
                raise RuntimeError("redis-server exited at start")
            try:
                if self.cli("PING") == "PONG":
                    return
            except subprocess.CalledProcessError:
                pass
            time.sleep(0.05)
        raise RuntimeError("redis-server did not answer")

    def cli(self, *args, stdin=None):
        """A redis-cli command; with `stdin`, that is the last argument (-x)."""
        command = [REDIS_CLI, "-p", str(self.port)] + (["-x"] if stdin is not None else []) + list(args)
        return subprocess.run(command, input=stdin, capture_output=True, check=True).stdout.decode().strip()

    def keys(self, pattern="disttune:*"):
        return [k for k in self.cli("--raw", "KEYS", pattern).splitlines() if k]

    def stop(self):
        self.process.kill()
        self.process.wait()


@pytest.fixture
def redis_server():
    server = RedisServer()
    yield server
    server.stop()


def _tuned(runs, **options):
    """A fresh tuned function with the same source (so the same record) each time."""

    @autotune(config_space=[{"block": b} for b in (1, 2, 3)], key_fn=lambda n: n,
              warmup_runs=0, timed_runs=1, **options)
    def shared_scale(n, block):
        runs.append(block)
        return n * block

    return shared_scale


PROCESS = textwrap.dedent(
    """
    import json, sys
    from disttune.tune import autotune

    runs = []

    @autotune(config_space=[{"block": b} for b in (1, 2, 3)], key_fn=lambda n: n,
              warmup_runs=0, timed_runs=1)
    def across_processes(n, block):
        runs.append(block)
        return n * block

    across_processes(64)
    print(json.dumps({"source": across_processes.last_report.source, "runs": len(runs)}))
    """
)


def _run_process(script, cache, url):
    env = dict(os.environ, TRITON_DIST_AUTOTUNE_CACHE_DIR=str(cache), TRITON_DIST_AUTOTUNE_REDIS_URL=url)
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_two_processes_share_a_tuning_through_redis(tmp_path, redis_server):
    script = tmp_path / "across_processes.py"
    script.write_text(PROCESS)
    first = _run_process(script, tmp_path / "node-a", redis_server.url)
    assert first == {"source": "tuned", "runs": 3 + 1}  # each config once, then the final run
    assert len(redis_server.keys()) == 1
    second = _run_process(script, tmp_path / "node-b", redis_server.url)
    assert second == {"source": "redis", "runs": 1}  # no tuning: only the final run
    third = _run_process(script, tmp_path / "node-b", redis_server.url)
    assert third == {"source": "disk", "runs": 1}  # the Redis hit was copied into node-b


def test_redis_killed_mid_run_warns_once_and_tuning_goes_on(tmp_path, redis_server, capfd):
    runs = []
    tuned = _tuned(runs, redis_url=redis_server.url, cache_dir=str(tmp_path / "node"))
    tuned(1)
    assert tuned.last_report.source == "tuned"
    redis_server.stop()
    capfd.readouterr()
    for n in (2, 3, 4):
        assert tuned(n) == n * (int(tuned.last_report.best) + 1)
        assert tuned.last_report.source == "tuned"
    err = capfd.readouterr().err
    assert err.count("disttune: ") == 1, err
    assert f"Redis store {redis_server.url}" in err


def _plant(tmp_path, redis_server, value=None, stdin=None):
    """Tunes once so that Redis holds the record, then replaces its value."""
    _tuned([], redis_url=redis_server.url, cache_dir=str(tmp_path / "writer"))(5)
    (key,) = redis_server.keys()
    if stdin is not None:
        redis_server.cli("SET", key, stdin=stdin)
    else:
        redis_server.cli("SET", key, value)
    return key


@pytest.mark.parametrize("value", ["not json {", '{"schema": "disttune.record", "schema_version": 99}', "[" * 5000])
def test_a_corrupt_redis_value_is_a_miss_with_a_warning(tmp_path, redis_server, capfd, value):
    _plant(tmp_path, redis_server, value)
    capfd.readouterr()
    runs = []
    tuned = _tuned(runs, redis_url=redis_server.url, cache_dir=str(tmp_path / "reader"))
    assert tuned(5) == 5 * (tuned.last_report.best + 1)
    assert tuned.last_report.source == "tuned"
    assert len(runs) == 3 + 1
    assert "ignoring Redis value" in capfd.readouterr().err


def test_a_redis_value_over_the_size_limit_is_a_miss(tmp_path, redis_server, capfd):
    _plant(tmp_path, redis_server, stdin=b" " * ((64 << 20) + 1))
    capfd.readouterr()
    tuned = _tuned([], redis_url=redis_server.url, cache_dir=str(tmp_path / "reader"))
    tuned(5)
    assert tuned.last_report.source == "tuned"
    assert "larger than 67108864 bytes" in capfd.readouterr().err


def test_an_empty_redis_url_turns_off_the_environments(tmp_path, redis_server, monkeypatch):
    monkeypatch.setenv("TRITON_DIST_AUTOTUNE_REDIS_URL", redis_server.url)
    _tuned([], redis_url="", cache_dir=str(tmp_path / "a"))(1)
    assert redis_server.keys() == []
    _tuned([], cache_dir=str(tmp_path / "b"))(1)
    assert len(redis_server.keys()) == 1


def test_a_bad_redis_url_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="Redis URL"):
        _tuned([], redis_url="http://127.0.0.1:1", cache_dir=str(tmp_path))(1)


def test_configs_out_of_resources_are_learned_from_redis_on_another_node(tmp_path, redis_server):
    # Node a tunes key 1 and finds "b" out of resources; node b (an empty directory of its
    # own, the same Redis) tunes key 2 without compiling "b": what the stores know of the
    # function is read through the engine, Redis included.
    from test_pipeline import FakeKernel, make

    compiles = []

    def precompile(entry, x):
        compiles.append(entry["tag"])
        return FakeKernel(fits=entry["tag"] != "b")

    first, _ = make(precompile, cache_dir=str(tmp_path / "node-a"), redis_url=redis_server.url)
    assert first(1) == "c"
    compiles.clear()
    again, _ = make(precompile, cache_dir=str(tmp_path / "node-b"), redis_url=redis_server.url)
    assert again(2) == "c"
    assert sorted(compiles) == ["a", "c", "d"]
    assert again.last_report.candidates[1].error.startswith("out of resources: ")


def test_a_chain_given_as_urls_is_read_in_order_and_a_hit_is_copied_up(tmp_path, redis_server):
    writer_runs = []
    _tuned(writer_runs, stores=[str(tmp_path / "writer"), f"{redis_server.url}?prefix=chain:"])(5)
    assert writer_runs == [1, 2, 3, writer_runs[-1]]  # tuned, then the final run
    assert len(redis_server.keys("chain:*")) == 1

    runs = []
    reader = _tuned(runs, stores=[(tmp_path / "reader").as_uri(), f"{redis_server.url}?prefix=chain:"])
    reader(5)
    assert reader.last_report.source == "redis" and len(runs) == 1  # only the final run
    assert reader.last_report.record_path.parent.parent == tmp_path / "reader"  # copied up

    again = []
    _tuned(again, stores=[str(tmp_path / "reader")])(5)  # the copy answers alone
    assert len(again) == 1


def test_the_stores_variable_names_the_chain(tmp_path, redis_server, monkeypatch):
    _tuned([], stores=[str(tmp_path / "writer"), redis_server.url])(7)
    monkeypatch.setenv("TRITON_DIST_AUTOTUNE_STORES", f"{tmp_path / 'node'},{redis_server.url}")
    runs = []
    tuned = _tuned(runs)
    tuned(7)
    assert tuned.last_report.source == "redis" and len(runs) == 1


def test_a_chain_is_refused_with_the_reason(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match=r"store URL scheme 'ftp' is not registered \(registered: file, redis, rediss"):
        _tuned([], stores=["ftp://host/records"])
    with pytest.raises(TypeError, match="option stores must be a list of str or None"):
        _tuned([], stores="file:///one/url")
    with pytest.raises(ValueError, match="give the chain one way"):
        _tuned([], stores=[str(tmp_path)], cache_dir=str(tmp_path))(1)
    monkeypatch.setenv("TRITON_DIST_AUTOTUNE_STORES", f"{tmp_path},gopher://h")
    with pytest.raises(ValueError, match="TRITON_DIST_AUTOTUNE_STORES: .*scheme 'gopher'"):
        _tuned([], disk_cache=False)
