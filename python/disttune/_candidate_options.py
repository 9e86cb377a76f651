"""How a tuned function's candidates run: in a worker or here, checked, with inputs restored."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

from disttune import _checks, _isolation, _restore


@dataclass(frozen=True)
class CandidateOptions:
    """The validated isolate / candidate_timeout_s / reference / check / rtol / atol /
    restore_value / reset_to_zero options of one tuned function."""

    isolate: bool
    timeout_s: float
    output_check: Optional[_checks.OutputCheck]
    restored: _restore.RestoredNames
    import_path: Optional[tuple[str, str]]

    def restorer(self, fn: Callable, args: tuple, kwargs: dict) -> Optional[_restore.InputRestorer]:
        """Copies of one call's restored inputs, or None if nothing is restored."""
        return _restore.InputRestorer(fn, self.restored, args, kwargs) if self.restored else None

    def reference_index(self) -> Optional[int]:
        """The config-space index whose result is the reference, if the reference is one."""
        reference = self.output_check.reference if self.output_check else None
        return reference if isinstance(reference, int) else None

    def worker_tuning(self, args: tuple, kwargs: dict, candidates: list[str], space: list[str]) -> _isolation.Tuning:
        """What the worker needs for one tuning: `candidates` are the surviving entries'
        canonical texts, `space` those of every entry (a reference entry may be pruned)."""
        reference = self.reference_index()
        return _isolation.Tuning(
            *self.import_path,
            args,
            kwargs,
            candidates,
            space[reference] if reference is not None else None,
            self.output_check,
            self.restored,
        )


def candidate_options(
    fn: Callable,
    space_size: int,
    *,
    isolate: bool,
    candidate_timeout_s: Optional[float],
    reference: Optional[_checks.Reference],
    check: Optional[Callable[[Any, Any], bool]],
    rtol: float,
    atol: float,
    restore_value: Sequence[str],
    reset_to_zero: Sequence[str],
) -> CandidateOptions:
    """Checks the options of `fn` at decoration; ValueError/TypeError naming the problem."""
    name = fn.__name__
    output_check = _checks.output_check(reference, check, rtol, atol, space_size, name)
    if candidate_timeout_s is not None and not isolate:
        raise ValueError(f"disttune: candidate_timeout_s of '{name}' is enforced only with isolate=True")
    if candidate_timeout_s is not None and not candidate_timeout_s > 0:
        raise ValueError(f"disttune: candidate_timeout_s of '{name}' must be positive")
    import_path = None
    if isolate:
        import_path = _isolation.import_path(fn)
        for what, function in (("the reference", reference), ("the check", check)):
            if callable(function):
                _isolation.import_path(function, what)  # pickled by reference to the worker
    return CandidateOptions(
        isolate=bool(isolate),
        timeout_s=float(candidate_timeout_s or _isolation.DEFAULT_CANDIDATE_TIMEOUT_S),
        output_check=output_check,
        restored=_restore.restored_names(fn, restore_value, reset_to_zero),
        import_path=import_path,
    )
