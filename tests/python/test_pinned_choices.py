"""bench/python/pinned_choices.py: plain Triton autotuners (and a subclass written as fla writes
its own) pinned to given choices run them without tuning; keys not pinned are tuned as usual."""

import os
import sys

import pytest
import torch
import triton
import triton.language as tl
from triton.runtime.autotuner import Autotuner

from dropin_kernels import DEVICE, CostBench, grid_of

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "bench", "python"))
from pinned_choices import pin  # noqa: E402

CONFIGS = [triton.Config({"BLOCK": block}) for block in (16, 32, 64)]


@triton.jit
def pinned_add_kernel(x_ptr, y_ptr, seen_ptr, n, BLOCK: tl.constexpr):
    """y += x; seen[0] = BLOCK of the launch, seen[1] counts launches."""
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(y_ptr + offsets, tl.load(y_ptr + offsets, mask=mask) + tl.load(x_ptr + offsets, mask=mask), mask=mask)
    if pid == 0:
        tl.store(seen_ptr, BLOCK)
        tl.atomic_add(seen_ptr + 1, 1)


class LookupFirstAutotuner(Autotuner):
    """As fla's CachedAutotuner: looks in its own store when the key is not in `cache`, then
    Triton's run."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.lookups = 0

    def run(self, *args, **kwargs):
        key = tuple([dict(zip(self.arg_names, args))["n"], "torch.float32", "torch.float32", "torch.int32"])
        if key not in self.cache:
            self.lookups += 1
        return super().run(*args, **kwargs)


def operands(n):
    x = torch.ones(n, device=DEVICE)
    return x, torch.zeros(n, device=DEVICE), torch.zeros(2, dtype=torch.int32, device=DEVICE)


def key_text(n):
    return str((n, "torch.float32", "torch.float32", "torch.int32"))


def autotuned(bench):
    return triton.autotune(configs=CONFIGS, key=["n"], do_bench=bench)(pinned_add_kernel)


def test_a_pinned_key_runs_its_config_without_tuning_and_other_keys_tune():
    x, y, seen = operands(64)
    bench = CostBench(seen, lambda block: {16: 3.0, 32: 1.0, 64: 2.0}[block])
    kernel = autotuned(bench)
    assert pin({"pinned_add_kernel": {key_text(64): str(CONFIGS[2])}}) == 1
    kernel[grid_of(64)](x, y, seen, 64)
    assert bench.blocks == [] and seen.tolist() == [64, 1]  # one launch, of the pinned config
    assert kernel.best_config is CONFIGS[2]
    x, y, seen = operands(96)
    bench.seen = seen
    kernel[grid_of(96)](x, y, seen, 96)  # a key not pinned: tuned by Triton, its fastest kept
    assert sorted(bench.blocks) == [16, 32, 64] and kernel.best_config is CONFIGS[1]
    assert str((96, "torch.float32", "torch.float32", "torch.int32")) not in kernel.cache.pins
    pin({"pinned_add_kernel": {key_text(64): str(CONFIGS[0])}})  # pinned again: 96 stays tuned
    kernel[grid_of(96)](x, y, seen, 96)
    assert len(bench.blocks) == 3 and kernel.best_config is CONFIGS[1]


def test_pinning_again_switches_the_config_and_a_pin_is_not_overwritten():
    x, y, seen = operands(64)
    kernel = autotuned(CostBench(seen, lambda block: 1.0))
    for config in (CONFIGS[0], CONFIGS[1], CONFIGS[0]):
        pin({"pinned_add_kernel": {key_text(64): str(config)}})
        kernel[grid_of(64)](x, y, seen, 64)
        assert kernel.best_config is config and int(seen[0]) == config.kwargs["BLOCK"]
    kernel.cache[(64, "torch.float32", "torch.float32", "torch.int32")] = CONFIGS[2]
    assert kernel.cache[(64, "torch.float32", "torch.float32", "torch.int32")] is CONFIGS[0]


def test_a_library_subclass_that_looks_up_its_own_store_first_sees_the_pin():
    x, y, seen = operands(64)
    kernel = LookupFirstAutotuner(pinned_add_kernel, pinned_add_kernel.arg_names, CONFIGS, ["n"], None, None,
                                  do_bench=CostBench(seen, lambda block: 1.0))
    pin({"pinned_add_kernel": {key_text(64): str(CONFIGS[1])}})
    kernel[grid_of(64)](x, y, seen, 64)
    assert kernel.lookups == 0 and kernel.best_config is CONFIGS[1] and seen.tolist() == [32, 1]


def test_a_config_the_autotuner_does_not_have_is_refused_by_name():
    kernel = autotuned(CostBench(operands(64)[2], lambda block: 1.0))
    with pytest.raises(ValueError, match="pinned_add_kernel has no config 'BLOCK: 128"):
        pin({"pinned_add_kernel": {key_text(64): str(triton.Config({"BLOCK": 128}))}})
    assert not hasattr(kernel.cache, "pins")  # the refused pin left the autotuner as it was
