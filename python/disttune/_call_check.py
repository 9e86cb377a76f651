"""A tuned function's call checked against its launcher's parameters, once per miss, before tuning."""

from __future__ import annotations

import inspect
from typing import Any, Callable, Mapping, Optional, Sequence


class CallCheck:
    """The launcher's signature and the names its config entries supply. `check` raises one
    TypeError naming the function when a call's arguments cannot be bound for any entry (a
    wrong count or name), instead of every config failing alike in the tuning."""

    def __init__(self, fn: Callable, config_space: Sequence[Mapping[str, Any]], name: str) -> None:
        self._name = name
        try:
            self._signature: Optional[inspect.Signature] = inspect.signature(fn)
        except (TypeError, ValueError):  # no signature to read (some builtins): no check
            self._signature = None
            return
        # Entries usually all supply the same names; each distinct set is bound once.
        self._supplied = list(dict.fromkeys(tuple(sorted(entry)) for entry in config_space))
        every = {name for names in self._supplied for name in names}
        self._caller_part = self._signature.replace(
            parameters=[p for p in self._signature.parameters.values() if p.name not in every]
        )
        self._every = sorted(every)

    def check(self, args: tuple, kwargs: Mapping[str, Any]) -> None:
        """Returns if the launcher can be called with `args`, `kwargs` and some entry's names."""
        if self._signature is None:
            return
        error: Optional[TypeError] = None
        for names in self._supplied:
            try:
                self._signature.bind(*args, **{**kwargs, **dict.fromkeys(names)})
                return
            except TypeError as refused:
                error = error or refused
        try:  # the reason in the caller's terms, without the entry's parameters, if it shows
            self._caller_part.bind(*args, **{k: v for k, v in kwargs.items() if k not in self._every})
        except TypeError as refused:
            error = refused
        supplied = f"; its config entries supply {', '.join(self._every)}" if self._every else ""
        raise TypeError(
            f"disttune: the call of '{self._name}' does not fit its launcher ({error}): "
            f"call it as {self._name}{self._caller_part}{supplied}"
        ) from None
