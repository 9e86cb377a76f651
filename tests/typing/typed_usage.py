"""Type-checked use of the decorators (mypy --strict in CI): the tuned function keeps a
signature and its result type. Runs as a plain script too (CPU only)."""

from __future__ import annotations

import sys
from typing import Any

import disttune
from disttune.autotuner import contextual_autotune
from disttune.tune import autotune

if sys.version_info >= (3, 11):
    from typing import assert_type
else:
    from typing_extensions import assert_type


def scale_key(x: list[float], alpha: float, **flags: Any) -> tuple[int]:
    return (len(x),)


@autotune(config_space=[{"block": 1}, {"block": 2}], key_fn=scale_key, disk_cache=False)
def scale(x: list[float], alpha: float, block: int) -> list[float]:
    return [v * alpha for v in x[::block]] + x[len(x[::block]):]


@autotune(config_space=[{"cfg": 1}], key_fn=lambda n, *a, **k: (n,), disk_cache=False)
def spec_style(n: int, cfg: int) -> str:
    return str(n * cfg)


@contextual_autotune(is_dist=False, n_repeat=2, n_warmup=1)
def outer(x: list[float], scale_by: float = 2.0) -> float:
    return sum(x) * scale_by


def main() -> None:
    assert_type(scale([1.0, 2.0], 2.5), list[float])
    assert_type(scale([1.0, 2.0], 2.5, autotune=False, autotune_verbose=True), list[float])
    assert_type(spec_style(3, autotune=True), str)
    assert_type(outer([1.0], scale_by=3.0), float)
    assert_type(disttune.__version__, str)
    assert scale([1.0, 2.0], 2.0, autotune=False) == [2.0, 4.0]
    assert spec_style(3) == "3"
    assert disttune.autotune is autotune and disttune.contextual_autotune is contextual_autotune


if __name__ == "__main__":
    main()
    print("typed_usage: ok")
