"""triton.autotune kernels for the contextual tests (the spec's scale kernel and friends)."""

import triton
import triton.language as tl

BLOCK = 64


@triton.autotune(
    configs=[triton.Config({"BLOCK": BLOCK}, num_warps=warps) for warps in (4, 8)],
    key=["n"],
)
@triton.jit
def scale_kernel(x_ptr, y_ptr, alpha, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    tl.store(y_ptr + offsets, alpha * x, mask=mask)


def _keep_small_blocks(configs, named_args, **kwargs):
    return [config for config in configs if config.kwargs["BLOCK"] <= 128]


@triton.autotune(
    configs=[triton.Config({"BLOCK": block}) for block in (32, 64, 128, 256)],
    key=["n"],
    prune_configs_by={"early_config_prune": _keep_small_blocks},
    reset_to_zero=["out_ptr"],
)
@triton.jit
def sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offsets, mask=offsets < n, other=0.0)
    tl.atomic_add(out_ptr, tl.sum(x, axis=0))


@triton.autotune(
    configs=[triton.Config({"BLOCK": block}) for block in (32, 64)],
    key=["n"],
    restore_value=["x_ptr"],
)
@triton.jit
def increment_kernel(x_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(x_ptr + offsets, x + 1.0, mask=mask)


def _interrupt(named_args):
    raise KeyboardInterrupt


# The scale kernel again, with a config whose pre_hook is a Ctrl-C.
interrupted_scale_kernel = triton.autotune(
    configs=[triton.Config({"BLOCK": BLOCK}), triton.Config({"BLOCK": BLOCK}, num_warps=8, pre_hook=_interrupt)],
    key=["n"],
)(scale_kernel.fn)
