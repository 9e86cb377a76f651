"""The suite's cases: the spec's scale (2^18 and 2^26 floats), the 32-config fp16 4096^3
matmul of bench/python, and a 24-config row softmax over 8192x8192 fp16. Every build has
new JIT kernels (its own compile cache), so a first call can be timed from scratch."""

import os
import sys
from dataclasses import dataclass
from typing import Any, Callable, Optional

import torch
import triton

from kernels import fresh_jit, scale_source, softmax_source

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import matmul as peer_matmul  # noqa: E402  (bench/python: the matmul kernel and its 32 configs)

SCALE_CONFIGS = [
    triton.Config({"BLOCK": block}, num_warps=warps) for block in (256, 512, 1024, 2048) for warps in (4, 8)
]
SOFTMAX_CONFIGS = [
    triton.Config({"BLOCK": block}, num_warps=warps, num_stages=stages)
    for block in (1024, 2048, 4096, 8192)
    for warps in (4, 8, 16)
    for stages in (1, 2)
]
SOFTMAX_SHAPE = (8192, 8192)
MATMUL_SIZE = 4096


@dataclass
class Case:
    """One benchmark case: a launcher over a config space, the same kernel behind
    triton.autotune, and the operands every tuner runs on."""

    slug: str  # short name used in file names and JSON
    title: str  # name in the table
    configs: list  # triton.Config per candidate
    args: tuple  # the launcher's positional arguments
    launch: Callable  # launch(*args, cfg=config): runs one config, returns the output
    compile_only: Callable  # compile_only(entry, *args): compiles entry["cfg"] without launching
    autotuner: Any  # triton.autotune over the same JITFunction (its .cache, .best_config)
    launch_autotuned: Callable  # launch_autotuned(*args): runs through triton.autotune
    key_fn: Callable
    prune_fn: Optional[Callable]
    launch_bound: bool  # a run is shorter than its host launch: time with CUDA graphs
    reference: Callable  # reference(): the expected output, for checking results
    tolerance: dict  # torch.testing.assert_close keywords

    def entries(self) -> list:
        """The config space as function-level entries ({"cfg": config})."""
        return [{"cfg": config} for config in self.configs]

    def index_of(self, config: Any) -> int:
        """The position of `config` (one of self.configs, by identity) in the space."""
        for index, candidate in enumerate(self.configs):
            if candidate is config:
                return index
        raise ValueError(f"{self.slug}: {config} is not one of the case's configs")


def _scale_key(x, y, alpha):
    return (tuple(x.shape), str(x.dtype))


def _scale_prune(entry, x, y, alpha):
    # The spec's prune_fn: a block of x must be smaller than 32 KiB.
    return entry["cfg"].all_kwargs()["BLOCK"] * x.element_size() < 32 * 1024


def build_scale(log2_n: int, device: str = "cuda") -> Case:
    """The spec's scale example at 2^log2_n floats (y = 2.5 x), writing into a preallocated
    output so that its runs can be captured into a CUDA graph."""
    kernel = fresh_jit(scale_source)
    autotuner = triton.autotune(configs=SCALE_CONFIGS, key=["n"])(kernel)
    torch.manual_seed(0)
    x = torch.randn(1 << log2_n, device=device, dtype=torch.float32)
    y = torch.empty_like(x)

    def scale_launch(x, y, alpha, cfg):
        meta = cfg.all_kwargs()
        kernel[(triton.cdiv(x.numel(), meta["BLOCK"]),)](x, y, alpha, x.numel(), **meta)
        return y

    def scale_compile(entry, x, y, alpha):
        kernel.warmup(x, y, alpha, x.numel(), grid=(1,), **entry["cfg"].all_kwargs())

    def scale_autotuned(x, y, alpha):
        autotuner[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)](x, y, alpha, x.numel())
        return y

    return Case(
        slug=f"scale_2p{log2_n}",
        title=f"scale 2^{log2_n} fp32",
        configs=SCALE_CONFIGS,
        args=(x, y, 2.5),
        launch=scale_launch,
        compile_only=scale_compile,
        autotuner=autotuner,
        launch_autotuned=scale_autotuned,
        key_fn=_scale_key,
        prune_fn=_scale_prune,
        launch_bound=log2_n <= 20,
        reference=lambda: 2.5 * x,
        tolerance=dict(atol=1e-5, rtol=1e-4),
    )


def _matmul_key(a, b, c):
    return (tuple(a.shape), tuple(b.shape), str(a.dtype))


def build_matmul(device: str = "cuda") -> Case:
    """bench/python's fp16 matmul kernel and 32 configs at 4096^3."""
    kernel = fresh_jit(peer_matmul.matmul_kernel.fn)
    autotuner = triton.autotune(configs=peer_matmul.CONFIGS, key=["M", "N", "K"])(kernel)
    a, b, c = peer_matmul.operands(MATMUL_SIZE, device)

    def matmul_launch(a, b, c, cfg):
        meta = cfg.all_kwargs()
        grid = (triton.cdiv(a.shape[0], meta["BLOCK_M"]) * triton.cdiv(b.shape[1], meta["BLOCK_N"]),)
        kernel[grid](*peer_matmul._args(a, b, c), **meta)
        return c

    def matmul_compile(entry, a, b, c):
        kernel.warmup(*peer_matmul._args(a, b, c), grid=(1,), **entry["cfg"].all_kwargs())

    def matmul_autotuned(a, b, c):
        grid = lambda meta: (  # noqa: E731
            triton.cdiv(a.shape[0], meta["BLOCK_M"]) * triton.cdiv(b.shape[1], meta["BLOCK_N"]),
        )
        autotuner[grid](*peer_matmul._args(a, b, c))
        return c

    return Case(
        slug="matmul_4096",
        title="matmul 4096^3 fp16",
        configs=peer_matmul.CONFIGS,
        args=(a, b, c),
        launch=matmul_launch,
        compile_only=matmul_compile,
        autotuner=autotuner,
        launch_autotuned=matmul_autotuned,
        key_fn=_matmul_key,
        prune_fn=None,
        launch_bound=False,
        reference=lambda: a @ b,
        tolerance=dict(atol=0.5, rtol=0.05),
    )


def _softmax_key(x, out):
    return (tuple(x.shape), str(x.dtype))


def build_softmax(device: str = "cuda", shape: tuple = SOFTMAX_SHAPE) -> Case:
    """A row softmax over an fp16 matrix (8192x8192 by default): BLOCK x num_warps x
    num_stages, 24 configs."""
    kernel = fresh_jit(softmax_source)
    autotuner = triton.autotune(configs=SOFTMAX_CONFIGS, key=["n_cols"])(kernel)
    torch.manual_seed(0)
    x = torch.randn(*shape, device=device, dtype=torch.float16)
    out = torch.empty_like(x)

    def softmax_launch(x, out, cfg):
        kernel[(x.shape[0],)](out, x, x.stride(0), out.stride(0), x.shape[1], **cfg.all_kwargs())
        return out

    def softmax_compile(entry, x, out):
        kernel.warmup(out, x, x.stride(0), out.stride(0), x.shape[1], grid=(1,), **entry["cfg"].all_kwargs())

    def softmax_autotuned(x, out):
        autotuner[(x.shape[0],)](out, x, x.stride(0), out.stride(0), x.shape[1])
        return out

    return Case(
        slug="softmax_8192",
        title=f"softmax {shape[0]}x{shape[1]} fp16",
        configs=SOFTMAX_CONFIGS,
        args=(x, out),
        launch=softmax_launch,
        compile_only=softmax_compile,
        autotuner=autotuner,
        launch_autotuned=softmax_autotuned,
        key_fn=_softmax_key,
        prune_fn=None,
        launch_bound=False,
        reference=lambda: torch.softmax(x.float(), dim=-1).to(torch.float16),
        tolerance=dict(atol=1e-4, rtol=2e-2),
    )


BUILDERS = {
    "scale_2p18": lambda: build_scale(18),
    "scale_2p26": lambda: build_scale(26),
    "matmul_4096": build_matmul,
    "softmax_8192": build_softmax,
}
