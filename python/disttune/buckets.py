"""Bucketing sizes in key functions, so that a new size hits a tuned bucket instead of tuning.

    from disttune import buckets

    @autotune(config_space=space, key_fn=lambda x, w: (buckets.pow2(x.shape[0]), w.shape[1], x.dtype))
    def matmul(x, w, cfg): ...

Every batch size from 33 to 64 then shares the key of 64: the engine tunes one bucket once
and every size in it reuses the choice (docs/many-shapes.md has a serving example).
"""

from __future__ import annotations

import bisect
import operator
from typing import Sequence

__all__ = ["pow2", "nearest", "ceil_to"]


def _size(n: object, name: str) -> int:
    try:
        size = operator.index(n)  # ints and integer-like values (numpy, torch.SymInt when static)
    except TypeError:
        raise TypeError(f"disttune.buckets.{name}: the size must be an integer, got {type(n).__name__}") from None
    if size < 0:
        raise ValueError(f"disttune.buckets.{name}: the size must not be negative, got {size}")
    return size


def pow2(n: int, *, low: int = 1, high: int = 1 << 62) -> int:
    """The smallest power of two >= n, clamped to [low, high] (both powers of two): 1, 2,
    4, ... 0 maps to `low`. A size above `high` gets `high` (the largest tuned bucket)."""
    for bound, label in ((low, "low"), (high, "high")):
        if bound < 1 or bound & (bound - 1):
            raise ValueError(f"disttune.buckets.pow2: {label} must be a power of two, got {bound}")
    if low > high:
        raise ValueError(f"disttune.buckets.pow2: low ({low}) is above high ({high})")
    size = _size(n, "pow2")
    bucket = 1 << max(size - 1, 0).bit_length()
    return min(max(bucket, low), high)


def nearest(n: int, sizes: Sequence[int]) -> int:
    """The smallest of `sizes` that is >= n (a kernel tuned for a bucket runs any smaller
    size of it); the largest of `sizes` when n is above all of them."""
    size = _size(n, "nearest")
    if not sizes:
        raise ValueError("disttune.buckets.nearest: sizes is empty")
    ordered = sorted(_size(s, "nearest") for s in sizes)
    place = bisect.bisect_left(ordered, size)
    return ordered[min(place, len(ordered) - 1)]


def ceil_to(n: int, multiple: int) -> int:
    """n rounded up to a multiple of `multiple` (> 0): 1..16 -> 16, 17..32 -> 32 for 16."""
    size = _size(n, "ceil_to")
    if _size(multiple, "ceil_to") == 0:
        raise ValueError("disttune.buckets.ceil_to: multiple must be positive")
    return -(-size // multiple) * multiple
