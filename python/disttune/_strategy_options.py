"""A strategy's own options (autotune's and contextual_autotune's strategy_options) in the engine's form."""

from __future__ import annotations

from typing import Any, Mapping, Optional

from disttune import _core


def strategy_option_texts(options: Optional[Mapping[str, Any]]) -> dict[str, str]:
    """The engine's form of `strategy_options`: names to texts (numbers written as Python writes them)."""
    texts: dict[str, str] = {}
    for name, value in (options or {}).items():
        if not isinstance(name, str) or isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise _core.InvalidSetting(
                f"disttune: strategy_options must map names (str) to str, int or float values, got {name!r}: {value!r}"
            )
        texts[name] = value if isinstance(value, str) else repr(value)
    return texts
