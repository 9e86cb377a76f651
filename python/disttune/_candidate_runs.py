"""The one runner of a tuning's candidates: inputs restored before each run, each result checked once.

Every front end runs its candidates through it: the decorator in its process (plain, or
checked and restored), the isolated worker in its own process (disttune._isolation_worker),
and the drop-in (each run wrapped in the kernel's hooks, disttune.triton._kernel_tuning).
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from disttune._checks import OutputCheck
from disttune._restore import InputRestorer

_UNSET = object()


class CandidateRuns:
    """Runs candidate c with `call(c)`. Before each run the restorer (if any) puts the named
    inputs back; before a candidate's first run, if there is an output check, one extra run's
    result is compared with the reference, `expected()` (computed once, on restored inputs)."""

    def __init__(
        self,
        call: Callable[[int], Any],
        restorer: Optional[InputRestorer] = None,
        check: Optional[OutputCheck] = None,
        expected: Optional[Callable[[], Any]] = None,
    ) -> None:
        if check is not None and expected is None:
            raise ValueError("disttune: an output check needs the reference's result (expected)")
        self.call = call
        self._restorer = restorer
        self._check = check
        self._expected_of = expected
        self._expected: Any = _UNSET
        self._checked: set[int] = set()

    def restore(self) -> None:
        """Puts the restored inputs back (nothing without restore_value/reset_to_zero)."""
        if self._restorer is not None:
            self._restorer.restore_run()

    def check_once(self, candidate: int) -> None:
        """The first time `candidate` is seen: one run whose result must match the reference
        (a RuntimeError saying where it differs otherwise)."""
        if self._check is None or candidate in self._checked:
            return
        if self._expected is _UNSET:
            self.restore()
            self._expected = self._expected_of()  # type: ignore[misc]
        self.restore()
        self._check.verify(self.call(candidate), self._expected)
        self._checked.add(candidate)

    def run(self, candidate: int) -> None:
        """One tuning run: checked first if new, inputs restored, then run."""
        self.check_once(candidate)
        self.restore()
        self.call(candidate)


def launcher_runs(
    fn: Callable,
    args: tuple,
    kwargs: dict,
    calls: list[dict],
    restorer: Optional[InputRestorer],
    check: Optional[OutputCheck],
    reference_call: Optional[dict],
) -> CandidateRuns:
    """The runs of one call of a tuned launcher `fn`: candidate c is `fn(*args, **calls[c])`;
    the reference is `reference_call`'s keyword arguments (a config-space reference) or the
    check's own callable, called with the launcher's arguments."""
    expected = None
    if check is not None:
        expected = lambda: check.expected(  # noqa: E731
            lambda _index: fn(*args, **reference_call),  # type: ignore[arg-type]
            lambda reference: reference(*args, **kwargs),
        )
    return CandidateRuns(lambda c: fn(*args, **calls[c]), restorer, check, expected)
