"""Tuning many keys: warm start from neighbouring keys, disttune.sweep on one process and on
two ranks sharing a redis-server, the sweep command, and bucketing helpers."""

import json
import math
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import disttune
from disttune import _core, buckets
from disttune._sweep import sweep
from disttune.tune import autotune
from spawn_ranks import run_ranks
from step_timer import StepTimer
from test_redis import REDIS_CLI, REDIS_SERVER, RedisServer

TILES = range(30)


def read_table(path):
    """The records of a table (`disttune export`'s format), each through the engine's reader."""
    table = json.loads(Path(path).read_text(encoding="utf-8"))
    reads = [_core.parse_record(json.dumps(record).encode())
             for keys in table["functions"].values() for hardware in keys.values()
             for record in hardware.values()]
    assert all(read.record is not None for read in reads), [read.error for read in reads]
    return [read.record for read in reads]


def best_tile(m):
    """The cost model's best tile for size m: 10 up to 128, 20 above (a jump that the warm
    start's climb must follow)."""
    return 10 if m <= 128 else 20


def cost_ms(tile, m):
    return 1.0 + 0.1 * abs(tile - best_tile(m))


def tuned_matmul(runs, **options):
    """A fresh tuned function with the same source (so the same records) each time; `runs`
    gets (m, tile) per run."""
    timer = StepTimer()

    @autotune(config_space=[{"tile": t} for t in TILES], key_fn=lambda m: m, warmup_runs=1, timed_runs=3,
              strategy="exhaustive", timer=timer, **options)
    def sweep_matmul(m, tile):
        runs.append((m, tile))
        timer.current = cost_ms(tile, m)

    return sweep_matmul


def measured(runs, m):
    return {tile for size, tile in runs if size == m}


def test_later_keys_start_from_their_neighbours_and_keep_the_exhaustive_choice():
    runs = []
    matmul = tuned_matmul(runs)
    summary = sweep(matmul, [(m,) for m in (64, 128, 256, 512)], progress=False, summary=False)
    assert [o.source for o in summary.outcomes] == ["tuned"] * 4
    assert len(measured(runs, 64)) == len(TILES)  # nothing to start from
    assert summary.outcomes[0].warm_start_from == ()
    # 128 confirms 64's best; 256's best is far from it: the probe's sample lands near it
    # and the climb walks there, tile by tile; 512 confirms 256's best. No key runs them all.
    for outcome, m in zip(summary.outcomes[1:], (128, 256, 512)):
        assert len(measured(runs, m)) < len(TILES), m
        assert outcome.measured == len(measured(runs, m))
        assert outcome.warm_start_from  # nearest first
        assert matmul.cache[m] == {"tile": best_tile(m)}
    assert summary.outcomes[3].warm_start_from == ("256", "128", "64")
    assert "4 tuned (3 warm-started)" in summary.text()


def test_a_sweep_resumes_reading_what_is_stored_and_writes_one_table(tmp_path):
    runs = []
    sweep(tuned_matmul(runs), [(64,), (128,)], progress=False, summary=False)
    runs.clear()
    again = tuned_matmul(runs)
    summary = sweep(again, [(64,), (128,), (256,)], table=tmp_path / "table.json", progress=False,
                    summary=False)
    assert [o.source for o in summary.outcomes] == ["disk", "disk", "tuned"]
    assert {m for m, _ in runs} == {256}  # the stored keys ran nothing
    assert again.cache[64] == {"tile": best_tile(64)}
    records = read_table(tmp_path / "table.json")
    assert sorted(r.key for r in records) == ["128", "256", "64"]
    assert summary.table == str(tmp_path / "table.json")


def test_the_setting_and_a_user_distance_turn_the_warm_start_off(monkeypatch):
    runs = []
    sweep(tuned_matmul(runs), [(64,)], progress=False, summary=False)
    monkeypatch.setenv("TRITON_DIST_AUTOTUNE_WARM_START", "0")
    sweep(tuned_matmul(runs), [(128,)], progress=False, summary=False)
    assert len(measured(runs, 128)) == len(TILES)
    monkeypatch.delenv("TRITON_DIST_AUTOTUNE_WARM_START")
    seen = []

    def far(a, b):
        seen.append((a, b))
        return math.inf  # nothing is a neighbour

    matmul = tuned_matmul(runs, key_distance=far)
    matmul(256)
    assert len(measured(runs, 256)) == len(TILES)
    assert matmul.last_report.warm_start_from == []
    assert (256, 64) in seen  # called with key values, not texts
    with pytest.raises(disttune.NotCallable, match="key_distance"):
        tuned_matmul(runs, key_distance=3)


def test_sweep_refuses_what_is_not_a_tuned_function_or_an_item():
    with pytest.raises(disttune.NotCallable):
        sweep(lambda m: m, [(1,)])
    with pytest.raises(disttune.InvalidSetting, match="item 0"):
        sweep(tuned_matmul([]), [lambda: 5], progress=False, summary=False)


def _sweep_on_rank(rank, world, redis_url, cache_base):
    import os

    os.environ["TRITON_DIST_AUTOTUNE_CACHE_DIR"] = f"{cache_base}/node-{rank}"  # no shared directory
    runs = []
    matmul = tuned_matmul(runs, redis_url=redis_url)
    summary = sweep(matmul, [(64 << i,) for i in range(8)], progress=False, summary=False)
    return {
        "tuned": sorted(int(o.key) for o in summary.tuned),
        "read": sorted(int(o.key) for o in summary.outcomes if o.source != "tuned"),
        "ran": sorted({m for m, _ in runs}),
        "cache": sorted(matmul.cache),
        "right": all(matmul.cache[m] == {"tile": best_tile(m)} for m in matmul.cache),
    }


@pytest.mark.skipif(REDIS_SERVER is None or REDIS_CLI is None, reason="redis-server is installed by scripts/setup.sh")
def test_two_ranks_tune_each_key_once_and_both_read_all_eight(tmp_path):
    server = RedisServer()
    try:
        outcomes = run_ranks(_sweep_on_rank, 2, "gloo", server.url, str(tmp_path))
        assert set(outcomes) == {0, 1}, outcomes
        keys = [64 << i for i in range(8)]
        for rank, outcome in outcomes.items():
            assert "error" not in outcome, outcome
            assert outcome["tuned"] == keys[rank::2]  # its share, tuned by it alone
            assert outcome["ran"] == keys[rank::2]  # the others' keys read from Redis: no run
            assert outcome["read"] == keys[1 - rank::2]
            assert outcome["cache"] == keys and outcome["right"]
        assert len(server.keys()) == 8  # every key tuned exactly once, all in the shared store
    finally:
        server.stop()


SHAPES_MODULE = """
from disttune.tune import autotune

runs = []

@autotune(config_space=[{"tile": t} for t in range(30)], key_fn=lambda m, n: (m, n), warmup_runs=0,
          timed_runs=1)
def cli_matmul(m, n, tile):
    runs.append(tile)

def make_args(m, n=4096):
    return (m, n)
"""


def test_the_sweep_command_tunes_the_shapes_of_a_file(tmp_path):
    (tmp_path / "shapes_mod.py").write_text(SHAPES_MODULE)
    (tmp_path / "shapes.json").write_text(json.dumps([{"m": 16}, {"m": 32}, [64, 1024]]))
    command = [sys.executable, "-m", "disttune", "sweep", "shapes_mod:cli_matmul", "--shapes", "shapes.json",
               "--make-args", "shapes_mod:make_args", "--table", "out.json", "--no-progress"]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "3 tuned" in done.stderr
    assert sorted(r.key for r in read_table(tmp_path / "out.json")) == [
        '{"$tuple":[16,4096]}', '{"$tuple":[32,4096]}', '{"$tuple":[64,1024]}']
    again = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert "0 tuned" in again.stderr and "3 already stored" in again.stderr, again.stderr
    bad = subprocess.run(command[:4] + ["shapes_mod:nothing", "--shapes", "shapes.json"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 1 and "has no tuned function 'nothing'" in bad.stderr


CLAIMING_MODULE = """
import json, os, sys, time
from disttune.tune import autotune
from disttune._sweep import sweep

@autotune(config_space=[{"tile": t} for t in range(4)], key_fn=lambda m: m, warmup_runs=0, timed_runs=1,
          strategy="exhaustive")
def slow(m, tile):
    if m == 0 and os.environ.get("STALL_ON_KEY_0"):
        print("stalled", flush=True)
        time.sleep(600)
    time.sleep(0.02)

print("ready", flush=True)
while os.environ.get("WAIT_FOR_GO") and not os.path.exists("go"):  # both sweeps start together
    time.sleep(0.01)
summary = sweep(slow, [(m,) for m in range(int(sys.argv[1]))], progress=False, summary=False,
                claim_lease_s=float(sys.argv[2]))
print(json.dumps({"tuned": sorted(int(o.key) for o in summary.tuned), "all": len(summary.outcomes)}))
"""


def start_sweep(tmp_path, keys, lease_s, **environment):
    """A sweep of `keys` keys in a new process, once it said "ready"."""
    (tmp_path / "claiming.py").write_text(CLAIMING_MODULE)
    sweep_process = subprocess.Popen([sys.executable, "claiming.py", str(keys), str(lease_s)], cwd=tmp_path,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     env={**os.environ, **environment})
    assert sweep_process.stdout.readline().strip() == "ready"
    return sweep_process


def finished(sweep_process):
    out, err = sweep_process.communicate(timeout=300)
    assert sweep_process.returncode == 0, err
    return json.loads(out.splitlines()[-1])


@pytest.mark.parametrize("store", ["directory", "redis"])
def test_two_sweeps_on_one_store_split_the_keys(tmp_path, store):
    if store == "redis" and (REDIS_SERVER is None or REDIS_CLI is None):
        pytest.skip("redis-server is installed by scripts/setup.sh")
    server = RedisServer() if store == "redis" else None
    try:
        keys = 24
        if server is None:  # one cache directory
            sweeps = [start_sweep(tmp_path, keys, 60, WAIT_FOR_GO="1") for _ in range(2)]
        else:  # a directory each, one Redis
            sweeps = [start_sweep(tmp_path, keys, 60, WAIT_FOR_GO="1", TRITON_DIST_AUTOTUNE_REDIS_URL=server.url,
                                  TRITON_DIST_AUTOTUNE_CACHE_DIR=str(tmp_path / f"node-{i}")) for i in range(2)]
        (tmp_path / "go").touch()
        first, second = (finished(sweep_process) for sweep_process in sweeps)
        assert first["all"] == keys and second["all"] == keys
        assert not set(first["tuned"]) & set(second["tuned"])  # no key tuned twice
        assert sorted(first["tuned"] + second["tuned"]) == list(range(keys))
        assert first["tuned"] and second["tuned"], (first, second)  # both did a share
    finally:
        if server is not None:
            server.stop()


def test_the_keys_of_a_killed_sweep_are_taken_over_when_its_claim_expires(tmp_path):
    stalled = start_sweep(tmp_path, 3, 1.0, STALL_ON_KEY_0="1")
    assert stalled.stdout.readline().strip() == "stalled"  # it holds the claim on key 0
    stalled.send_signal(signal.SIGKILL)
    stalled.wait()
    assert list((tmp_path / "cache" / ".claims").glob("*.claim")), "the dead sweep's claim is left"
    survivor = finished(start_sweep(tmp_path, 3, 1.0))
    assert survivor == {"tuned": [0, 1, 2], "all": 3}


NOT_TUNED_MODULE = """
def plain(m, n):
    return m
"""

# Each: the shapes file's text, the command's extra arguments, the environment's extra
# variables, and a part of the one line the command prints.
WRONG_SWEEPS = {
    "wrong arity": ("[[1, 2, 3]]", ["--make-args", "shapes_mod:make_args"], {}, "shape 0"),
    "wrong arity, no factory": ("[[1]]", [], {}, "shape 0"),
    "unknown keyword": ('[{"m": 1, "k": 2}]', ["--make-args", "shapes_mod:make_args"], {}, "shape 0"),
    "integer over 64 bits": (f"[[{2 ** 70}, 1]]", [], {}, "64 bits"),
    "lone surrogate": ('[["\\ud800", 1]]', [], {}, "shape 0"),
    "nesting 900 deep": ("[[" + "[" * 900 + "]" * 900 + ", 1]]", [], {}, "nests deeper than"),
    "not a tuned function": ("[[1, 2]]", ["--function", "not_tuned:plain"], {}, "not a tuned function"),
    "relative module name": ("[[1, 2]]", ["--function", ".shapes_mod:cli_matmul"], {}, "relative"),
    "table in a missing directory": ("[[1, 2]]", ["--table", "missing/out.json"], {}, "does not exist"),
    "WORLD_SIZE=abc": ("[[1, 2]]", [], {"WORLD_SIZE": "abc"}, "WORLD_SIZE"),
}


@pytest.mark.parametrize("case", sorted(WRONG_SWEEPS))
def test_a_wrong_sweep_is_one_error_line_and_status_1(tmp_path, case):
    shapes, extra, environment, says = WRONG_SWEEPS[case]
    (tmp_path / "shapes_mod.py").write_text(SHAPES_MODULE)
    (tmp_path / "not_tuned.py").write_text(NOT_TUNED_MODULE)
    (tmp_path / "shapes.json").write_text(shapes)
    function = "shapes_mod:cli_matmul"
    if "--function" in extra:
        function = extra[extra.index("--function") + 1]
        extra = []
    command = [sys.executable, "-m", "disttune", "sweep", function, "--shapes", "shapes.json",
               "--no-progress", *extra]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={**os.environ, **environment})
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith("disttune: error: ") and len(done.stderr.splitlines()) == 1, done.stderr
    assert says in done.stderr, done.stderr


@pytest.mark.parametrize("special", ["fifo", "/dev/zero"])
def test_the_shapes_come_from_a_regular_file_only(tmp_path, special):
    (tmp_path / "shapes_mod.py").write_text(SHAPES_MODULE)
    shapes = special
    if special == "fifo":
        shapes = str(tmp_path / "fifo")
        os.mkfifo(shapes)  # read, it would block for ever
    command = [sys.executable, "-m", "disttune", "sweep", "shapes_mod:cli_matmul", "--shapes", shapes]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith(f"disttune: error: {shapes} is ") and len(done.stderr.splitlines()) == 1
    assert "shapes are read from a regular file only" in done.stderr, done.stderr


def test_sweep_table_refuses_to_replace_what_is_not_a_regular_file(tmp_path):
    (tmp_path / "shapes_mod.py").write_text(SHAPES_MODULE)
    (tmp_path / "shapes.json").write_text("[[1, 2]]")
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "aimed.json").write_text("theirs")
    (tmp_path / "link.json").symlink_to(tmp_path / "aimed.json")
    for target in ("fifo", "link.json"):
        command = [sys.executable, "-m", "disttune", "sweep", "shapes_mod:cli_matmul", "--shapes", "shapes.json",
                   "--table", target, "--no-progress"]
        done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert done.returncode == 1, done.stderr
        assert done.stderr.startswith(f"disttune: error: refusing to replace {target}"), done.stderr
        assert len(done.stderr.splitlines()) == 1, done.stderr
    assert (tmp_path / "fifo").is_fifo() and (tmp_path / "link.json").is_symlink()
    assert (tmp_path / "aimed.json").read_text() == "theirs"


def test_buckets_round_sizes_up_to_a_tuned_bucket():
    assert [buckets.pow2(n) for n in (0, 1, 3, 33, 64, 65)] == [1, 1, 4, 64, 64, 128]
    assert buckets.pow2(9000, low=16, high=8192) == 8192
    assert buckets.pow2(3, low=16) == 16
    assert buckets.nearest(20, [16, 64, 32]) == 32
    assert buckets.nearest(100, [16, 64]) == 64
    assert buckets.ceil_to(17, 16) == 32
    with pytest.raises(ValueError, match="power of two"):
        buckets.pow2(5, high=100)
    with pytest.raises(TypeError, match="integer"):
        buckets.pow2(2.5)
    with pytest.raises(ValueError, match="empty"):
        buckets.nearest(3, [])
