"""Multi-GPU scenarios through torch NCCL groups, one GPU per rank (scripts/gpu_check.sh runs
them where there are 2+ GPUs): the MAX rule with a launcher that has no tensor argument, a
record on some ranks only, a divergent prune, a config that fails on one rank, rank-split
tuning, contextual is_dist=True with a failure on one rank, the all-gather + GEMM tuned both
ways, and a rank killed (SIGKILL) or hanging in a launcher: the others raise within the
deadline + 5 s, naming it."""

import os
import signal
import sys
import time

import pytest
import torch
import torch.distributed as dist
import triton
import triton.language as tl

from spawn_ranks import run_ranks

GPUS = torch.cuda.device_count() if torch.cuda.is_available() else 0
pytestmark = pytest.mark.skipif(GPUS < 2, reason=f"needs 2+ CUDA devices, this machine has {GPUS}")

EXAMPLE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                       "examples", "python", "allgather_gemm")
DEADLINE_S = 3.0
SPACE = [{"tag": "a"}, {"tag": "b"}, {"tag": "c"}]


_cycles_per_ms = []


def calibrate_sleep():
    """Measures once per process how many torch.cuda._sleep cycles make a millisecond."""
    torch.cuda._sleep(1_000_000)
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    torch.cuda._sleep(20_000_000)
    stop.record()
    stop.synchronize()
    _cycles_per_ms.append(20_000_000 / start.elapsed_time(stop))


def sleep_ms(ms):
    """Device work of about `ms` milliseconds on the current stream (no tensor anywhere)."""
    torch.cuda._sleep(int(ms * _cycles_per_ms[0]))


def per_rank_ms(rank, tag):
    """Even ranks find "a" fast, odd ranks "b"; "c" is middling everywhere: only the MAX over
    the ranks picks "c"."""
    fast, slow = ("a", "b") if rank % 2 == 0 else ("b", "a")
    return {fast: 0.1, slow: 0.4, "c": 0.25}[tag]


def launcher(n, tag):
    """Sizes only: its device work depends on the config and the rank."""
    sleep_ms(per_rank_ms(dist.get_rank(), tag))
    return tag


def _cooperative(rank, world, cache):
    from disttune import RankDisagreement
    from disttune.tune import autotune

    calibrate_sleep()
    group = dist.new_group()
    outcome = {}

    # MAX rule, no tensor argument: the NCCL group means device events.
    tuned = autotune(config_space=SPACE, key_fn=lambda n: (n,), cache_dir=cache)(launcher)
    outcome["max_choice"] = tuned(1, autotune_pg=group)
    outcome["max_timer"] = tuned.last_report.timer
    outcome["max_agreed"] = [round(c.agreed_ms, 6) for c in tuned.last_report.candidates]

    # A record on some ranks only: per-rank cache directories, only rank 0 writes.
    own = os.path.join(cache, f"rank-{rank}")
    first = autotune(config_space=SPACE, key_fn=lambda n: (n,), cache_dir=own)(launcher)
    first(2, autotune_pg=group)
    again = autotune(config_space=SPACE, key_fn=lambda n: (n,), cache_dir=own)(launcher)
    outcome["partial_record_choice"] = again(2, autotune_pg=group)
    outcome["partial_record_source"] = again.last_report.source

    # A divergent prune: rank 0 keeps two entries, the others three.
    pruned = autotune(config_space=SPACE, key_fn=lambda n: (n,), cache_dir=cache,
                      prune_fn=lambda entry, n: rank != 0 or entry["tag"] != "c")(launcher)
    try:
        pruned(3, autotune_pg=group)
        outcome["prune"] = None
    except RankDisagreement as error:
        outcome["prune"] = str(error)

    # A config that fails on the last rank only: no rank may choose it.
    def failing(n, tag):
        if tag == "c" and rank == world - 1:
            raise RuntimeError("out of resources on this rank")
        return launcher(n, tag)

    fails = autotune(config_space=SPACE, key_fn=lambda n: (n,), cache_dir=cache)(failing)
    outcome["fail_choice"] = fails(4, autotune_pg=group)
    outcome["fail_agreed"] = [c.agreed_ms for c in fails.last_report.candidates]

    # Rank-split: each rank measures its share of a launcher that does not communicate.
    split = autotune(config_space=SPACE, key_fn=lambda n: (n,), cache_dir=cache,
                     split_across_ranks=True)(launcher)
    outcome["split_choice"] = split(5, autotune_pg=group)
    outcome["split_ranks"] = split.last_report.split_ranks
    outcome["split_timer"] = split.last_report.timer

    outcome["contextual"] = _contextual_failure(rank, world)
    outcome["allgather_gemm"] = _allgather_gemm(group)
    return outcome


def refuse_on_last_rank(nargs):
    """A tile's pre_hook: the tile cannot run on the last rank."""
    if dist.get_rank() == dist.get_world_size() - 1:
        raise RuntimeError("this tile fails on the last rank")


@triton.autotune(
    configs=[triton.Config({"BLOCK": 1024}, num_warps=4, pre_hook=refuse_on_last_rank),
             triton.Config({"BLOCK": 128}, num_warps=4), triton.Config({"BLOCK": 256}, num_warps=4)],
    key=["n"],
)
@triton.jit
def double(x, y, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y + offsets, tl.load(x + offsets, mask=offsets < n) * 2, mask=offsets < n)


def _contextual_failure(rank, world):
    """is_dist=True: a triton.autotune kernel whose tile 1024 fails on the last rank."""
    from disttune.autotuner import contextual_autotune

    @contextual_autotune(is_dist=True, n_repeat=3, n_warmup=1)
    def outer(x):
        y = torch.empty_like(x)
        double[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)](x, y, x.numel())
        dist.all_reduce(y)  # the outer function communicates too
        return y

    x = torch.ones(1 << 20, device="cuda")
    y = outer(x)
    return {"best": double.best_config.kwargs["BLOCK"], "correct": bool((y == 2 * world).all())}


def _allgather_gemm(group):
    """The operator tuned both ways on NCCL, each result checked against torch."""
    sys.path.insert(0, EXAMPLE)
    from allgather_gemm import AllGatherGemm, chunk_gemm_autotuned, operands, reference
    from tune_contextual import make_contextual
    from tune_function import key_fn, make_tuned

    shard_rows, k, n = 1024, 1024, 512
    op = AllGatherGemm(group, shard_rows, k, n)
    a_shard, b = operands(group, shard_rows, k, n)
    expected = reference(group, a_shard, b)
    tuned = make_tuned(warmup_runs=2, timed_runs=3)
    out = tuned(op, a_shard, b, autotune_pg=group).clone()
    entry = tuned.cache[key_fn(op, a_shard, b)]
    function_error = float((out - expected).abs().max())

    world_op = AllGatherGemm(dist.group.WORLD, shard_rows, k, n)
    out = make_contextual(n_repeat=3, n_warmup=1)(world_op, a_shard, b, 4, "two-streams")
    return {
        "function_error": function_error,
        "function_choice": (entry["gemm"].kwargs, entry["chunks"], entry["layout"]),
        "function_timer": tuned.last_report.timer,
        "contextual_error": float((out - expected).abs().max()),
        "contextual_choice": chunk_gemm_autotuned.best_config.kwargs,
    }


def test_ranks_agree_through_nccl_groups(tmp_path):
    outcomes = run_ranks(_cooperative, GPUS, "nccl", str(tmp_path / "cache"), timeout_s=240)
    assert sorted(outcomes) == list(range(GPUS)), outcomes
    for rank, outcome in outcomes.items():
        assert "error" not in outcome, outcome.get("traceback")
        assert outcome["max_choice"] == "c", outcome  # only the MAX over the ranks picks "c"
        assert outcome["max_timer"] == "cuda"
        assert outcome["max_agreed"] == outcomes[0]["max_agreed"]
        assert outcome["max_agreed"][0] > 0.3 and outcome["max_agreed"][1] > 0.3, outcome  # slow somewhere
        assert outcome["partial_record_choice"] == "c"
        assert outcome["partial_record_source"] == outcomes[0]["partial_record_source"]
        assert outcome["prune"] and "candidate" in outcome["prune"].lower(), outcome
        assert outcome["fail_choice"] != "c" and outcome["fail_agreed"][2] == float("inf"), outcome
        assert outcome["split_choice"] == outcomes[0]["split_choice"], outcome
        assert outcome["split_ranks"] == GPUS and outcome["split_timer"] == "cuda", outcome
        assert outcome["contextual"] == outcomes[0]["contextual"]
        assert outcome["contextual"]["best"] != 1024 and outcome["contextual"]["correct"], outcome
        op = outcome["allgather_gemm"]
        assert op["function_error"] < 2e-2 and op["contextual_error"] < 2e-2, op
        assert op["function_timer"] == "cuda"
        assert op["function_choice"] == outcomes[0]["allgather_gemm"]["function_choice"]
        assert op["contextual_choice"] == outcomes[0]["allgather_gemm"]["contextual_choice"]


def _fault(rank, world, how, marker):
    """The last rank is killed (SIGKILL) or hangs in its launcher during the second config;
    the others report the error they got and when."""
    from disttune.tune import autotune

    calibrate_sleep()
    group = dist.new_group()

    def victim(n, tag):
        if tag == "b" and rank == world - 1:
            with open(marker, "w") as out:
                out.write(repr(time.time()))
            if how == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            time.sleep(3600)
        return launcher(n, tag)

    tuned = autotune(config_space=SPACE, key_fn=lambda n: (n,), collective_timeout_s=DEADLINE_S,
                     disk_cache=False)(victim)
    try:
        tuned(1, autotune_pg=group)
        return {"error": None, "at": time.time()}
    except Exception as error:
        return {"error": f"{type(error).__name__}: {error}", "at": time.time()}


@pytest.mark.parametrize("how", ["kill", "hang"])
def test_a_lost_rank_is_named_within_the_deadline(tmp_path, how):
    marker = str(tmp_path / "lost-at")
    outcomes = run_ranks(_fault, GPUS, "nccl", how, marker, timeout_s=120, wait_for=GPUS - 1)
    survivors = [rank for rank in range(GPUS - 1)]
    assert sorted(outcomes) == survivors, outcomes
    lost_at = float(open(marker).read())
    for rank in survivors:
        error = outcomes[rank]["error"]
        assert error and error.startswith("CollectiveTimeout"), outcomes[rank]
        assert f"ranks that did not arrive: {GPUS - 1} " in error, error
        assert outcomes[rank]["at"] - lost_at <= DEADLINE_S + 5.0, (outcomes[rank]["at"] - lost_at, error)
