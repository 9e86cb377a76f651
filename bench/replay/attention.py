"""A replay case of slow compiles: a causal flash-attention forward (fp16, head dim 128) and its config space."""

import torch
import triton
import triton.language as tl

from config_space import product_space

HEAD_DIM = 128


@triton.jit
def _attend_blocks(acc, row_max, row_sum, q, k_ptrs, v_ptrs, stride_t, offs_m, offs_n, start, end, qk_scale,
                   BLOCK_N: tl.constexpr, CAUSAL_MASK: tl.constexpr, EXP: tl.constexpr, EVICT: tl.constexpr):
    """The online softmax over key blocks start .. end: acc, row max and row sum carried across blocks."""
    for start_n in range(start, end, BLOCK_N):
        k = tl.load(k_ptrs + start_n * stride_t, eviction_policy=EVICT)
        qk = tl.dot(q, k) * qk_scale
        if CAUSAL_MASK:
            qk = tl.where(offs_m[:, None] >= start_n + offs_n[None, :], qk, float("-inf"))
        new_max = tl.maximum(row_max, tl.max(qk, 1))
        if EXP == "exp2":
            p = tl.math.exp2(qk - new_max[:, None])
            rescale = tl.math.exp2(row_max - new_max)
        else:
            p = tl.exp(qk - new_max[:, None])
            rescale = tl.exp(row_max - new_max)
        row_sum = row_sum * rescale + tl.sum(p, 1)
        v = tl.load(v_ptrs + start_n * stride_t, eviction_policy=EVICT)
        acc = tl.dot(p.to(v.dtype), v, acc * rescale[:, None])
        row_max = new_max
    return acc, row_max, row_sum


@triton.jit
def attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, scale, stride_b, stride_h, stride_t, HEADS: tl.constexpr,
                     HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, EXP: tl.constexpr,
                     MASKING: tl.constexpr, EVICT: tl.constexpr):
    """One BLOCK_M tile of queries of one (batch, head): causal softmax(q k^T * scale) v. q, k, v and o
    share their (batch, head, token, dim) strides, dim contiguous; the sequence is a multiple of both
    blocks. MASKING "diagonal" masks only the key blocks that cross the diagonal, "every_block" all of
    them; EXP "exp2" folds log2(e) into the scale, "exp" does not; EVICT is the K and V loads' policy."""
    start_m = tl.program_id(0)
    head = tl.program_id(1)
    base = (head // HEADS) * stride_b + (head % HEADS) * stride_h
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + base + offs_m[:, None] * stride_t + offs_d[None, :])
    k_ptrs = k_ptr + base + offs_n[None, :] * stride_t + offs_d[:, None]
    v_ptrs = v_ptr + base + offs_n[:, None] * stride_t + offs_d[None, :]
    qk_scale = scale * 1.4426950408889634 if EXP == "exp2" else scale
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    row_max = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    row_sum = tl.zeros((BLOCK_M,), dtype=tl.float32)
    end = (start_m + 1) * BLOCK_M
    if MASKING == "diagonal":
        below = (start_m * BLOCK_M) // BLOCK_N * BLOCK_N  # every key before it precedes every query
        acc, row_max, row_sum = _attend_blocks(acc, row_max, row_sum, q, k_ptrs, v_ptrs, stride_t, offs_m, offs_n,
                                               0, below, qk_scale, BLOCK_N, False, EXP, EVICT)
        acc, row_max, row_sum = _attend_blocks(acc, row_max, row_sum, q, k_ptrs, v_ptrs, stride_t, offs_m, offs_n,
                                               below, end, qk_scale, BLOCK_N, True, EXP, EVICT)
    else:
        acc, row_max, row_sum = _attend_blocks(acc, row_max, row_sum, q, k_ptrs, v_ptrs, stride_t, offs_m, offs_n,
                                               0, end, qk_scale, BLOCK_N, True, EXP, EVICT)
    out = acc / row_sum[:, None]
    tl.store(o_ptr + base + offs_m[:, None] * stride_t + offs_d[None, :], out.to(o_ptr.dtype.element_ty))


def tile_registers(config, head_dim: int) -> float:
    """The 32-bit registers a thread needs for the fp32 output tile and score tile."""
    meta = config.kwargs
    return meta["BLOCK_M"] * (head_dim + meta["BLOCK_N"]) / (32 * config.num_warps)


class Attention:
    """Causal attention forward, fp16, batch 2, 16 heads, 4096 tokens, head dim 128 (compiles take
    seconds): query and key block sizes, where the causal mask is applied, exp or exp2, the K/V
    loads' eviction policy, warps and stages. 1,008 configs: those whose fp32 output and score
    tiles alone need more than 256 registers a thread (BLOCK_M 256 on 4 warps) are left out (every
    one spills, and ptxas takes up to 20 s on one); stages that overflow shared memory fail."""

    name = "attention_fp16_causal_2x16x4096x128"
    kernel = attention_kernel
    problem = {"B": 2, "H": 16, "T": 4096, "D": HEAD_DIM, "dtype": "float16", "causal": True}
    configs = [config for config in product_space({"BLOCK_M": (32, 64, 128, 256), "BLOCK_N": (32, 64, 128),
                                                   "EXP": ("exp2", "exp"), "MASKING": ("diagonal", "every_block"),
                                                   "EVICT": ("", "evict_last", "evict_first")},
                                                  warps=(4, 8), stages=(1, 2, 3, 4))
               if tile_registers(config, HEAD_DIM) <= 256]

    def __init__(self, device="cuda", batch=None, heads=None, tokens=None):
        """The recorded problem on `device`; smaller batch, heads or tokens for a check."""
        torch.manual_seed(0)
        self.heads = heads or self.problem["H"]
        shape = (batch or self.problem["B"], self.heads, tokens or self.problem["T"], self.problem["D"])
        self.q, self.k, self.v = (torch.randn(shape, device=device, dtype=torch.float16) for _ in range(3))
        self.o = torch.empty_like(self.q)
        self.scale = self.problem["D"] ** -0.5

    def args(self, config):
        batch, heads, tokens, _ = self.q.shape
        grid = (tokens // config.kwargs["BLOCK_M"], batch * heads)
        return grid, (self.q, self.k, self.v, self.o, self.scale, *self.q.stride()[:3], self.heads,
                      self.problem["D"])

    def before_run(self):
        pass
