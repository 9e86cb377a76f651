"""autotune()'s keyword options in one table: each one's group, as the engine groups them, and
what takes it; the lists tune.py uses, and options(), the grouped spelling of them.

    @autotune(space, key_fn, **options(measurement={"timed_runs": 20, "strategy": "converge"},
                                      stores={"cache_dir": "/shared/autotune"},
                                      checks={"reference": 0}))

is the same as giving those keywords flat (the spec's spelling, which stays the contract).
"""

from __future__ import annotations

from typing import Any, Mapping, NamedTuple

__all__ = ["options", "GROUPS"]


class Option(NamedTuple):
    name: str
    group: str  # one of GROUPS
    taker: str  # "engine" (a FunctionTuner keyword), "timing", "compile" or "candidates"


GROUPS = ("measurement", "stores", "compile", "checks", "ranks")

OPTIONS = (
    Option("warmup_runs", "measurement", "engine"),
    Option("timed_runs", "measurement", "engine"),
    Option("statistic", "measurement", "engine"),
    Option("strategy", "measurement", "engine"),
    Option("baseline", "measurement", "engine"),
    Option("budget_ms", "measurement", "engine"),
    Option("max_noise", "measurement", "engine"),
    Option("min_time_ms", "measurement", "engine"),
    Option("strategy_options", "measurement", "engine"),
    Option("flush_l2", "measurement", "timing"),
    Option("graph_runs", "measurement", "timing"),
    Option("timer", "measurement", "timing"),
    Option("key_distance", "measurement", "engine"),
    Option("cache_dir", "stores", "engine"),
    Option("disk_cache", "stores", "engine"),
    Option("redis_url", "stores", "engine"),
    Option("stores", "stores", "engine"),
    Option("precompile", "compile", "compile"),
    Option("precompile_threads", "compile", "compile"),
    Option("compile_timeout_s", "compile", "compile"),
    Option("isolate", "checks", "candidates"),
    Option("candidate_timeout_s", "checks", "candidates"),
    Option("reference", "checks", "candidates"),
    Option("check", "checks", "candidates"),
    Option("rtol", "checks", "candidates"),
    Option("atol", "checks", "candidates"),
    Option("restore_value", "checks", "candidates"),
    Option("reset_to_zero", "checks", "candidates"),
    Option("collective_timeout_s", "ranks", "engine"),
    Option("split_across_ranks", "ranks", "engine"),
)

# The engine's options that a tuned function sets itself for each tuner (its timer, facts,
# communicator).
SET_PER_TUNER = ("timer", "hardware_json", "deps_json", "communicator")


def names(*, taker: str = "", group: str = "") -> tuple[str, ...]:
    """The options taken by `taker` and/or in `group`, in the table's order."""
    return tuple(o.name for o in OPTIONS if (not taker or o.taker == taker) and (not group or o.group == group))


def options(**groups: Mapping[str, Any]) -> dict[str, Any]:
    """autotune()'s keyword options given by group (measurement, stores, compile, checks,
    ranks: docs/python.md lists each group's), as the flat keywords autotune() takes. An
    unknown group, or an option given in a group it is not of, is a TypeError naming where
    it belongs."""
    group_of = {o.name: o.group for o in OPTIONS}
    flat: dict[str, Any] = {}
    for group, given in groups.items():
        if group not in GROUPS:
            raise TypeError(f"disttune: options() has no group '{group}'; the groups are {', '.join(GROUPS)}")
        if not isinstance(given, Mapping):
            raise TypeError(f"disttune: options({group}=...) takes a dict of {group} options, "
                            f"got {type(given).__name__}")
        for name, value in given.items():
            if group_of.get(name) != group:
                where = f"it is a {group_of[name]} option" if name in group_of else "autotune() has no such option"
                raise TypeError(f"disttune: '{name}' is not a {group} option ({where})")
            flat[name] = value
    return flat
