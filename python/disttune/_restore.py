"""Restored inputs of a tuning (triton.autotune's restore_value and reset_to_zero, by argument name)."""

from __future__ import annotations

import inspect
import sys
from dataclasses import dataclass
from typing import Any, Callable, Sequence


@dataclass(frozen=True)
class RestoredNames:
    """Argument names whose tensors are put back before each tuning run: `restore_value` to
    their values at the start of the tuning, `reset_to_zero` to zeros."""

    restore_value: tuple[str, ...]
    reset_to_zero: tuple[str, ...]

    def __bool__(self) -> bool:
        return bool(self.restore_value or self.reset_to_zero)


def restored_names(fn: Callable, restore_value: Sequence[str], reset_to_zero: Sequence[str]) -> RestoredNames:
    """The validated names: each must be a parameter of `fn`, and in one list only."""
    for option, names in (("restore_value", restore_value), ("reset_to_zero", reset_to_zero)):
        if isinstance(names, str):
            raise TypeError(f"disttune: {option}= of '{fn.__name__}' is a list of argument names, not a string")
    parameters = inspect.signature(fn).parameters
    for name in (*restore_value, *reset_to_zero):
        if name not in parameters:
            raise ValueError(f"disttune: '{name}' in restore_value/reset_to_zero is not a parameter of '{fn.__name__}'")
    both = set(restore_value) & set(reset_to_zero)
    if both:
        raise ValueError(f"disttune: {sorted(both)} of '{fn.__name__}' is in both restore_value and reset_to_zero")
    return RestoredNames(tuple(restore_value), tuple(reset_to_zero))


class InputRestorer:
    """Copies the named tensor arguments of one call when made; restore_run() puts them back
    before a tuning run (originals for restore_value, zeros for reset_to_zero), and
    restore_all() puts every named one back to its original (before the final run)."""

    def __init__(self, fn: Callable, names: RestoredNames, args: tuple, kwargs: dict) -> None:
        bound = inspect.signature(fn).bind_partial(*args, **kwargs).arguments
        torch = sys.modules.get("torch")
        self._names = names
        self._tensors: dict[str, Any] = {}
        for name in (*names.restore_value, *names.reset_to_zero):
            value = bound.get(name)
            if torch is None or not isinstance(value, torch.Tensor):
                raise TypeError(
                    f"disttune: argument '{name}' of '{fn.__name__}' is in restore_value/reset_to_zero "
                    f"but is {type(value).__name__}, not a tensor"
                )
            self._tensors[name] = value
        self._originals = {name: tensor.detach().clone() for name, tensor in self._tensors.items()}

    def restore_run(self) -> None:
        for name in self._names.restore_value:
            self._tensors[name].copy_(self._originals[name])
        for name in self._names.reset_to_zero:
            self._tensors[name].zero_()

    def restore_all(self) -> None:
        for name, tensor in self._tensors.items():
            tensor.copy_(self._originals[name])
