"""Canonical JSON of config values and business keys, with type tags; rebuilt exactly on load.

A plain JSON scalar (null, true/false, an integer, a finite float, a string) and a list
stand for themselves. Every other type is a one-member object whose name starts with "$":

    {"$tuple": [...]}            a tuple
    {"$dict": {name: ...}}       a dict with string keys
    {"$float": "nan"|"inf"|"-inf"}
    {"$torch.dtype": "float16"}
    {"$torch.Size": [...]}
    {"$triton.Config": {"kwargs": {...}, "num_warps": 4, ...}}

A config entry (a dict of keyword arguments) is a JSON object of its encoded values. Nothing
is pickled or evaluated: decoding only builds the tagged types back. The engine's
canonical_json() makes the final text (keys sorted, compact, shortest floats).
"""

from __future__ import annotations

import functools
import json
import math
import re
import sys
from typing import Any, Callable, Mapping

from disttune import _core

# A hex number of 6+ digits: what CPython's default repr puts after "at 0x".
_ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}")

_INT_MIN = -(2**63)
_INT_MAX = 2**64 - 1


class EncodingError(_core.DisttuneError, TypeError):
    """A value has no canonical encoding (or its text would embed a memory address)."""


def _torch():
    return sys.modules.get("torch")


def _triton_config_type():
    autotuner = sys.modules.get("triton.runtime.autotuner")
    return getattr(autotuner, "Config", None) if autotuner is not None else None


@functools.cache
def _config_fields(config_type) -> tuple[str, ...]:
    """The encoded fields of triton.Config: its constructor's parameters (read once per type)."""
    import inspect

    return tuple(
        name
        for name in inspect.signature(config_type.__init__).parameters
        if name not in ("self", "pre_hook")
    )


def encode(value: Any, where: str = "value", is_key: bool = False) -> Any:
    """The tagged JSON form of `value`; EncodingError names `where` and the type otherwise."""
    kind = type(value)
    if value is None or kind is bool:
        return value
    if kind is int:
        if not _INT_MIN <= value <= _INT_MAX:
            raise EncodingError(f"disttune: {where} is an integer outside 64 bits: {value}")
        return value
    if kind is float:
        if math.isfinite(value):
            return value
        return {"$float": "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")}
    if kind is str:
        if is_key and _ADDRESS.search(value):
            raise EncodingError(
                f"disttune: {where} = {value!r} looks like it embeds a memory address; a key must "
                "be the same in every process (use shapes, dtypes, numbers and names)"
            )
        return value
    if kind is list:
        return [encode(item, f"{where}[{i}]", is_key) for i, item in enumerate(value)]
    if kind is tuple:
        return {"$tuple": [encode(item, f"{where}[{i}]", is_key) for i, item in enumerate(value)]}
    if kind is dict:
        for name in value:
            if type(name) is not str:
                raise EncodingError(f"disttune: {where} has a non-string dict key {name!r}")
        return {"$dict": {name: encode(item, f"{where}[{name!r}]", is_key) for name, item in value.items()}}
    torch = _torch()
    if torch is not None:
        if kind is torch.dtype:
            return {"$torch.dtype": str(value).removeprefix("torch.")}
        if kind is torch.Size:
            return {"$torch.Size": [int(dim) for dim in value]}
    config_type = _triton_config_type()
    if config_type is not None and kind is config_type:
        if getattr(value, "pre_hook", None) is not None:
            raise EncodingError(
                f"disttune: {where} is a triton.Config with a pre_hook; a function has no "
                "canonical encoding (call the hook inside the launcher instead)"
            )
        fields = {}
        for name in _config_fields(config_type):
            field = getattr(value, name)
            if name == "kwargs":
                fields[name] = {k: encode(v, f"{where}.kwargs[{k!r}]", is_key) for k, v in field.items()}
            else:
                fields[name] = encode(field, f"{where}.{name}", is_key)
        return {"$triton.Config": fields}
    hint = " (its repr would embed a memory address)" if _ADDRESS.search(repr(value)) else ""
    raise EncodingError(
        f"disttune: {where} of type {kind.__module__}.{kind.__qualname__} has no canonical "
        f"encoding{hint}; use None, bool, int, float, str, tuple, list, dict, torch.dtype, "
        "torch.Size or triton.Config"
    )


def decode(data: Any) -> Any:
    """The value whose tagged JSON form is `data` (the inverse of encode)."""
    if isinstance(data, list):
        return [decode(item) for item in data]
    if not isinstance(data, dict):
        return data
    if len(data) != 1:
        raise ValueError(f"disttune: not a tagged value: {data!r}")
    ((tag, body),) = data.items()
    if tag == "$tuple":
        return tuple(decode(item) for item in body)
    if tag == "$dict":
        return {name: decode(item) for name, item in body.items()}
    if tag == "$float":
        return float(body)
    if tag == "$torch.dtype":
        import torch

        dtype = getattr(torch, body, None)
        if not isinstance(dtype, torch.dtype):
            raise ValueError(f"disttune: unknown torch dtype {body!r}")
        return dtype
    if tag == "$torch.Size":
        import torch

        return torch.Size(body)
    if tag == "$triton.Config":
        import triton

        fields = {
            name: {k: decode(v) for k, v in item.items()} if name == "kwargs" else decode(item)
            for name, item in body.items()
        }
        return triton.Config(**fields)
    raise ValueError(f"disttune: unknown type tag {tag!r}")


def _canonical(data: Any) -> str:
    return _core.canonical_json(json.dumps(data, allow_nan=False))


def entry_text(entry: Mapping[str, Any], where: str = "config entry") -> str:
    """The canonical JSON of a config entry: an object of its encoded keyword arguments."""
    if type(entry) is not dict:
        raise EncodingError(f"disttune: {where} must be a dict of keyword arguments, got {type(entry).__name__}")
    for name in entry:
        if type(name) is not str or not name.isidentifier():
            raise EncodingError(f"disttune: {where} has a key {name!r} that is not a keyword argument name")
    return _canonical({name: encode(value, f"{where}[{name!r}]") for name, value in entry.items()})


def entry_from_text(text: str) -> dict[str, Any]:
    """The config entry whose canonical JSON is `text`."""
    return {name: decode(item) for name, item in json.loads(text).items()}


def key_text(key: Any) -> str:
    """The canonical text of a business key; EncodingError for a value without a stable text."""
    return _canonical(encode(key, "key", is_key=True))


def value_text(value: Any) -> str:
    """The canonical text of any encodable value."""
    return _canonical(encode(value))


def value_from_text(text: str) -> Any:
    """The value whose canonical text is `text`."""
    return decode(json.loads(text))


def text_distance(user: Callable[[Any, Any], float]) -> Callable[[str, str], float]:
    """The engine's distance over key texts from the user's over key values; a key that does
    not decode (e.g. a record's from another version) is no neighbour."""

    def distance(a: str, b: str) -> float:
        try:
            first, second = value_from_text(a), value_from_text(b)
        except (ValueError, TypeError, KeyError, RecursionError):
            return math.inf
        return float(user(first, second))

    return distance
