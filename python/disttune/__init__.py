"""disttune: autotuning of GPU kernels and distributed operators on a C++ engine.

``disttune.autotune`` (also ``disttune.tune.autotune``, the spec's path) tunes a host
launcher over a config space; ``disttune.contextual_autotune`` (also
``disttune.autotuner.contextual_autotune``) tunes the ``triton.autotune`` kernels inside a
real outer call. ``disttune.sweep`` tunes a list of keys ahead of time (on every rank a
launcher started) and ``disttune.buckets`` buckets sizes in key functions. ``disttune.__version__`` is the engine's version (the file VERSION).
Importing disttune imports neither torch nor Triton; they are used when the program has
imported them (except with TRITON_DIST_AUTOTUNE_TRITON_DROPIN=1: then importing disttune
imports Triton and makes ``triton.autotune`` the drop-in ``disttune.triton.autotune``,
docs/triton-dropin.md). The command line: ``python -m disttune`` or ``disttune``.
"""

from disttune import _core
from disttune._core import (
    CollectiveTimeout,
    ContextualRunActive,
    DisttuneError,
    EngineError,
    InvalidSetting,
    NotCallable,
    RankDisagreement,
    TuningFailed,
)
from disttune._encoding import EncodingError
from disttune import buckets
from disttune._sink import set_sink
from disttune._sweep import KeyOutcome, SweepSummary, sweep
from disttune.autotuner import contextual_autotune
from disttune.tables import load_table
from disttune.tune import autotune, options

__version__: str = _core.__version__  # the engine's version: the file VERSION

if _core.triton_dropin_setting():
    from disttune import triton as _dropin

    _dropin.install()

__all__ = [
    "CollectiveTimeout",
    "ContextualRunActive",
    "DisttuneError",
    "EncodingError",
    "EngineError",
    "InvalidSetting",
    "NotCallable",
    "RankDisagreement",
    "TuningFailed",
    "__version__",
    "KeyOutcome",
    "SweepSummary",
    "autotune",
    "buckets",
    "contextual_autotune",
    "load_table",
    "options",
    "set_sink",
    "sweep",
]
