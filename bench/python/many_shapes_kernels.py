"""The fp16 matmul of bench/python/many_shapes.py (bench/python/matmul.py's kernel), with its
sizes as tl.constexpr (every size compiles its own binaries) or as run-time arguments
(binaries shared), its 384-config space, and launchers for both."""

import matmul
import torch
import triton
import triton.language as tl


def config_space():
    """384 entries: BLOCK_M x BLOCK_N x BLOCK_K x GROUP_M x num_stages x num_warps."""
    return [
        {"cfg": triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": gm},
                              num_stages=stages, num_warps=warps)}
        for bm in (16, 32, 64, 128)
        for bn in (32, 64, 128, 256)
        for bk in (32, 64)
        for gm in (1, 8)
        for stages in (3, 4, 5)
        for warps in (4, 8)
    ]


# The run-time variant is bench/python/matmul.py's kernel; the constexpr one calls it with
# the sizes as compile-time constants (Triton inlines the call and specialises on them).
matmul_runtime = matmul.matmul_kernel


@triton.jit
def matmul_sized(a_ptr, b_ptr, c_ptr, sam, sak, sbk, sbn, scm, scn, M: tl.constexpr, N: tl.constexpr,
                 K: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                 GROUP_M: tl.constexpr):
    matmul_runtime(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M)


def strides(a, b, c):
    return (a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))


def _grid(a, b, meta):
    return (triton.cdiv(a.shape[0], meta["BLOCK_M"]) * triton.cdiv(b.shape[1], meta["BLOCK_N"]),)


def launch(variant, a, b, c, cfg):
    """One run of `variant` ("constexpr" or "runtime") with one config."""
    meta = cfg.all_kwargs()
    M, K = a.shape
    N = b.shape[1]
    if variant == "constexpr":
        matmul_sized[_grid(a, b, meta)](a, b, c, *strides(a, b, c), M=M, N=N, K=K, **meta)
    else:
        matmul_runtime[_grid(a, b, meta)](a, b, c, M, N, K, *strides(a, b, c), **meta)
    return c


def compile_only(variant, entry, a, b, c):
    """Compiles one config for these operands without launching it (autotune's precompile)."""
    meta = entry["cfg"].all_kwargs()
    M, K = a.shape
    N = b.shape[1]
    if variant == "constexpr":
        matmul_sized.warmup(a, b, c, *strides(a, b, c), M=M, N=N, K=K, grid=(1,), **meta)
    else:
        matmul_runtime.warmup(a, b, c, M, N, K, *strides(a, b, c), grid=(1,), **meta)


def operands(m, n, k, device="cuda"):
    generator = torch.Generator(device=device).manual_seed(m)
    a = torch.randn(m, k, device=device, dtype=torch.float16, generator=generator)
    b = torch.randn(k, n, device=device, dtype=torch.float16, generator=generator)
    return a, b, torch.empty(m, n, device=device, dtype=torch.float16)
