"""Plain Triton kernels and a cost-model benchmarker for the triton.autotune conformance tests
(each test decorates a kernel with the autotune under test)."""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


@triton.jit
def add_kernel(x_ptr, y_ptr, seen_ptr, n, BLOCK: tl.constexpr):
    """y += x; seen[0] = BLOCK of the launch, seen[1] counts launches."""
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    y = tl.load(y_ptr + offsets, mask=mask, other=0.0)
    tl.store(y_ptr + offsets, y + x, mask=mask)
    if pid == 0:
        tl.store(seen_ptr, BLOCK)
        tl.atomic_add(seen_ptr + 1, 1)


@triton.jit
def bias_kernel(x_ptr, b_ptr, y_ptr, seen_ptr, n, BLOCK: tl.constexpr):
    """y = x (+ b when b is given); seen as in add_kernel."""
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    y = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    if b_ptr is not None:
        y += tl.load(b_ptr + offsets, mask=mask, other=0.0)
    tl.store(y_ptr + offsets, y, mask=mask)
    if pid == 0:
        tl.store(seen_ptr, BLOCK)
        tl.atomic_add(seen_ptr + 1, 1)


@triton.jit
def scaled_add_kernel(x_ptr, y_ptr, seen_ptr, n, BLOCK: tl.constexpr, SCALE: tl.constexpr, EVEN: tl.constexpr):
    """y += SCALE * x, unmasked when EVEN (set by a heuristic); seen as in add_kernel."""
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        x = tl.load(x_ptr + offsets)
        y = tl.load(y_ptr + offsets)
        tl.store(y_ptr + offsets, y + SCALE * x)
    else:
        mask = offsets < n
        x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
        y = tl.load(y_ptr + offsets, mask=mask, other=0.0)
        tl.store(y_ptr + offsets, y + SCALE * x, mask=mask)
    if pid == 0:
        tl.store(seen_ptr, BLOCK)
        tl.atomic_add(seen_ptr + 1, 1)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  BLOCK_K: tl.constexpr):
    """c = a @ b for contiguous row-major fp16 a (M x K) and b (K x N), M, N, K multiples of
    the blocks; the K loop is pipelined (num_stages), so large blocks run out of shared memory."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    inner = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rows[:, None] * K + (k + inner)[None, :])
        b = tl.load(b_ptr + (k + inner)[:, None] * N + cols[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc.to(tl.float16))


def grid_of(n):
    """A grid callable over the launch's meta-parameters, as triton.autotune users write."""
    return lambda meta: (triton.cdiv(n, meta["BLOCK"]),)


class CostBench:
    """A do_bench for triton.autotune: runs the kernel call once and answers the cost model's
    time for the BLOCK that ran (read back from `seen`), so a test decides the winner."""

    def __init__(self, seen, cost):
        self.seen = seen
        self.cost = cost
        self.blocks = []

    def __call__(self, kernel_call, quantiles=None):
        self.seen[0] = -1
        kernel_call()
        block = int(self.seen[0].item())
        self.blocks.append(block)
        ms = float(self.cost(block))
        return [ms] * len(quantiles) if quantiles else ms


class MatmulCostBench:
    """A do_bench for the matmul: a config's time is the cost model's for the config Triton
    compiled last (reads no output), after one run of the kernel call."""

    def __init__(self, cost):
        self.cost = cost
        self.calls = 0

    def __call__(self, kernel_call, quantiles=None):
        self.calls += 1
        kernel_call()
        ms = float(self.cost())
        return [ms] * len(quantiles) if quantiles else ms
