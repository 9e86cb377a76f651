"""A drop-in for ``triton.autotune`` on the disttune engine.

    from disttune.triton import autotune          # instead of: from triton import autotune

    @autotune(configs=[triton.Config({"BLOCK": 128}), triton.Config({"BLOCK": 256})], key=["n"])
    @triton.jit
    def kernel(x_ptr, n, BLOCK: tl.constexpr): ...

or, for every Triton autotuner made later in the process (libraries and their own
subclasses of Triton's Autotuner included): ``disttune.triton.install()``, or
TRITON_DIST_AUTOTUNE_TRITON_DROPIN=1 read when disttune is imported. Supports Triton 3.6 (other versions: EngineError at import of this module).
docs/triton-dropin.md says what is the same, what differs and why.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import triton as _triton

from disttune import _triton_hook

# The Triton versions whose Autotuner the drop-in extends (constructor, attributes, hooks):
# 3.6, tested in CI (interpreter) and on the H200.
SUPPORTED_TRITON = ((3, 6), (3, 7))
_triton_hook.check_triton_version(
    str(getattr(_triton, "__version__", "unknown")), "disttune.triton", SUPPORTED_TRITON
)

from disttune.triton import _switch, _timeline  # noqa: E402
from disttune.triton._autotuner import Autotuner  # noqa: E402

__all__ = ["Autotuner", "autotune", "census", "census_table", "install", "installed", "take", "taken", "timelines",
           "timeline_table", "uninstall"]


def autotune(configs, key, prune_configs_by=None, reset_to_zero=None, restore_value=None, pre_hook=None,
             post_hook=None, warmup=None, rep=None, use_cuda_graph=False, do_bench=None,
             cache_results=False) -> Callable[[Any], Autotuner]:
    """triton.autotune with the same parameters and behaviour (Triton's documentation holds);
    a new key is tuned by the engine: the configs its strategy names compiled on the process's
    compile pool while measured ones run, measured by the engine (converge below
    TRITON_DIST_AUTOTUNE_SEARCH_FROM configs, search from there; median of L2-flushed
    device-event times; TRITON_DIST_AUTOTUNE_STRATEGY chooses another) or, when `do_bench` is
    given or the deprecated `warmup` / `rep` / `use_cuda_graph` make Triton's benchmarker, by
    that benchmarker once per config. Under torch.distributed every rank takes the config of
    the lowest MAX-over-ranks time, within the engine's collective deadline. Choices are kept
    in `cache` (this process) and in the engine's directory and Redis stores, whatever
    `cache_results` says (a config whose pre_hook is not a function is not stored)."""

    def decorator(fn: Any) -> Autotuner:
        return Autotuner(fn, fn.arg_names, configs, key, reset_to_zero, restore_value, pre_hook=pre_hook,
                         post_hook=post_hook, prune_configs_by=prune_configs_by, warmup=warmup, rep=rep,
                         use_cuda_graph=use_cuda_graph, do_bench=do_bench, cache_results=cache_results)

    return decorator


def install(existing: bool = False) -> None:
    """Turns the switch on for the whole process: every Triton autotuner made from now on
    (by triton.autotune, however it was imported, or by a library's own subclass of
    triton.runtime.autotuner.Autotuner) is tuned by the engine, except one whose class
    overrides Autotuner._bench, do_bench or check_disk_cache (its own measurement or store),
    which is left to Triton (census() says why). Autotuners made before the call stay Triton's
    unless `existing` is true: then every one alive in the process is taken too. Idempotent."""
    _switch.install(existing)


def uninstall() -> None:
    """Turns the switch off: autotuners made from now on are Triton's; those taken stay taken."""
    _switch.uninstall()


def installed() -> bool:
    """Whether install() is in effect."""
    return _switch.installed()


def take(kernel: Any) -> str:
    """Has the engine tune one Triton autotuner (e.g. one made before install()); returns ''
    when taken, else the one-line reason it is left to Triton. TypeError for anything that is
    not a triton.runtime.autotuner.Autotuner."""
    return _switch.take(kernel)


def taken(kernel: Any) -> bool:
    """Whether the engine tunes the new keys of `kernel` (a Triton autotuner)."""
    return _switch.taken(kernel)


def census(existing: bool = True) -> list[dict]:
    """Every autotuner the switch saw (made while it was on, or given to take()) and, with
    `existing`, every other one alive in the process: {"kernel", "class", "taken", "reason"}."""
    return _switch.census(existing)


def census_table() -> str:
    """census() as text: how many autotuners the engine tunes and how many Triton, then one
    line per autotuner left to Triton with its reason."""
    return _switch.census_table()


def timelines() -> list[dict]:
    """Where each drop-in tuning of this process spent its time, one dict per kernel and key,
    in order: kernel, key, source, strategy, configs, compiled, measured, failed, total_s,
    waited_on_compiles_s, measure_s (host and device), device_s, compile_busy_s,
    compile_cpu_s and each compile's (config, start_s, end_s) from the tuning's start. With
    TRITON_DIST_AUTOTUNE_TIMELINE set, each is also appended to that file as a JSON line."""
    return _timeline.entries()


def timeline_table(entries: Optional[list[dict]] = None) -> str:
    """timelines() (or `entries`) as a text table, one row per kernel and key."""
    return _timeline.table(timelines() if entries is None else entries)
