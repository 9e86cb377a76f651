"""The fp16 matmul of bench/python/many_shapes.py, with its sizes as tl.constexpr (every size
compiles its own binaries) or as run-time arguments (binaries shared), its 384-config space,
and disttune launchers for both."""

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


@triton.jit
def _tile(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn, BLOCK_M: tl.constexpr,
          BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    group = GROUP_M * num_pid_n
    first_m = (pid // group) * GROUP_M
    size_m = min(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + ((pid % group) % size_m)
    pid_n = (pid % group) // size_m
    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * sam + offs_k[None, :] * sak
    b_ptrs = b_ptr + offs_k[:, None] * sbk + offs_n[None, :] * sbn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * sak
        b_ptrs += BLOCK_K * sbk
    cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.store(c_ptr + scm * cm[:, None] + scn * cn[None, :], acc.to(tl.float16),
             mask=(cm[:, None] < M) & (cn[None, :] < N))


@triton.jit
def matmul_sized(a_ptr, b_ptr, c_ptr, sam, sak, sbk, sbn, scm, scn, M: tl.constexpr, N: tl.constexpr,
                 K: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                 GROUP_M: tl.constexpr):
    _tile(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M)


@triton.jit
def matmul_runtime(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn, BLOCK_M: tl.constexpr,
                   BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    _tile(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M)


def _strides(a, b, c):
    return (a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))


def _grid(a, b, meta):
    return (triton.cdiv(a.shape[0], meta["BLOCK_M"]) * triton.cdiv(b.shape[1], meta["BLOCK_N"]),)


def launch(variant, a, b, c, cfg):
    """One run of `variant` ("constexpr" or "runtime") with one config."""
    meta = cfg.all_kwargs()
    M, K = a.shape
    N = b.shape[1]
    if variant == "constexpr":
        matmul_sized[_grid(a, b, meta)](a, b, c, *_strides(a, b, c), M=M, N=N, K=K, **meta)
    else:
        matmul_runtime[_grid(a, b, meta)](a, b, c, M, N, K, *_strides(a, b, c), **meta)
    return c


def compile_only(variant, entry, a, b, c):
    """Compiles one config for these operands without launching it (autotune's precompile)."""
    meta = entry["cfg"].all_kwargs()
    M, K = a.shape
    N = b.shape[1]
    if variant == "constexpr":
        matmul_sized.warmup(a, b, c, *_strides(a, b, c), M=M, N=N, K=K, grid=(1,), **meta)
    else:
        matmul_runtime.warmup(a, b, c, M, N, K, *_strides(a, b, c), grid=(1,), **meta)


def operands(m, n, k, device="cuda"):
    generator = torch.Generator(device=device).manual_seed(m)
    a = torch.randn(m, k, device=device, dtype=torch.float16, generator=generator)
    b = torch.randn(k, n, device=device, dtype=torch.float16, generator=generator)
    return a, b, torch.empty(m, n, device=device, dtype=torch.float16)
