"""A real two-process torch.distributed (gloo) group: ranks agree on MAX times and on errors.
Run times come from a cost model (StepTimer), never from the load of the machine."""

import pytest
import torch.distributed as dist

from disttune import RankDisagreement
from disttune.tune import autotune
from spawn_ranks import run_ranks
from step_timer import StepTimer

# Per-rank run times (ms): rank 0 alone would pick "a"; the MAX over ranks picks "b".
SPEEDS = [{"a": 0.3, "b": 1.5}, {"a": 3.0, "b": 1.5}]


def _agree(rank, world):
    space = [{"tag": "a"}, {"tag": "b"}]
    outcome = {}
    timer = StepTimer()

    @autotune(config_space=space, key_fn=lambda x: x, timer=timer)
    def on_default_group(x, tag):
        timer.current = SPEEDS[rank][tag]
        return tag

    outcome["default"] = on_default_group(1)
    outcome["agreed"] = [c.agreed_ms for c in on_default_group.last_report.candidates]
    outcome["record"] = on_default_group.last_report.record_path is not None

    group = dist.new_group([0, 1])

    @autotune(config_space=space, key_fn=lambda x: x, timer=timer)
    def on_given_group(x, tag):
        timer.current = SPEEDS[rank][tag]
        return tag

    outcome["given"] = on_given_group(1, autotune_pg=group)

    @autotune(config_space=space, key_fn=lambda x: x)
    def with_different_keys(x, tag):
        return tag

    try:
        with_different_keys(10 + rank, autotune_pg=group)
        outcome["disagreement"] = None
    except RankDisagreement as error:
        outcome["disagreement"] = str(error)
    return outcome


@pytest.mark.skipif(not dist.is_available(), reason="torch.distributed is not built in this torch")
def test_two_gloo_ranks_agree(tmp_path):
    outcomes = run_ranks(_agree, 2, "gloo", env={"TRITON_DIST_AUTOTUNE_CACHE_DIR": tmp_path / "shared-cache"})
    assert sorted(outcomes) == [0, 1], outcomes
    for rank in range(2):
        assert "error" not in outcomes[rank], outcomes
        assert outcomes[rank]["default"] == "b", outcomes
        assert outcomes[rank]["given"] == "b", outcomes
        assert outcomes[rank]["agreed"] == outcomes[0]["agreed"]  # the same MAX on both ranks
        assert outcomes[rank]["disagreement"] and "key" in outcomes[rank]["disagreement"].lower()
    assert outcomes[0]["agreed"][0] == 3.0  # "a" took rank 1's time
    assert outcomes[0]["record"] and not outcomes[1]["record"]  # one writer per node


# Rank-split tuning: per-entry run time (ms), the same on both ranks; "c" is the fastest.
SPLIT_SPEEDS = {"a": 5.0, "b": 4.0, "c": 0.05, "d": 3.0, "e": 6.0}


def _split(rank, world):
    space = [{"tag": tag} for tag in SPLIT_SPEEDS]
    runs = {tag: 0 for tag in SPLIT_SPEEDS}
    compiled = []
    timer = StepTimer()

    @autotune(
        config_space=space,
        key_fn=lambda x: x,
        split_across_ranks=True,
        precompile=lambda entry, x: compiled.append(entry["tag"]),
        timer=timer,
    )
    def split(x, tag):
        runs[tag] += 1
        timer.current = SPLIT_SPEEDS[tag]
        return tag

    choice = split(1)
    report = split.last_report
    return {
        "choice": choice,
        "split_ranks": report.split_ranks,
        "agreed": [c.agreed_ms for c in report.candidates],
        "record": report.record_path is not None,
        "runs": runs,
        "compiled": sorted(compiled),
    }


@pytest.mark.skipif(not dist.is_available(), reason="torch.distributed is not built in this torch")
def test_two_gloo_ranks_split_the_candidates(tmp_path):
    outcomes = run_ranks(_split, 2, "gloo", env={"TRITON_DIST_AUTOTUNE_CACHE_DIR": tmp_path / "shared-cache"})
    assert sorted(outcomes) == [0, 1], outcomes
    tags = list(SPLIT_SPEEDS)
    for rank in range(2):
        outcome = outcomes[rank]
        assert "error" not in outcome, outcomes
        assert outcome["choice"] == "c", outcomes
        assert outcome["split_ranks"] == 2
        assert outcome["agreed"] == outcomes[0]["agreed"]  # every rank knows every time
        share = [tag for i, tag in enumerate(tags) if i % 2 == rank]
        # Only its share: 5 warm-up and 10 timed runs each; "c" (rank 0's) once more at the end.
        assert outcome["runs"] == {tag: (15 if tag in share else 0) + (tag == "c") for tag in tags}, outcome
        assert outcome["compiled"] == sorted(share)
    assert outcomes[0]["record"] and not outcomes[1]["record"]


def test_contextual_is_dist_refuses_a_split():
    from disttune.autotuner import contextual_autotune

    with pytest.raises(ValueError, match="cannot be split across ranks with is_dist"):
        contextual_autotune(is_dist=True, split_across_ranks=True)(lambda: None)
