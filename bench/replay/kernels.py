"""The Triton kernels whose exhaustive tables the replay tests run strategies against: an fp16
matmul, a layer norm with categorical knobs, a split-K skinny matmul,
bench/python/many_shapes.py's matmul at each of its buckets (the warm start's sweep), and the
families in their own files beside this one (attention.py, fp8_matmul.py, softmax.py). Each
case gives its config space, its inputs, and a launcher that runs one config."""

import os
import sys

import torch
import triton
import triton.language as tl

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import many_shapes  # noqa: E402  (its buckets and sizes)
import many_shapes_kernels  # noqa: E402  (its space, operands and constexpr kernel)
from matmul import matmul_kernel  # noqa: E402  (the same fp16 matmul as bench/python's)
from attention import Attention  # noqa: E402  (this folder, as the importer found kernels)
from config_space import product_space  # noqa: E402
from fp8_matmul import Fp8Matmul  # noqa: E402
from softmax import Softmax  # noqa: E402


@triton.jit
def layer_norm_kernel(x_ptr, y_ptr, w_ptr, b_ptr, N, eps, ROWS: tl.constexpr, BLOCK_N: tl.constexpr,
                      VARIANCE: tl.constexpr, EVICT: tl.constexpr):
    for r in range(ROWS):
        row = tl.program_id(0) * ROWS + r
        x_row = x_ptr + row * N
        y_row = y_ptr + row * N
        total = tl.zeros((BLOCK_N,), dtype=tl.float32)
        squares = tl.zeros((BLOCK_N,), dtype=tl.float32)
        for start in range(0, N, BLOCK_N):
            cols = start + tl.arange(0, BLOCK_N)
            x = tl.load(x_row + cols, mask=cols < N, other=0.0, eviction_policy=EVICT).to(tl.float32)
            total += x
            if VARIANCE == "one_pass":
                squares += x * x
        mean = tl.sum(total, axis=0) / N
        if VARIANCE == "one_pass":
            var = tl.sum(squares, axis=0) / N - mean * mean
        else:
            for start in range(0, N, BLOCK_N):
                cols = start + tl.arange(0, BLOCK_N)
                x = tl.load(x_row + cols, mask=cols < N, other=0.0, eviction_policy=EVICT).to(tl.float32)
                centred = tl.where(cols < N, x - mean, 0.0)
                squares += centred * centred
            var = tl.sum(squares, axis=0) / N
        rstd = 1.0 / tl.sqrt(var + eps)
        for start in range(0, N, BLOCK_N):
            cols = start + tl.arange(0, BLOCK_N)
            mask = cols < N
            x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
            w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
            b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
            tl.store(y_row + cols, ((x - mean) * rstd * w + b).to(tl.float16), mask=mask)


@triton.jit
def split_k_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                   stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                   SPLIT_K: tl.constexpr):
    pid = tl.program_id(0)
    pid_k = tl.program_id(1)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K * SPLIT_K)):
        remaining = K - k * BLOCK_K * SPLIT_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < remaining), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < remaining) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * SPLIT_K * stride_ak
        b_ptrs += BLOCK_K * SPLIT_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    if SPLIT_K == 1:
        tl.store(c_ptrs, acc, mask=mask)
    else:
        tl.atomic_add(c_ptrs, acc, mask=mask)


def _gemm_args(a, b, c):
    return (a, b, c, a.shape[0], b.shape[1], a.shape[1], a.stride(0), a.stride(1), b.stride(0), b.stride(1),
            c.stride(0), c.stride(1))


class Matmul:
    """fp16 3072^3 matmul: 4 x 4 x 3 block shapes, 4 group sizes, 4 stage counts, 2 warp counts."""

    name = "matmul_fp16_3072"
    kernel = matmul_kernel
    problem = {"M": 3072, "N": 3072, "K": 3072, "dtype": "float16"}
    configs = product_space({"BLOCK_M": (32, 64, 128, 256), "BLOCK_N": (32, 64, 128, 256),
                        "BLOCK_K": (32, 64, 128), "GROUP_M": (1, 4, 8, 16)}, warps=(4, 8), stages=(2, 3, 4, 5))

    def __init__(self):
        torch.manual_seed(0)
        size = self.problem["M"]
        self.a = torch.randn(size, size, device="cuda", dtype=torch.float16)
        self.b = torch.randn(size, size, device="cuda", dtype=torch.float16)
        self.c = torch.empty(size, size, device="cuda", dtype=torch.float16)

    def args(self, config):
        meta = config.kwargs
        size = self.problem["M"]
        grid = (triton.cdiv(size, meta["BLOCK_M"]) * triton.cdiv(size, meta["BLOCK_N"]),)
        return grid, _gemm_args(self.a, self.b, self.c)

    def before_run(self):
        pass


class LayerNorm:
    """fp16 layer norm, 32768 rows of 4096: rows per program, chunk width, one- or two-pass
    variance, the eviction policy of the statistics loads, warps and stages."""

    name = "layer_norm_fp16_32768x4096"
    kernel = layer_norm_kernel
    problem = {"M": 32768, "N": 4096, "dtype": "float16"}
    configs = product_space({"ROWS": (1, 2, 4, 8), "BLOCK_N": (512, 1024, 2048, 4096),
                        "VARIANCE": ("one_pass", "two_pass"), "EVICT": ("", "evict_last", "evict_first")},
                       warps=(1, 2, 4, 8, 16), stages=(1, 2, 3))

    def __init__(self):
        torch.manual_seed(0)
        rows, cols = self.problem["M"], self.problem["N"]
        self.x = torch.randn(rows, cols, device="cuda", dtype=torch.float16)
        self.y = torch.empty_like(self.x)
        self.w = torch.randn(cols, device="cuda", dtype=torch.float16)
        self.b = torch.randn(cols, device="cuda", dtype=torch.float16)

    def args(self, config):
        grid = (self.problem["M"] // config.kwargs["ROWS"],)
        return grid, (self.x, self.y, self.w, self.b, self.problem["N"], 1e-5)

    def before_run(self):
        pass


class SplitK:
    """fp16 skinny matmul 128 x 8192 x 8192 with split-K (fp32 atomics): block shapes, split
    counts, warps and stages."""

    name = "split_k_fp16_128x8192x8192"
    kernel = split_k_kernel
    problem = {"M": 128, "N": 8192, "K": 8192, "dtype": "float16", "accumulate": "float32"}
    configs = product_space({"BLOCK_M": (16, 32, 64), "BLOCK_N": (32, 64, 128, 256), "BLOCK_K": (32, 64, 128, 256),
                        "SPLIT_K": (1, 2, 4, 8)}, warps=(4, 8), stages=(2, 3, 4))

    def __init__(self):
        torch.manual_seed(0)
        m, n, k = self.problem["M"], self.problem["N"], self.problem["K"]
        self.a = torch.randn(m, k, device="cuda", dtype=torch.float16)
        self.b = torch.randn(k, n, device="cuda", dtype=torch.float16)
        self.c = torch.zeros(m, n, device="cuda", dtype=torch.float32)

    def args(self, config):
        meta = config.kwargs
        m, n = self.problem["M"], self.problem["N"]
        grid = (triton.cdiv(m, meta["BLOCK_M"]) * triton.cdiv(n, meta["BLOCK_N"]), meta["SPLIT_K"])
        return grid, _gemm_args(self.a, self.b, self.c)

    def before_run(self):
        self.c.zero_()


def _matmul_bucket(m: int) -> type:
    """bench/python/many_shapes.py's matmul at one bucket: M = m, N = K = 4096, its 384-config
    space, sizes as run-time arguments (the buckets share their binaries)."""
    n, k = many_shapes.N, many_shapes.K

    class MatmulBucket(Matmul):
        name = f"matmul_bucket_m{m}"
        problem = {"M": m, "N": n, "K": k, "dtype": "float16"}
        configs = [entry["cfg"] for entry in many_shapes_kernels.config_space()]

        def __init__(self):
            self.a, self.b, self.c = many_shapes_kernels.operands(m, n, k)

        def args(self, config):
            meta = config.kwargs
            grid = (triton.cdiv(m, meta["BLOCK_M"]) * triton.cdiv(n, meta["BLOCK_N"]),)
            return grid, _gemm_args(self.a, self.b, self.c)

    return MatmulBucket


def _matmul_bucket_sized(m: int) -> type:
    """The same bucket with the sizes as tl.constexpr (many_shapes.py's constexpr variant:
    every bucket compiles its own binaries)."""

    class MatmulBucketSized(_matmul_bucket(m)):
        name = f"matmul_bucket_sized_m{m}"
        kernel = many_shapes_kernels.matmul_sized

        def args(self, config):
            grid, _ = super().args(config)
            a, b, c = self.a, self.b, self.c
            return grid, (a, b, c, *many_shapes_kernels.strides(a, b, c), m, many_shapes.N, many_shapes.K)

    return MatmulBucketSized


CASES = {case.name: case for case in (Matmul, LayerNorm, SplitK, Attention, Fp8Matmul, Softmax,
                                      *(_matmul_bucket(m) for m in many_shapes.BUCKETS),
                                      *(_matmul_bucket_sized(m) for m in (16, 192)))}
