"""contextual_autotune compiles what the engine names before each launch: the whole space for
exhaustive, in order; for the search, the candidates it measures and its guesses, not the
space (Triton's interpreter on CPU: the compiles themselves are no-ops there, so the test reads
which configs were queued)."""

import pytest
import torch

triton = pytest.importorskip("triton")

from disttune import _triton_compile  # noqa: E402
from disttune.autotuner import contextual_autotune  # noqa: E402

from dropin_kernels import DEVICE, add_kernel, grid_of  # noqa: E402


@pytest.fixture
def queued(monkeypatch):
    """The config indices contextual calls queue for compiling, in order, through the real
    start_compiles."""
    seen: list[int] = []
    start = _triton_compile.start_compiles

    def recording(kernel, configs, args, kwargs, executor, indices=None):
        seen.extend(range(len(configs)) if indices is None else indices)
        return start(kernel, configs, args, kwargs, executor, indices)

    monkeypatch.setattr(_triton_compile, "start_compiles", recording)
    return seen


def space(count):
    """`count` configs of add_kernel: BLOCK x num_warps x num_stages."""
    configs = [triton.Config({"BLOCK": block}, num_warps=warps, num_stages=stages)
               for block in (16, 32, 64, 128) for warps in (1, 2, 4, 8, 16) for stages in range(1, 21)]
    return configs[:count]


def tune(configs, **options):
    kernel = triton.autotune(configs=configs, key=["n"])(add_kernel)

    @contextual_autotune(n_warmup=1, n_repeat=1, **options)
    def add(x, y, seen):
        kernel[grid_of(x.numel())](x, y, seen, x.numel())
        return y

    n = 256
    add(torch.ones(n, device=DEVICE), torch.zeros(n, device=DEVICE), torch.zeros(2, dtype=torch.int32, device=DEVICE))
    return kernel


def test_exhaustive_queues_every_config_once_in_order(queued):
    tune(space(8))
    assert queued == list(range(8))


def test_the_search_queues_what_it_measures_not_the_space(queued):
    kernel = tune(space(400), strategy="search")
    assert len(set(queued)) == len(queued), "a config was queued twice"
    # The search's budget (the default effort's fewest, 45) and its guesses (at most 0.6 of the
    # budget): at most 18% of the 400 configs.
    assert 45 <= len(queued) <= 72
    assert kernel.configs.index(kernel.best_config) in queued
    # The log's choice line says what was compiled against what was measured.
    with open(".autotune_logs/rank-0.log") as log:
        choice = [line for line in log if "best-config-id" in line][-1]
    assert f"| compiled: {len(queued)} of 400 | measured: " in choice
