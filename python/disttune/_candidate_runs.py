"""One tuning's runs of its candidates: inputs restored before each run, each result checked once."""

from __future__ import annotations

from typing import Any, Callable, Optional

from disttune._checks import OutputCheck
from disttune._restore import InputRestorer

_UNSET = object()


class CandidateRuns:
    """Runs candidate c (keyword arguments `calls[c]`) of one call of `fn`. Before each run the
    restorer puts the named inputs back; before a candidate's first run, if there is an output
    check, one extra run's result is compared with the reference (computed once, on restored
    inputs; `reference_call` holds the keyword arguments of a config-space reference)."""

    def __init__(
        self,
        fn: Callable,
        args: tuple,
        kwargs: dict,
        calls: list[dict],
        restorer: Optional[InputRestorer],
        check: Optional[OutputCheck],
        reference_call: Optional[dict],
    ) -> None:
        self._fn = fn
        self._args = args
        self._kwargs = kwargs
        self._calls = calls
        self._restorer = restorer
        self._check = check
        self._reference_call = reference_call
        self._expected: Any = _UNSET
        self._checked: set[int] = set()

    def restore(self) -> None:
        """Puts the restored inputs back (nothing without restore_value/reset_to_zero)."""
        if self._restorer is not None:
            self._restorer.restore_run()

    def call(self, candidate: int) -> Any:
        """One run of `candidate`, nothing around it."""
        return self._fn(*self._args, **self._calls[candidate])

    def check_once(self, candidate: int) -> None:
        """The first time `candidate` is seen: one run whose result must match the reference
        (a RuntimeError saying where it differs otherwise)."""
        if self._check is None or candidate in self._checked:
            return
        if self._expected is _UNSET:
            self.restore()
            self._expected = self._check.expected(
                lambda _index: self._fn(*self._args, **self._reference_call),
                lambda reference: reference(*self._args, **self._kwargs),
            )
        self.restore()
        self._check.verify(self.call(candidate), self._expected)
        self._checked.add(candidate)

    def run(self, candidate: int) -> None:
        """One tuning run in this process: checked first if new, inputs restored, then run."""
        self.check_once(candidate)
        self.restore()
        self.call(candidate)
