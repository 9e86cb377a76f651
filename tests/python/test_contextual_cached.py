"""A contextual call after its kernels are tuned: what it keeps across calls (a key's pruned
configs, their texts, the engine's choice, the timer) and when it lets go of them (a cleared
choice, a new key). Triton's interpreter on the CPU; StepTimer times each tuning launch by a
cost per BLOCK, so the winner is decided by the test."""

import pytest
import torch

triton = pytest.importorskip("triton")

from disttune import _core, _timing, _triton_hook  # noqa: E402
from disttune.autotuner import contextual_autotune  # noqa: E402

from dropin_kernels import DEVICE, add_kernel  # noqa: E402
from step_timer import StepTimer  # noqa: E402

BLOCKS = (16, 32, 64, 128)
N = 200
RUNS_PER_TUNING = len(BLOCKS) * (1 + 2) + 1  # n_warmup=1, n_repeat=2, then the final run


class Counted:
    """Wraps a function and counts its calls."""

    def __init__(self, function):
        self.function = function
        self.calls = 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        return self.function(*args, **kwargs)


def tuned(cost, timer, prune=None):
    """A triton.autotune add_kernel over BLOCKS whose tuning launches take cost[BLOCK] ms on
    `timer`; `prune` (configs -> configs) is its early_config_prune."""

    def set_cost(nargs, reset_only=False):
        timer.current = cost[nargs["BLOCK"]]

    options = {}
    if prune is not None:
        options["prune_configs_by"] = {"early_config_prune": lambda configs, named_args, **kwargs: prune(configs)}
    kernel = triton.autotune(configs=[triton.Config({"BLOCK": block}) for block in BLOCKS], key=["n"],
                             pre_hook=set_cost, **options)(add_kernel)

    @contextual_autotune(n_warmup=1, n_repeat=2, timer=timer)
    def step(x, y, seen, n):
        """Launches the kernel once; returns the BLOCK it ran with."""
        kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, seen, n)
        return int(seen[0])

    return kernel, step


def tensors(n=N):
    return (torch.arange(n, dtype=torch.float32, device=DEVICE), torch.zeros(n, dtype=torch.float32, device=DEVICE),
            torch.zeros(2, dtype=torch.int32, device=DEVICE))


def key_of(n):
    return (n, "torch.float32", "torch.float32", "torch.int32")


@pytest.fixture
def spies(monkeypatch):
    """Counts _config_text (one config's encoding) calls; spies.prunes(kernel) counts a
    kernel's prune_configs calls."""

    class Spies:
        encodings = Counted(_triton_hook._config_text)

        @staticmethod
        def prunes(kernel):
            counted = Counted(kernel.prune_configs)
            monkeypatch.setattr(kernel, "prune_configs", counted, raising=False)
            return counted

    monkeypatch.setattr(_triton_hook, "_config_text", Spies.encodings)
    return Spies


def test_a_cached_call_neither_prunes_nor_encodes_and_launches_once(spies):
    timer = StepTimer()
    kernel, step = tuned({16: 4.0, 32: 1.0, 64: 2.0, 128: 3.0}, timer)
    prunes = spies.prunes(kernel)
    x, y, seen = tensors()
    assert step(x, y, seen, N) == 32
    assert step.last_tuner.outer_runs == RUNS_PER_TUNING
    assert (prunes.calls, spies.encodings.calls) == (1, len(BLOCKS))
    launches = int(seen[1])
    for call in range(1, 4):
        assert step(x, y, seen, N) == 32
        assert step.last_tuner.outer_runs == 1
        assert int(seen[1]) == launches + call  # one launch per call, with the chosen config
    assert (prunes.calls, spies.encodings.calls) == (1, len(BLOCKS))
    assert kernel.cache == {key_of(N): kernel.best_config}
    assert kernel.best_config.kwargs == {"BLOCK": 32}


def test_a_cleared_choice_is_tuned_again_by_the_next_call(spies):
    timer = StepTimer()
    cost = {16: 4.0, 32: 1.0, 64: 2.0, 128: 3.0}
    kernel, step = tuned(cost, timer)
    prunes = spies.prunes(kernel)
    x, y, seen = tensors()
    assert step(x, y, seen, N) == 32 and step(x, y, seen, N) == 32
    kernel._disttune_state.clear()
    cost[16] = 0.5
    assert step(x, y, seen, N) == 16
    assert step.last_tuner.outer_runs == RUNS_PER_TUNING
    assert prunes.calls == 2  # a miss prunes again, as Triton's does
    assert kernel.cache == {key_of(N): kernel.best_config}
    assert kernel.best_config.kwargs == {"BLOCK": 16}
    assert step(x, y, seen, N) == 16 and step.last_tuner.outer_runs == 1
    assert prunes.calls == 2


def test_a_new_key_still_tunes_and_the_old_one_stays_cached(spies):
    timer = StepTimer()
    kernel, step = tuned({16: 4.0, 32: 1.0, 64: 2.0, 128: 3.0}, timer)
    prunes = spies.prunes(kernel)
    assert step(*tensors(), N) == 32
    small = N // 2
    assert step(*tensors(small), small) == 32
    assert step.last_tuner.outer_runs == RUNS_PER_TUNING
    assert prunes.calls == 2
    assert step(*tensors(), N) == 32 and step.last_tuner.outer_runs == 1
    assert step(*tensors(small), small) == 32 and step.last_tuner.outer_runs == 1
    assert prunes.calls == 2
    assert set(kernel.cache) == {key_of(N), key_of(small)}


def test_a_cached_call_keeps_the_choice_where_pruning_now_differs(spies):
    # As Triton's own cache hit: the configs are pruned when a key is tuned, not at every call.
    timer = StepTimer()
    largest = {"block": 128}
    kernel, step = tuned({16: 4.0, 32: 1.0, 64: 2.0, 128: 3.0}, timer,
                         prune=lambda configs: [c for c in configs if c.kwargs["BLOCK"] <= largest["block"]])
    x, y, seen = tensors()
    assert step(x, y, seen, N) == 32
    largest["block"] = 16
    assert step(x, y, seen, N) == 32 and step.last_tuner.outer_runs == 1
    # Once the choice is gone, the next call prunes for its arguments: one config is left.
    kernel._disttune_state.clear()
    assert step(x, y, seen, N) == 16
    assert kernel.best_config.kwargs == {"BLOCK": 16}


def test_a_cached_call_makes_no_timer(monkeypatch):
    made = Counted(_timing.timer_for)
    monkeypatch.setattr(_timing, "timer_for", made)

    @contextual_autotune()
    def nothing(x):
        return x

    x = torch.ones(2)
    for _ in range(3):
        assert nothing(x) is x
    assert made.calls == 1


def test_the_epoch_moves_when_the_cache_is_emptied():
    state = _core.KernelTuningState("k")
    before = state.epoch()
    assert state.cached_index("key", _core.CandidateTexts(['{"a":1}'])) is None
    state.clear()
    assert state.epoch() == before + 1
