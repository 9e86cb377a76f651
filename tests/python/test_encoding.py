"""Canonical encoding of config values and keys: exact round trips, stable text, clear errors."""

import math

import pytest
import torch

from disttune import _encoding
from disttune.tune import to_hashable


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        False,
        0,
        -7,
        2**63 - 1,
        1.5,
        1.0,
        -0.25,
        float("inf"),
        float("-inf"),
        "text",
        "",
        [1, 2.0, "x"],
        (1, 2),
        (),
        [(1, [2, (3,)])],
        {"a": 1, "b": (2.5, None)},
        torch.float16,
        torch.bfloat16,
        torch.int32,
        torch.Size([4, 8]),
        (torch.Size([2]), torch.float32, "cuda"),
    ],
)
def test_round_trip_is_exact(value):
    text = _encoding.value_text(value)
    back = _encoding.value_from_text(text)
    assert back == value
    assert type(back) is type(value)
    if isinstance(value, (list, tuple)):
        assert [type(item) for item in back] == [type(item) for item in value]
    assert _encoding.value_text(back) == text


def test_nan_round_trips():
    assert math.isnan(_encoding.value_from_text(_encoding.value_text(float("nan"))))


def test_types_are_told_apart():
    texts = {_encoding.value_text(v) for v in (1, 1.0, True, "1", [1], (1,), {"1": 1})}
    assert len(texts) == 7


def test_entry_text_ignores_insertion_order():
    first = _encoding.entry_text({"a": 1, "b": torch.float16})
    second = _encoding.entry_text({"b": torch.float16, "a": 1})
    assert first == second
    assert _encoding.entry_from_text(first) == {"a": 1, "b": torch.float16}


def test_triton_config_round_trip():
    triton = pytest.importorskip("triton")
    config = triton.Config({"BLOCK": 256, "SPLIT": (1, 2)}, num_warps=8, num_stages=2, maxnreg=128)
    text = _encoding.entry_text({"cfg": config})
    back = _encoding.entry_from_text(text)["cfg"]
    assert type(back) is triton.Config
    assert back.all_kwargs() == config.all_kwargs()
    assert back.kwargs == config.kwargs
    assert _encoding.entry_text({"cfg": back}) == text


def test_triton_config_with_pre_hook_is_refused():
    triton = pytest.importorskip("triton")
    config = triton.Config({"BLOCK": 256}, pre_hook=lambda args: None)
    with pytest.raises(_encoding.EncodingError, match="pre_hook"):
        _encoding.entry_text({"cfg": config})


def test_values_without_encoding_are_refused():
    with pytest.raises(_encoding.EncodingError, match=r"config entry\['f'\].*object"):
        _encoding.entry_text({"f": object()})
    with pytest.raises(_encoding.EncodingError, match="keyword"):
        _encoding.entry_text({"not a name": 1})
    with pytest.raises(_encoding.EncodingError, match="dict"):
        _encoding.entry_text([("cfg", 1)])
    with pytest.raises(_encoding.EncodingError, match="64 bits"):
        _encoding.value_text(2**70)


def test_key_with_memory_address_is_refused():
    class Thing:
        pass

    with pytest.raises(_encoding.EncodingError, match="memory address"):
        _encoding.key_text((1, Thing()))
    with pytest.raises(_encoding.EncodingError, match="memory address"):
        _encoding.key_text((1, repr(Thing())))


def test_to_hashable_key():
    x = torch.empty(4, 6, dtype=torch.float16).t()
    key = to_hashable(x)
    assert key == ((6, 4), (1, 6), torch.float16)
    hash(key)
    assert _encoding.key_text(key) == _encoding.key_text(((6, 4), (1, 6), torch.float16))


def test_unknown_tag_is_an_error():
    with pytest.raises(ValueError, match="tag"):
        _encoding.value_from_text('{"$pickle": "x"}')
