"""The suite's own Triton kernels: the spec's scale and a row softmax (fp16 in and out)."""

import triton
import triton.language as tl


# The spec's scale kernel: y = alpha * x over n floats, one BLOCK per program.
def scale_source(x_ptr, y_ptr, alpha, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    tl.store(y_ptr + offsets, alpha * x, mask=mask)


# Softmax of one row per program, in BLOCK-wide chunks: an online max/sum pass, then a
# normalising pass. n_cols must be a multiple of BLOCK (unmasked loads; a lane that never
# saw a finite value would make exp(-inf - -inf) a NaN).
def softmax_source(out_ptr, in_ptr, stride_in, stride_out, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    in_row = in_ptr + row * stride_in
    out_row = out_ptr + row * stride_out
    running_max = tl.full([BLOCK], float("-inf"), tl.float32)
    running_sum = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        offsets = start + tl.arange(0, BLOCK)
        x = tl.load(in_row + offsets).to(tl.float32)
        new_max = tl.maximum(running_max, x)
        running_sum = running_sum * tl.exp(running_max - new_max) + tl.exp(x - new_max)
        running_max = new_max
    row_max = tl.max(running_max, 0)
    total = tl.sum(running_sum * tl.exp(running_max - row_max), 0)
    for start in range(0, n_cols, BLOCK):
        offsets = start + tl.arange(0, BLOCK)
        x = tl.load(in_row + offsets).to(tl.float32)
        tl.store(out_row + offsets, (tl.exp(x - row_max) / total).to(tl.float16))


def fresh_jit(source):
    """A new JITFunction of `source`: its own in-memory compile cache, so a first call in
    the same process compiles again (with a fresh TRITON_CACHE_DIR, from scratch)."""
    return triton.jit(source)
