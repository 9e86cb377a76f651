"""All-gather + GEMM with communication/computation overlap: C = all_gather(A_shard) @ B.

Each rank holds a row shard of A (shard_rows x K) and all of B (K x N); every rank computes
all of C (world*shard_rows x N). The shard is cut into `chunks` row chunks; chunk c of every
rank is gathered by one asynchronous NCCL all-gather into its own block of a chunk-major
buffer, and a Triton GEMM consumes block c as soon as it has arrived (the compute stream
waits on that gather alone) while the later chunks are still on the wire. The GEMM writes
each row of block c straight to its place in C, so no reordering pass follows.

Why NCCL through torch.distributed rather than torch symmetric memory: the all-gathers are
asynchronous work on the process group's own stream(s), so the overlap needs nothing but
torch's stream semantics, works on any NCCL group the caller has (the `autotune_pg` of
function-level tuning, WORLD of contextual tuning), and on any GPU interconnect NCCL
supports; symmetric memory needs a rendezvous per buffer and copy-engine or SM-driven
copies written by hand.

Tunables: the GEMM tile (`gemm`, a triton.Config), `chunks` (1..8; 1 = no overlap) and
`layout`, the communication stream layout: "one-stream" issues every chunk's gather on one
NCCL communicator (one stream: gathers run one after another), "two-streams" alternates
chunks between two communicators (two streams: two gathers in flight at once).
"""

from __future__ import annotations

import itertools
from typing import Any

import torch
import torch.distributed as dist
import triton
import triton.language as tl

LAYOUTS = ("one-stream", "two-streams")
CHUNKS = (1, 2, 4, 8)

# GEMM tiles: fp16 tiles that suit Hopper and Ampere (the Triton tutorial's best ones).
TILES = [
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8}, num_stages=3, num_warps=8),
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8}, num_stages=4, num_warps=4),
    triton.Config({"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8}, num_stages=4, num_warps=4),
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8}, num_stages=4, num_warps=4),
]


def config_space(tiles: list = TILES) -> list[dict]:
    """Every (tile, chunks, layout): the function-level config space."""
    return [
        {"gemm": tile, "chunks": chunks, "layout": layout}
        for tile, chunks, layout in itertools.product(tiles, CHUNKS, LAYOUTS)
    ]


@triton.jit
def chunk_gemm_kernel(
    a, b, c, M, N, K, rows, shard_rows, row_offset,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):
    """C rows of one gathered block: block row m is row m % rows of chunk `row_offset / rows`
    of rank m // rows, so it lands on C row (m // rows) * shard_rows + row_offset + m % rows."""
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    group_size = GROUP_M * num_n
    first_m = (pid // group_size) * GROUP_M
    size_m = tl.minimum(num_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group_size) % size_m
    pid_n = (pid % group_size) // size_m
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        x = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        y = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc += tl.dot(x, y)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    out_rows = (offs_m // rows) * shard_rows + row_offset + offs_m % rows
    c_ptrs = c + out_rows[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


# The same kernel as a triton.autotune kernel, for contextual tuning inside the operator.
chunk_gemm_autotuned = triton.autotune(configs=TILES, key=["M", "N", "K"])(chunk_gemm_kernel)


def group_device(group: Any) -> Any:
    """Where the operator's tensors live: the current GPU for an NCCL group, else the CPU
    (gloo: the CPU tests, the GEMM in Triton's interpreter)."""
    if "nccl" in str(dist.get_backend(group)):
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


class AllGatherGemm:
    """The operator's communicators and buffers for one shape; call run() on every rank of
    `group` in the same order."""

    def __init__(self, group: Any, shard_rows: int, k: int, n: int, dtype: Any = torch.float16) -> None:
        self.group = group
        self.world = dist.get_world_size(group)
        self.shard_rows, self.k, self.n = shard_rows, k, n
        device = group_device(group)
        ranks = dist.get_process_group_ranks(group) if hasattr(dist, "get_process_group_ranks") else None
        # Two more communicators over the same ranks: the streams of the "two-streams" layout
        # (every rank creates them, in the same order, as new_group requires).
        self.comms = [dist.new_group(ranks), dist.new_group(ranks)]
        self.gathered = torch.empty(self.world * shard_rows, k, dtype=dtype, device=device)
        self.out = torch.empty(self.world * shard_rows, n, dtype=dtype, device=device)

    def check(self, a_shard: Any, b: Any, chunks: int, layout: str) -> None:
        """Refuses operands or settings the operator cannot run, naming what is wrong."""
        if tuple(a_shard.shape) != (self.shard_rows, self.k) or tuple(b.shape) != (self.k, self.n):
            raise ValueError(
                f"allgather_gemm: expected A shard {self.shard_rows}x{self.k} and B {self.k}x{self.n}, "
                f"got {tuple(a_shard.shape)} and {tuple(b.shape)}"
            )
        if chunks not in CHUNKS or self.shard_rows % chunks:
            raise ValueError(f"allgather_gemm: chunks={chunks} must be in {CHUNKS} and divide {self.shard_rows}")
        if layout not in LAYOUTS:
            raise ValueError(f"allgather_gemm: layout={layout!r} is not one of {LAYOUTS}")

    def gather_chunks(self, a_shard: Any, chunks: int, layout: str) -> list:
        """Starts the all-gather of every chunk; returns the works, in chunk order. Block c
        of `gathered` (chunk-major: world*rows rows each) holds chunk c of every rank."""
        rows = self.shard_rows // chunks
        blocks = self.gathered.view(chunks, self.world * rows, self.k)
        comms = self.comms[:1] if layout == "one-stream" else self.comms
        works = []
        for c in range(chunks):
            piece = a_shard[c * rows:(c + 1) * rows]
            comm = comms[c % len(comms)]
            if self.gathered.is_cuda:
                works.append(dist.all_gather_into_tensor(blocks[c], piece, group=comm, async_op=True))
            else:  # gloo (CPU tests) has no all_gather_into_tensor: gather into views of block c
                views = list(blocks[c].view(self.world, rows, self.k).unbind(0))
                works.append(dist.all_gather(views, piece, group=comm, async_op=True))
        return works

    def run(self, a_shard: Any, b: Any, gemm: Any, chunks: int, layout: str, kernel: Any = None) -> Any:
        """C = all_gather(A shards) @ B with the given tile, chunk count and stream layout.
        `kernel` is chunk_gemm_kernel (default; `gemm`'s tile) or chunk_gemm_autotuned (its
        tile is chosen by triton.autotune or the contextual tuner; `gemm` is ignored)."""
        self.check(a_shard, b, chunks, layout)
        rows = self.shard_rows // chunks
        blocks = self.gathered.view(chunks, self.world * rows, self.k)
        works = self.gather_chunks(a_shard, chunks, layout)
        m, n, k = self.world * rows, self.n, self.k
        for c in range(chunks):
            works[c].wait()  # the compute stream waits for block c only
            arguments = (blocks[c], b, self.out, m, n, k, rows, self.shard_rows, c * rows,
                         blocks[c].stride(0), blocks[c].stride(1), b.stride(0), b.stride(1),
                         self.out.stride(0), self.out.stride(1))
            if kernel is None or kernel is chunk_gemm_kernel:
                tile = gemm.kwargs
                grid = (triton.cdiv(m, tile["BLOCK_M"]) * triton.cdiv(n, tile["BLOCK_N"]),)
                chunk_gemm_kernel[grid](*arguments, **tile, num_warps=gemm.num_warps, num_stages=gemm.num_stages)
            else:
                grid = lambda meta: (triton.cdiv(m, meta["BLOCK_M"]) * triton.cdiv(n, meta["BLOCK_N"]),)
                kernel[grid](*arguments)
        return self.out


def reference(group: Any, a_shard: Any, b: Any) -> Any:
    """torch's all_gather + matmul: what every result is checked against."""
    world = dist.get_world_size(group)
    parts = [torch.empty_like(a_shard) for _ in range(world)]
    dist.all_gather(parts, a_shard, group=group)
    return torch.cat(parts) @ b


def operands(group: Any, shard_rows: int, k: int, n: int, dtype: Any = torch.float16) -> tuple:
    """A shard that differs per rank and a B that is the same on every rank (seeded)."""
    rank = dist.get_rank(group)
    device = group_device(group)
    generator = torch.Generator(device="cpu").manual_seed(1234 + rank)
    a_shard = (torch.randn(shard_rows, k, generator=generator) / k**0.5).to(device=device, dtype=dtype)
    generator.manual_seed(99)
    b = torch.randn(k, n, generator=generator).to(device=device, dtype=dtype)
    return a_shard, b
