"""Output checks of a tuning: the reference result and the comparison of each candidate's result."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, Callable, Optional, Union

# A reference: a callable with the launcher's arguments, or the index of a config-space entry.
Reference = Union[Callable[..., Any], int]


def _torch():
    return sys.modules.get("torch")


def _is_tensor(value: Any) -> bool:
    torch = _torch()
    return torch is not None and isinstance(value, torch.Tensor)


def snapshot(value: Any) -> Any:
    """A copy of a result that later runs cannot change: tensors cloned, containers rebuilt."""
    if _is_tensor(value):
        return value.detach().clone()
    if isinstance(value, tuple):
        return tuple(snapshot(item) for item in value)
    if isinstance(value, list):
        return [snapshot(item) for item in value]
    if isinstance(value, dict):
        return {name: snapshot(item) for name, item in value.items()}
    return value


def difference(result: Any, expected: Any, rtol: float, atol: float, where: str = "result") -> Optional[str]:
    """Where `result` differs from `expected`, or None if they agree: torch.allclose for tensors
    (same shape and dtype), element-wise through tuples, lists and dicts, == otherwise."""
    if _is_tensor(expected) or _is_tensor(result):
        if not (_is_tensor(expected) and _is_tensor(result)):
            return f"{where} is a {type(result).__name__}, the reference a {type(expected).__name__}"
        if result.shape != expected.shape or result.dtype != expected.dtype:
            return (
                f"{where} has shape {tuple(result.shape)} and dtype {result.dtype}, the reference "
                f"{tuple(expected.shape)} and {expected.dtype}"
            )
        torch = _torch()
        actual = result.detach().to(expected.device)
        if torch.allclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True):
            return None
        close = torch.isclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True)
        wrong = (~close).nonzero()
        first = tuple(int(i) for i in wrong[0].tolist())
        return (
            f"{where} differs at {wrong.shape[0]} of {expected.numel()} elements, first at index "
            f"{first}: {actual[first].item()!r} vs {expected[first].item()!r} (rtol={rtol}, atol={atol})"
        )
    if isinstance(expected, (tuple, list)) and type(result) is type(expected):
        if len(result) != len(expected):
            return f"{where} has {len(result)} items, the reference {len(expected)}"
        for i, (item, reference) in enumerate(zip(result, expected)):
            found = difference(item, reference, rtol, atol, f"{where}[{i}]")
            if found:
                return found
        return None
    if isinstance(expected, dict) and isinstance(result, dict):
        if result.keys() != expected.keys():
            return f"{where} has keys {sorted(map(str, result))}, the reference {sorted(map(str, expected))}"
        for name in expected:
            found = difference(result[name], expected[name], rtol, atol, f"{where}[{name!r}]")
            if found:
                return found
        return None
    if result == expected:
        return None
    return f"{where} is {result!r}, the reference {expected!r}"


@dataclass(frozen=True)
class OutputCheck:
    """How each candidate's result is checked: against `reference` (a callable with the
    launcher's arguments, or a config-space index), with `check(result, expected) -> bool` or
    the default comparison (`difference` with `rtol`/`atol`)."""

    reference: Reference
    check: Optional[Callable[[Any, Any], bool]]
    rtol: float
    atol: float

    def describe_reference(self) -> str:
        if isinstance(self.reference, int):
            return f"config_space[{self.reference}]"
        return getattr(self.reference, "__name__", repr(self.reference))

    def expected(self, run_entry: Callable[[int], Any], call: Callable[[Callable], Any]) -> Any:
        """The reference result, copied: `run_entry(i)` runs entry i, `call(f)` calls f with
        the launcher's arguments."""
        try:
            value = run_entry(self.reference) if isinstance(self.reference, int) else call(self.reference)
        except Exception as error:
            raise RuntimeError(f"disttune: the reference ({self.describe_reference()}) failed: {error!r}") from error
        return snapshot(value)

    def verify(self, result: Any, expected: Any) -> None:
        """Raises a RuntimeError saying where `result` differs from the reference, if it does."""
        if self.check is not None:
            if not self.check(result, expected):
                raise RuntimeError(
                    f"disttune: the result differs from the reference ({self.describe_reference()}): "
                    f"check {getattr(self.check, '__name__', 'check')}() returned False"
                )
            return
        found = difference(result, expected, self.rtol, self.atol)
        if found:
            raise RuntimeError(f"disttune: the result differs from the reference ({self.describe_reference()}): {found}")


def output_check(
    reference: Optional[Reference], check: Optional[Callable], rtol: float, atol: float, space_size: int, name: str
) -> Optional[OutputCheck]:
    """The validated output check of a tuned function, or None without a reference."""
    if reference is None:
        if check is not None:
            raise ValueError(f"disttune: check= of '{name}' needs reference= (what to compare with)")
        return None
    if isinstance(reference, bool) or not (isinstance(reference, int) or callable(reference)):
        raise TypeError(f"disttune: reference= of '{name}' must be a callable or a config_space index")
    if isinstance(reference, int) and not 0 <= reference < space_size:
        raise ValueError(f"disttune: reference={reference} of '{name}' is not an index of its {space_size} entries")
    if check is not None and not callable(check):
        raise TypeError(f"disttune: check= of '{name}' must be callable (result, expected) -> bool")
    if rtol < 0 or atol < 0:
        raise ValueError(f"disttune: rtol and atol of '{name}' must not be negative")
    return OutputCheck(reference, check, float(rtol), float(atol))
