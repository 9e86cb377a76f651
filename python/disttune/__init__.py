"""disttune: autotuning of GPU kernels and distributed operators on a C++ engine.

``disttune.tune.autotune`` tunes a host launcher over a config space (the spec's
function-level method); ``disttune.autotuner.contextual_autotune`` tunes the
``triton.autotune`` kernels inside a real outer call. Importing disttune imports
neither torch nor Triton; they are used when the program has imported them.
"""

from disttune._core import (
    CollectiveTimeout,
    ContextualRunActive,
    DisttuneError,
    EngineError,
    InvalidSetting,
    NotCallable,
    RankDisagreement,
    TuningFailed,
    __version__,
)
from disttune._encoding import EncodingError
from disttune._sink import set_sink

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
    "set_sink",
]
