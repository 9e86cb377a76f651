"""A replay case of a reduction with many categorical knobs: a row softmax (fp16) and its config space."""

import torch
import triton
import triton.language as tl

from config_space import product_space


@triton.jit
def softmax_kernel(x_ptr, y_ptr, N: tl.constexpr, ROWS: tl.constexpr, BLOCK_N: tl.constexpr, PASSES: tl.constexpr,
                   EVICT: tl.constexpr, ACC: tl.constexpr):
    """softmax over each of ROWS rows of N (a tile of ROWS x BLOCK_N at a time). PASSES "one_block"
    reads the row once into one tile (BLOCK_N must be N, else it does not compile); "online" keeps a
    running max and sum per lane in one pass and writes in a second; "max_then_sum" takes the max,
    then the sum, then writes. EVICT is the policy of the statistics loads; ACC the dtype ("float32"
    or "float16") that the running max and sum (or the one tile's exponentials) are kept in."""
    acc_dtype: tl.constexpr = tl.float16 if ACC == "float16" else tl.float32
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    x_rows = x_ptr + rows[:, None] * N
    y_rows = y_ptr + rows[:, None] * N
    cols = tl.arange(0, BLOCK_N)[None, :]
    if PASSES == "one_block":
        tl.static_assert(BLOCK_N == N, "one_block holds the whole row in one tile")
        x = tl.load(x_rows + cols, eviction_policy=EVICT).to(tl.float32)
        p = tl.exp(x - tl.max(x, 1)[:, None]).to(acc_dtype)
        total = tl.sum(p, 1).to(tl.float32)
        tl.store(y_rows + cols, (p.to(tl.float32) / total[:, None]).to(y_ptr.dtype.element_ty))
    else:
        tl.static_assert(N % BLOCK_N == 0, "the row is a whole number of tiles")
        if PASSES == "online":
            lane_max = tl.full((ROWS, BLOCK_N), float("-inf"), acc_dtype)
            lane_sum = tl.zeros((ROWS, BLOCK_N), acc_dtype)
            for start in range(0, N, BLOCK_N):
                x = tl.load(x_rows + start + cols, eviction_policy=EVICT).to(tl.float32)
                new_max = tl.maximum(lane_max.to(tl.float32), x)
                lane_sum = (lane_sum.to(tl.float32) * tl.exp(lane_max.to(tl.float32) - new_max) +
                            tl.exp(x - new_max)).to(acc_dtype)
                lane_max = new_max.to(acc_dtype)
            row_max = tl.max(lane_max.to(tl.float32), 1)
            total = tl.sum(lane_sum.to(tl.float32) * tl.exp(lane_max.to(tl.float32) - row_max[:, None]), 1)
        else:
            lane_max = tl.full((ROWS, BLOCK_N), float("-inf"), acc_dtype)
            for start in range(0, N, BLOCK_N):
                x = tl.load(x_rows + start + cols, eviction_policy=EVICT)
                lane_max = tl.maximum(lane_max, x.to(acc_dtype))
            row_max = tl.max(lane_max.to(tl.float32), 1)
            lane_sum = tl.zeros((ROWS, BLOCK_N), acc_dtype)
            for start in range(0, N, BLOCK_N):
                x = tl.load(x_rows + start + cols, eviction_policy=EVICT).to(tl.float32)
                lane_sum += tl.exp(x - row_max[:, None]).to(acc_dtype)
            total = tl.sum(lane_sum.to(tl.float32), 1)
        for start in range(0, N, BLOCK_N):
            x = tl.load(x_rows + start + cols).to(tl.float32)
            y = tl.exp(x - row_max[:, None]) / total[:, None]
            tl.store(y_rows + start + cols, y.to(y_ptr.dtype.element_ty))


class Softmax:
    """fp16 row softmax, 16384 rows of 8192: tile width, rows per program, passes over the row, the
    statistics loads' eviction policy, the running statistics' dtype, warps and stages. 1,296
    configs; "one_block" below the full width fails to compile (324 configs)."""

    name = "softmax_fp16_16384x8192"
    kernel = softmax_kernel
    problem = {"M": 16384, "N": 8192, "dtype": "float16"}
    configs = product_space({"BLOCK_N": (1024, 2048, 4096, 8192), "ROWS": (1, 2, 4),
                             "PASSES": ("one_block", "online", "max_then_sum"),
                             "EVICT": ("", "evict_last", "evict_first"), "ACC": ("float32", "float16")},
                            warps=(4, 8, 16), stages=(1, 2))

    def __init__(self, device="cuda", rows=None):
        """The recorded problem on `device`; fewer rows for a check."""
        torch.manual_seed(0)
        self.x = torch.randn(rows or self.problem["M"], self.problem["N"], device=device, dtype=torch.float16)
        self.y = torch.empty_like(self.x)

    def args(self, config):
        return (self.x.shape[0] // config.kwargs["ROWS"],), (self.x, self.y, self.problem["N"])

    def before_run(self):
        pass
