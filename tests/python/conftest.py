"""Shared fixtures of the Python tests: a private disk cache and log directory per test."""

import os

import pytest
import torch

if not torch.cuda.is_available():
    # Without a GPU, Triton kernels run in Triton's interpreter (set before Triton is imported).
    os.environ.setdefault("TRITON_INTERPRET", "1")
    if not hasattr(torch.Tensor, "untyped_storage"):
        # Triton's interpreter reads untyped_storage() (torch >= 2.0); Debian's torch 1.13
        # names the same storage view storage().
        torch.Tensor.untyped_storage = lambda self: self.storage()


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    """Every test gets its own disk cache, log directory and clean tuning variables."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("TRITON_DIST_AUTOTUNE_CACHE_DIR", str(cache))
    monkeypatch.delenv("TRITON_DIST_AUTOTUNE_ALWAYS_TUNE", raising=False)
    monkeypatch.delenv("TRITON_DIST_AUTOTUNE_VERSION_CHECK", raising=False)
    monkeypatch.delenv("TRITON_DIST_AUTOTUNE_WARM_START", raising=False)
    monkeypatch.delenv("TRITON_DIST_AUTOTUNE_TABLE_MISMATCH", raising=False)
    for name in ("URL", "PREFIX", "TIMEOUT"):
        monkeypatch.delenv(f"TRITON_DIST_AUTOTUNE_REDIS_{name}", raising=False)
    monkeypatch.chdir(tmp_path)
    return cache
