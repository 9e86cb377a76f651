"""A replay case of an fp8 matmul (e4m3 inputs, fp16 output, fp32 accumulation) and its config space."""

import torch
import triton
import triton.language as tl

from config_space import product_space


@triton.jit
def _dot_steps(a_ptrs, b_ptrs, k, stride_ak, stride_bk, BLOCK_K: tl.constexpr, BLOCK_M: tl.constexpr,
               BLOCK_N: tl.constexpr, STEPS: tl.constexpr):
    """STEPS K blocks from block k on, summed in a fresh fp32 accumulator."""
    partial = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for step in tl.static_range(STEPS):
        offset = k + step * BLOCK_K
        partial = tl.dot(tl.load(a_ptrs + offset * stride_ak), tl.load(b_ptrs + offset * stride_bk), partial)
    return partial


@triton.jit
def fp8_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                      stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                      GROUP_M: tl.constexpr, PROMOTE: tl.constexpr):
    """c = a @ b with tiles of BLOCK_M x BLOCK_N, GROUP_M tile rows visited together. M, N and K are
    multiples of the blocks (K of BLOCK_K x 4). PROMOTE "none" accumulates every K block into one fp32
    accumulator; "every_2" and "every_4" sum 2 or 4 blocks in a fresh accumulator and add it to the
    total after them (as fp8 GEMMs do to bound the tensor cores' accumulation error)."""
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    first_pid_m = (pid // num_pid_in_group) * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + (pid % num_pid_in_group) % group_size_m
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    if PROMOTE == "none":
        for k in range(0, K, BLOCK_K):
            acc = tl.dot(tl.load(a_ptrs + k * stride_ak), tl.load(b_ptrs + k * stride_bk), acc)
    elif PROMOTE == "every_2":
        for k in range(0, K, 2 * BLOCK_K):
            acc += _dot_steps(a_ptrs, b_ptrs, k, stride_ak, stride_bk, BLOCK_K, BLOCK_M, BLOCK_N, 2)
    else:
        for k in range(0, K, 4 * BLOCK_K):
            acc += _dot_steps(a_ptrs, b_ptrs, k, stride_ak, stride_bk, BLOCK_K, BLOCK_M, BLOCK_N, 4)
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty))


def accumulator_registers(config) -> float:
    """The 32-bit registers a thread needs for the fp32 accumulators (two when promoting)."""
    meta = config.kwargs
    accumulators = 1 if meta["PROMOTE"] == "none" else 2
    return accumulators * meta["BLOCK_M"] * meta["BLOCK_N"] / (32 * config.num_warps)


class Fp8Matmul:
    """fp8 (e4m3) 4096^3 matmul, b stored K-major as fp8 GEMMs take it, fp16 out: block shapes, group
    size, how often the fp32 accumulator is promoted, warps and stages. 1,080 configs: those whose
    fp32 accumulators alone need more than 256 registers a thread are left out (every one spills,
    and ptxas takes 10-27 s on one); large tiles at many stages overflow shared memory and fail."""

    name = "matmul_fp8_4096"
    kernel = fp8_matmul_kernel
    problem = {"M": 4096, "N": 4096, "K": 4096, "dtype": "float8_e4m3fn", "out": "float16", "b": "K-major"}
    configs = [config for config in product_space({"BLOCK_M": (64, 128, 256), "BLOCK_N": (64, 128, 256),
                                                   "BLOCK_K": (64, 128, 256), "GROUP_M": (1, 8),
                                                   "PROMOTE": ("none", "every_2", "every_4")},
                                                  warps=(4, 8), stages=(2, 3, 4, 5))
               if accumulator_registers(config) <= 256]

    def __init__(self, device="cuda", shape=None, dtype=None):
        """The recorded problem on `device`; a smaller (M, N, K), or another input dtype (fp16 where
        torch or the device has no fp8), for a check."""
        torch.manual_seed(0)
        m, n, k = shape or (self.problem["M"], self.problem["N"], self.problem["K"])
        dtype = dtype or torch.float8_e4m3fn
        self.a = torch.randn(m, k, device=device, dtype=torch.float16).to(dtype)
        self.b = torch.randn(n, k, device=device, dtype=torch.float16).to(dtype).t()  # K-major: strides (1, K)
        self.c = torch.empty(m, n, device=device, dtype=torch.float16)

    def args(self, config):
        meta = config.kwargs
        a, b, c = self.a, self.b, self.c
        grid = (triton.cdiv(a.shape[0], meta["BLOCK_M"]) * triton.cdiv(b.shape[1], meta["BLOCK_N"]),)
        return grid, (a, b, c, a.shape[0], b.shape[1], a.shape[1], a.stride(0), a.stride(1), b.stride(0),
                      b.stride(1), c.stride(0), c.stride(1))

    def before_run(self):
        pass
