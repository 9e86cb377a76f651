"""A drop-in for ``triton.autotune`` on the disttune engine.

    from disttune.triton import autotune          # instead of: from triton import autotune

    @autotune(configs=[triton.Config({"BLOCK": 128}), triton.Config({"BLOCK": 256})], key=["n"])
    @triton.jit
    def kernel(x_ptr, n, BLOCK: tl.constexpr): ...

or, for every kernel decorated later in the process (libraries included):
``disttune.triton.install()``, or TRITON_DIST_AUTOTUNE_TRITON_DROPIN=1 read when disttune
is imported. Supports Triton 3.6 (other versions: EngineError at import of this module).
docs/triton-dropin.md says what is the same, what differs and why.
"""

from __future__ import annotations

from typing import Any, Callable

import triton as _triton

from disttune import _triton_hook

# The Triton versions whose Autotuner the drop-in extends (constructor, attributes, hooks):
# 3.6, tested in CI (interpreter) and on the H200.
SUPPORTED_TRITON = ((3, 6), (3, 7))
_triton_hook.check_triton_version(
    str(getattr(_triton, "__version__", "unknown")), "disttune.triton", SUPPORTED_TRITON
)

from disttune.triton import _switch  # noqa: E402
from disttune.triton._autotuner import Autotuner  # noqa: E402

__all__ = ["Autotuner", "autotune", "install", "uninstall", "installed"]


def autotune(configs, key, prune_configs_by=None, reset_to_zero=None, restore_value=None, pre_hook=None,
             post_hook=None, warmup=None, rep=None, use_cuda_graph=False, do_bench=None,
             cache_results=False) -> Callable[[Any], Autotuner]:
    """triton.autotune with the same parameters and behaviour (Triton's documentation holds);
    a new key is tuned by the engine: configs compiled concurrently, then measured by the
    engine (converge strategy, median of L2-flushed device-event times; the variable
    TRITON_DIST_AUTOTUNE_STRATEGY chooses another) or, when `do_bench` is given or the
    deprecated `warmup` / `rep` / `use_cuda_graph` make Triton's benchmarker, by that
    benchmarker once per config. Under torch.distributed every rank takes the config of the
    lowest MAX-over-ranks time, within the engine's collective deadline. Choices are kept in
    `cache` (this process) and in the engine's directory and Redis stores, whatever
    `cache_results` says (a config with a pre_hook is not stored)."""

    def decorator(fn: Any) -> Autotuner:
        return Autotuner(fn, fn.arg_names, configs, key, reset_to_zero, restore_value, pre_hook=pre_hook,
                         post_hook=post_hook, prune_configs_by=prune_configs_by, warmup=warmup, rep=rep,
                         use_cuda_graph=use_cuda_graph, do_bench=do_bench, cache_results=cache_results)

    return decorator


def install() -> None:
    """Makes triton.autotune (also triton.runtime.autotune and
    triton.runtime.autotuner.autotune) this drop-in for the whole process. Kernels decorated
    before the call, and modules that took `autotune` into their own namespace before it
    (`from triton import autotune`), keep Triton's. Idempotent."""
    _switch.install(autotune)


def uninstall() -> None:
    """Puts Triton's autotune back; kernels decorated meanwhile stay drop-in kernels."""
    _switch.uninstall()


def installed() -> bool:
    """Whether install() is in effect."""
    return _switch.installed()

