"""A tuned contextual call on two gloo ranks (is_dist=True): cached calls keep the agreed
choice without encoding anything again, and the engine still sees every launch, so ranks that
launch differently on a cached call are told so. Run times come from a cost model (StepTimer)."""

import pytest
import torch.distributed as dist

from spawn_ranks import run_ranks

# Per-rank run times (ms) by BLOCK: rank 0 alone would pick 16; the MAX over ranks picks 32.
COSTS = [{16: 0.3, 32: 1.5}, {16: 3.0, 32: 1.5}]
N = 200


def _cached_calls(rank, world):
    import torch
    import triton

    from disttune import RankDisagreement, _triton_hook
    from disttune.autotuner import contextual_autotune
    from dropin_kernels import add_kernel
    from step_timer import StepTimer

    timer = StepTimer()

    def set_cost(nargs, reset_only=False):
        timer.current = COSTS[rank][nargs["BLOCK"]]

    kernel = triton.autotune(configs=[triton.Config({"BLOCK": block}) for block in (16, 32)], key=["n"],
                             pre_hook=set_cost)(add_kernel)

    @contextual_autotune(is_dist=True, n_warmup=1, n_repeat=2, timer=timer)
    def step(x, y, seen, launches):
        for _ in range(launches):
            kernel[lambda meta: (triton.cdiv(N, meta["BLOCK"]),)](x, y, seen, N)
        return int(seen[0])

    encodings = []
    encode = _triton_hook._config_text
    _triton_hook._config_text = lambda *args: encodings.append(1) or encode(*args)
    x, y, seen = torch.arange(N, dtype=torch.float32), torch.zeros(N), torch.zeros(2, dtype=torch.int32)
    outcome = {"tuned": step(x, y, seen, 1), "tuning_runs": step.last_tuner.outer_runs,
               "encodings_tuning": len(encodings)}
    outcome["cached"] = [step(x, y, seen, 1) for _ in range(3)]
    outcome["cached_runs"] = step.last_tuner.outer_runs
    outcome["encodings_after"] = len(encodings)
    try:
        step(x, y, seen, 1 if rank == 0 else 2)
        outcome["diverged"] = None
    except RankDisagreement as error:
        outcome["diverged"] = str(error)
    outcome["after_divergence"] = step(x, y, seen, 1)
    outcome["best"] = kernel.best_config.kwargs
    return outcome


@pytest.mark.skipif(not dist.is_available(), reason="torch.distributed is not built in this torch")
def test_cached_contextual_calls_on_two_gloo_ranks():
    # CPU tensors in Triton's interpreter on every machine (the ranks are gloo ranks).
    outcomes = run_ranks(_cached_calls, 2, "gloo", env={"TRITON_INTERPRET": "1"})
    assert sorted(outcomes) == [0, 1], outcomes
    for rank in range(2):
        outcome = outcomes[rank]
        assert "error" not in outcome, outcomes
        assert outcome["tuned"] == 32 and outcome["best"] == {"BLOCK": 32}, outcomes
        assert outcome["tuning_runs"] == 2 * (1 + 2) + 1, outcomes
        assert outcome["cached"] == [32, 32, 32] and outcome["cached_runs"] == 1, outcomes
        assert outcome["encodings_tuning"] == outcome["encodings_after"] == 2, outcomes
        assert "different tunable-kernel launches" in (outcome["diverged"] or ""), outcomes
        assert outcome["after_divergence"] == 32, outcomes
