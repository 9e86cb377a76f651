"""A rank that hangs inside a launcher or is killed: the other ranks of a gloo group raise
a clear error naming the rank that never arrived, within the deadline + 5 s."""

import os
import signal
import time

import pytest
import torch.distributed as dist

from spawn_ranks import run_ranks

DEADLINE_S = 2.0


def _lose_last_rank(rank, world, how, marker):
    from disttune.tune import autotune

    def launch(n, tag):
        if tag == "b" and rank == world - 1:
            with open(marker, "w") as out:
                out.write(repr(time.time()))
            if how == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            time.sleep(3600)
        return tag

    tuned = autotune(config_space=[{"tag": "a"}, {"tag": "b"}], key_fn=lambda n: (n,),
                     collective_timeout_s=DEADLINE_S, disk_cache=False, warmup_runs=1, timed_runs=2)(launch)
    try:
        tuned(1)
        return {"error": None, "at": time.time()}
    except Exception as error:
        return {"error": f"{type(error).__name__}: {error}", "at": time.time()}


@pytest.mark.skipif(not dist.is_available(), reason="torch.distributed is not built in this torch")
# A hang is seen at the deadline; a killed peer at the deadline too, or earlier when gloo
# notices the closed connection first (a RuntimeError).
@pytest.mark.parametrize("how, error_types", [("hang", ("CollectiveTimeout",)),
                                              ("kill", ("CollectiveTimeout", "RuntimeError"))])
def test_a_lost_rank_is_named_by_the_others(tmp_path, how, error_types):
    marker = str(tmp_path / "lost-at")
    outcomes = run_ranks(_lose_last_rank, 3, "gloo", how, marker, timeout_s=120, wait_for=2)
    assert sorted(outcomes) == [0, 1], outcomes
    hung_at = float(open(marker).read())
    for outcome in outcomes.values():
        assert outcome["error"] and outcome["error"].startswith(error_types), outcome
        assert "ranks that did not arrive: 2 " in outcome["error"], outcome
        # The bound is the no-hang promise (deadline + 5 s), not a speed figure.
        assert outcome["at"] - hung_at <= DEADLINE_S + 5.0, outcome
