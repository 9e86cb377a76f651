"""Top-level Triton launchers for the isolated GPU tests (a worker imports them by path): one
config writes far out of bounds (illegal address), one spins forever, one computes wrong values."""

import torch
import triton
import triton.language as tl

from disttune.tune import autotune

# Entries: "oob" writes 2^28 elements past each target, "spin" waits for a flag nobody sets,
# "wrong" scales by 3 instead of 2; the two "good" block sizes are right.
SPACE = [
    {"mode": "oob", "BLOCK": 256},
    {"mode": "spin", "BLOCK": 256},
    {"mode": "wrong", "BLOCK": 256},
    {"mode": "good", "BLOCK": 256},
    {"mode": "good", "BLOCK": 1024},
]


@triton.jit
def scale_kernel(x_ptr, out_ptr, flag_ptr, n, factor, STRIDE: tl.constexpr, SPIN: tl.constexpr,
                 BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    if SPIN:
        while tl.load(flag_ptr, volatile=True) == 0:
            pass
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets.to(tl.int64) * STRIDE, x * factor, mask=mask)


def doubled(x):
    """The reference: 2 x."""
    return x * 2


@autotune(config_space=SPACE, key_fn=lambda x: (tuple(x.shape), x.dtype), isolate=True, candidate_timeout_s=20,
          reference=doubled, disk_cache=False)
def misbehaving_scale(x, mode, BLOCK):
    out = torch.empty_like(x)
    flag = torch.zeros(1, dtype=torch.int32, device=x.device)
    stride = (1 << 28) if mode == "oob" else 1
    factor = 3.0 if mode == "wrong" else 2.0
    grid = (triton.cdiv(x.numel(), BLOCK),)
    scale_kernel[grid](x, out, flag, x.numel(), factor, STRIDE=stride, SPIN=mode == "spin", BLOCK=BLOCK)
    return out
