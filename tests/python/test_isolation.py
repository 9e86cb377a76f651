"""Tunings that survive bad configs: isolated runs (crash, hang), output checks, restored inputs."""

import os
import time

import pytest
import torch
import torch.distributed as dist

import isolated_launchers as launchers
from disttune.tune import autotune
from spawn_ranks import run_ranks


def _outcomes(report):
    return {c.config: (c.failed, c.error) for c in report.candidates}


def _fastest_good(report):
    """The good candidate of the lowest time the worker measured, the lowest index on a tie
    (which one that is, a loaded machine may decide: the tests assert the rule, not a winner)."""
    good = [i for i, c in enumerate(report.candidates) if not c.failed]
    return min(good, key=lambda i: (report.candidates[i].agreed_ms, i))


def test_crashing_hanging_and_wrong_configs_fail_alone_in_the_worker():
    x = torch.arange(6.0)
    assert torch.equal(launchers.misbehaving(x), x * 2)
    report = launchers.misbehaving.last_report
    errors = [c.error for c in report.candidates]
    assert "crashed (signal SIGABRT)" in errors[0]
    assert "crashed (signal SIGSEGV)" in errors[1]
    assert "timed out after 3 s" in errors[2]
    assert "differs from the reference (doubled)" in errors[3] and "first at index (1,)" in errors[3]
    assert [c.failed for c in report.candidates] == [True, True, True, True, False, False]
    # Timed in the worker, around each run: a spin reads at least its length there (to the
    # float's rounding), however loaded the machine; load only lengthens a run, so no bound
    # is put the other way.
    good, fast = report.candidates[4], report.candidates[5]
    assert len(good.samples) == len(fast.samples) == 3
    assert min(good.samples) >= 2.0 - 1e-6 and min(fast.samples) >= 0.2 - 1e-6, (good.samples, fast.samples)
    assert report.best == _fastest_good(report)
    # The caller keeps working: a cached call, and a new key tunes again with a fresh worker.
    assert torch.equal(launchers.misbehaving(x), x * 2)
    y = torch.ones(2, 2)
    assert torch.equal(launchers.misbehaving(y), y * 2)


def test_isolated_in_place_launcher_sees_the_same_inputs_and_the_caller_its_own():
    x = torch.arange(4.0)
    out = torch.full((4,), 10.0)
    result = launchers.isolated_in_place(x, out)
    assert torch.equal(result, torch.full((4,), 10.0) + x)  # one add: the final run's
    assert torch.equal(out, torch.full((4,), 10.0) + x)
    assert not any(c.failed for c in launchers.isolated_in_place.last_report.candidates)


def _in_place(restore):
    calls = []

    def add(x, out, step):
        calls.append(out.clone())
        out.add_(x * step)
        return out

    options = {"restore_value": ["out"]} if restore else {}
    tuned = autotune(config_space=[{"step": 1}, {"step": 1.0}], key_fn=lambda x, out: 0, disk_cache=False, **options)(add)
    return tuned, calls


def test_restore_value_gives_every_run_and_the_final_run_the_callers_inputs():
    x, out = torch.ones(3), torch.zeros(3)
    tuned, seen = _in_place(restore=True)
    assert torch.equal(tuned(x, out), torch.ones(3))
    assert len(seen) == 2 * (5 + 10) + 1
    assert all(torch.equal(value, torch.zeros(3)) for value in seen)


def test_without_restore_value_runs_accumulate():
    x, out = torch.ones(3), torch.zeros(3)
    tuned, seen = _in_place(restore=False)
    assert tuned(x, out)[0] == 31.0  # 30 tuning runs and the final one


def test_reset_to_zero_zeroes_before_runs_and_the_final_run_sees_the_original():
    seen = []

    def accumulate(x, out, step):
        seen.append(out.clone())
        return out.add_(x * step)

    tuned = autotune(config_space=[{"step": 1}], key_fn=lambda x, out: 0, reset_to_zero=["out"],
                     warmup_runs=1, timed_runs=2, disk_cache=False)(accumulate)
    out = torch.full((2,), 7.0)
    assert torch.equal(tuned(torch.ones(2), out), torch.full((2,), 8.0))
    assert all(torch.equal(value, torch.zeros(2)) for value in seen[:-1])
    assert torch.equal(seen[-1], torch.full((2,), 7.0))


def test_wrong_results_fail_with_where_they_differ():
    def launcher(x, bug):
        y = x.clone()
        if bug == "element":
            y[1, 2] += 1.0
        if bug == "shape":
            y = y.reshape(-1)
        return {"out": y, "count": 3 if bug != "count" else 4}

    space = [{"bug": "element"}, {"bug": "shape"}, {"bug": "count"}, {"bug": None}]
    tuned = autotune(config_space=space, key_fn=lambda x: 0, reference=3, disk_cache=False, timed_runs=2)(launcher)
    tuned(torch.zeros(2, 3))
    errors = [c.error for c in tuned.last_report.candidates]
    assert "differs from the reference (config_space[3])" in errors[0]
    assert "result['out'] differs at 1 of 6 elements, first at index (1, 2)" in errors[0]
    assert "shape (6,)" in errors[1]
    assert "result['count'] is 4, the reference 3" in errors[2]
    assert not tuned.last_report.candidates[3].failed


def test_check_and_tolerances_decide_what_is_close_enough():
    def launcher(x, noise):
        return x + noise

    space = [{"noise": 1e-3}, {"noise": 0.0}]
    loose = autotune(config_space=space, key_fn=lambda x: 0, reference=lambda x: x, atol=1e-2, disk_cache=False)(launcher)
    loose(torch.zeros(4))
    assert not any(c.failed for c in loose.last_report.candidates)
    strict = autotune(config_space=space, key_fn=lambda x: 0, reference=lambda x: x, disk_cache=False)(launcher)
    strict(torch.zeros(4))
    assert [c.failed for c in strict.last_report.candidates] == [True, False]
    never = autotune(config_space=space, key_fn=lambda x: 0, reference=1, check=lambda r, e: False, disk_cache=False)(launcher)
    with pytest.raises(RuntimeError, match="check <lambda>\\(\\) returned False"):
        never(torch.zeros(4))


def test_each_result_is_checked_once_before_timing():
    runs = []

    def launcher(x, tag):
        runs.append(tag)
        return x

    tuned = autotune(config_space=[{"tag": "a"}, {"tag": "b"}], key_fn=lambda x: 0, reference=lambda x: x,
                     warmup_runs=1, timed_runs=2, disk_cache=False)(launcher)
    tuned(1)
    assert runs[:8] == ["a"] * 4 + ["b"] * 4  # check run, warm-up, 2 timed each
    assert len(runs) == 9  # and the final run


def test_bad_options_are_clear_errors():
    def local(x, tag):
        return x

    space = [{"tag": 1}]
    with pytest.raises(ValueError, match="not a top-level function of an importable module"):
        autotune(config_space=space, key_fn=lambda x: 0, isolate=True)(local)
    with pytest.raises(ValueError, match="runs the reference '<lambda>' in a worker process"):
        autotune(config_space=space, key_fn=lambda x: 0, isolate=True, reference=lambda x: x)(launchers.doubled)
    with pytest.raises(ValueError, match="only with isolate=True"):
        autotune(config_space=space, key_fn=lambda x: 0, candidate_timeout_s=1)(local)
    with pytest.raises(ValueError, match="not an index"):
        autotune(config_space=space, key_fn=lambda x: 0, reference=1)(local)
    with pytest.raises(ValueError, match="needs reference="):
        autotune(config_space=space, key_fn=lambda x: 0, check=lambda r, e: True)(local)
    with pytest.raises(ValueError, match="'y' in restore_value/reset_to_zero is not a parameter"):
        autotune(config_space=space, key_fn=lambda x: 0, restore_value=["y"])(local)
    tuned = autotune(config_space=space, key_fn=lambda x: 0, restore_value=["x"])(local)
    with pytest.raises(TypeError, match="argument 'x' of 'local' is in restore_value/reset_to_zero but is int"):
        tuned(3)


def _fail_on_rank_one(rank, world):
    os.environ["DISTTUNE_TEST_RANK"] = str(rank)  # read by the launcher in its worker process
    outcome = {"result": launchers.fails_on_one_rank(1)}
    outcome["failed"] = [(c.failed, c.error) for c in launchers.fails_on_one_rank.last_report.candidates]
    outcome["again"] = launchers.fails_on_one_rank(1)
    return outcome


@pytest.mark.skipif(not dist.is_available(), reason="torch.distributed is not built in this torch")
def test_two_ranks_vote_a_crash_or_hang_on_one_rank_as_a_failure(tmp_path):
    outcomes = run_ranks(_fail_on_rank_one, 2, "gloo", timeout_s=240)
    assert sorted(outcomes) == [0, 1], outcomes
    for rank in range(2):
        assert "error" not in outcomes[rank], outcomes
        assert outcomes[rank]["result"] == (1, "c") and outcomes[rank]["again"] == (1, "c")
        assert [failed for failed, _ in outcomes[rank]["failed"]] == [True, True, False]
    assert "crashed (signal SIGSEGV)" in outcomes[1]["failed"][0][1]
    assert "timed out after 3 s" in outcomes[1]["failed"][1][1]
    assert outcomes[0]["failed"][0][1] == "failed on another rank"


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            text = stat.read()
    except OSError:
        return False
    return text[text.rfind(b")") + 2 : text.rfind(b")") + 3] != b"Z"


def test_processes_a_config_starts_end_with_the_tuning_and_exit_statuses_are_reported(tmp_path):
    pid_file = tmp_path / "pids"
    x = torch.arange(3.0)
    assert torch.equal(launchers.spawning(x, str(pid_file)), x * 2)
    report = launchers.spawning.last_report
    outcomes = [(c.failed, c.error) for c in report.candidates]
    assert outcomes[0] == (False, "") and outcomes[1] == (False, ""), outcomes
    assert "timed out after 5 s" in outcomes[2][1], outcomes
    assert "the worker exited with status 3" in outcomes[3][1], outcomes
    assert "started more than 256 processes" in outcomes[4][1], outcomes
    assert not outcomes[5][0] and report.best == _fastest_good(report)
    started = [int(line) for line in pid_file.read_text().split()]
    assert len(started) >= launchers.FORKS + launchers.FORKS + 1
    # The worker ends what the tuning's configs left when the tuning ends (a message it gets
    # after the call returns): wait for it, at most a minute.
    for _ in range(600):
        left = [pid for pid in started if _alive(pid)]
        if not left:
            break
        time.sleep(0.1)
    assert left == [], f"{len(left)} of {len(started)} processes the configs started are left"
