"""Tests of the drop-in's BenchTimer (disttune/triton/_bench_timer.py): what a do_bench may
answer. A time that is no time (NaN, inf, negative) fails its config, as in Triton; an answer
that is not a time at all is an error naming do_bench."""

import math

import pytest
import torch
import triton

import disttune.triton as dropin
from dropin_kernels import DEVICE, add_kernel, grid_of

N = 200


def tensors():
    x = torch.arange(N, dtype=torch.float32, device=DEVICE)
    y = torch.ones(N, dtype=torch.float32, device=DEVICE)
    seen = torch.zeros(2, dtype=torch.int32, device=DEVICE)
    return x, y, seen


def kernel_answering(seen, answers):
    """add_kernel tuned over BLOCK 16..128 by a do_bench answering answers[BLOCK] after one run."""

    def bench(kernel_call, quantiles=None):
        seen[0] = -1
        kernel_call()
        return answers[int(seen[0].item())]

    configs = [triton.Config({"BLOCK": block}) for block in answers]
    return dropin.autotune(configs=configs, key=["n"], do_bench=bench)(add_kernel)


def test_a_time_that_is_nan_inf_or_negative_fails_that_config_and_another_wins():
    x, y, seen = tensors()
    kernel = kernel_answering(seen, {16: math.nan, 32: math.inf, 64: -1.0, 128: [2.0, 1.9, 2.1]})
    kernel[grid_of(N)](x, y, seen, N)
    assert kernel.best_config.kwargs == {"BLOCK": 128}


@pytest.mark.parametrize("answer", ["fast", None, [], {"ms": 1.0}])
def test_an_answer_that_is_not_a_time_is_an_error_naming_do_bench(answer):
    x, y, seen = tensors()
    kernel = kernel_answering(seen, {16: answer, 32: 1.0})
    with pytest.raises(TypeError, match="do_bench returned") as raised:
        kernel[grid_of(N)](x, y, seen, N)
    assert "\n" not in str(raised.value)
