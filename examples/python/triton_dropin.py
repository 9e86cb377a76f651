"""A triton.autotune kernel moved onto disttune by one import (disttune.triton.autotune);
runs on a GPU, or on the CPU in Triton's interpreter. A second run reads the choice from
disttune's store instead of tuning:

    python examples/python/triton_dropin.py
"""

import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")  # before Triton is imported
    if not hasattr(torch.Tensor, "untyped_storage"):  # torch < 2.0 (Debian's 1.13)
        torch.Tensor.untyped_storage = lambda self: self.storage()

import triton  # noqa: E402
import triton.language as tl  # noqa: E402

from disttune.triton import autotune  # noqa: E402  (was: from triton import autotune)


@autotune(configs=[triton.Config({"BLOCK": block}, num_warps=warps) for block in (64, 128, 256) for warps in (2, 4)],
          key=["n"], restore_value=["y_ptr"])
@triton.jit
def axpy(x_ptr, y_ptr, alpha, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(y_ptr + offsets, alpha * x + y, mask=mask)


def main() -> None:
    device = "cuda" if torch.cuda.is_available() else "cpu"
    n = 4096
    x = torch.randn(n, device=device)
    y = torch.randn(n, device=device)
    expected = 2.0 * x + y
    axpy[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, 2.0, n)   # unchanged launch
    assert torch.allclose(y, expected)
    print(f"chosen: {axpy.best_config} ({axpy.last_report.source})")


if __name__ == "__main__":
    main()
