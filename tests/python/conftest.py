"""Shared fixtures of the Python tests: a private disk cache and log directory per test."""

import pytest


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    """Every test gets its own disk cache, log directory and clean tuning variables."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("TRITON_DIST_AUTOTUNE_CACHE_DIR", str(cache))
    monkeypatch.delenv("TRITON_DIST_AUTOTUNE_ALWAYS_TUNE", raising=False)
    monkeypatch.delenv("TRITON_DIST_AUTOTUNE_VERSION_CHECK", raising=False)
    monkeypatch.chdir(tmp_path)
    return cache
