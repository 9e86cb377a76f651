"""Calls a type checker must reject (CI checks mypy reports exactly these lines)."""

from __future__ import annotations

from typing import Any

from disttune import autotune, contextual_autotune


def scale_key(x: list[float], alpha: float, **flags: Any) -> tuple[int]:
    return (len(x),)


@autotune(config_space=[{"block": 1}], key_fn=scale_key)
def scale(x: list[float], alpha: float, block: int) -> list[float]:
    return x


@contextual_autotune()
def outer(x: list[float]) -> float:
    return sum(x)


def misuse() -> None:
    scale([1.0])  # error: missing alpha
    scale("x", 2.0)  # error: str is not list[float]
    text: str = scale([1.0], 2.0)  # error: the result is list[float]
    outer([1.0], 2.0)  # error: too many arguments
