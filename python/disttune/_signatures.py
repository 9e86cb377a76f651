"""What type checkers see of a tuned function: its call signature and its result type.

`@autotune` injects each config entry's items as keyword arguments and takes four call
flags (autotune, autotune_verbose, autotune_pg, autotune_allow_arg_overwrite), so the call
signature is not the launcher's. Python's typing cannot say "the launcher's parameters minus
the injected ones plus four keywords" (PEP 612 forbids adding keyword parameters to a
ParamSpec). What the call does take is exactly what `key_fn` takes: every call runs
`key_fn(*args, **kwargs)` on its arguments. So a tuned function is typed with key_fn's
parameters and the launcher's result: the spec's `key_fn=lambda x, alpha, *a, **k: ...`
checks the positional arguments and lets the flags through (its **k), and a key_fn written
as a typed `def` checks the argument types too.

`@contextual_autotune` neither injects nor adds arguments: the call keeps the decorated
function's exact signature.
"""

from __future__ import annotations

import sys
from typing import Any, Mapping, TypeVar

if sys.version_info >= (3, 10):
    from typing import ParamSpec, Protocol
else:
    from typing_extensions import ParamSpec, Protocol

P = ParamSpec("P")
R = TypeVar("R")
R_co = TypeVar("R_co", covariant=True)


class AutotunedCallable(Protocol[P, R_co]):
    """A launcher tuned by `@autotune`: called with key_fn's parameters (plus the call flags
    when key_fn takes **kwargs), it returns what the launcher returns."""

    cache: Mapping[Any, Any]  # the in-process cache: business key -> chosen entry
    last_report: Any  # the TuningReport of the last call's choice (source "memory" on a hit), else None
    # The last tuning's compiles with `precompile`: (candidate, start, end, thread name).
    last_compiles: list[tuple[int, float, float, str]]
    candidates: Any
    digest: str

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R_co: ...
