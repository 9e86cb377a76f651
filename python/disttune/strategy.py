"""Strategies by name: which candidates get more samples in each round, from agreed numbers only."""

from __future__ import annotations

from typing import Callable, List, Mapping, NamedTuple, Optional, Protocol, Union

from . import _core

CandidateStanding = _core.CandidateStanding


class Round(NamedTuple):
    """One round: these candidate indices (ascending), each with this many warm-up and timed
    runs. A round without timed runs ends measurement; its candidates are the finalists."""

    candidates: List[int]
    warmup_runs: int = 0
    timed_runs: int = 0


class Strategy(Protocol):
    """What a registered strategy's factory returns. It sees numbers, never devices or ranks:
    every rank gets the same standings (times MAX-reduced across ranks), so every rank takes
    the same decisions."""

    def first_round(self, count: int) -> Round: ...

    def next_round(self, standings: List[CandidateStanding]) -> Round: ...


def register_strategy(
    name: str, factory: Callable[..., Strategy], options: Optional[Mapping[str, Union[float, int, str]]] = None
) -> None:
    """Makes `name` selectable (`autotune(strategy=name)`, TRITON_DIST_AUTOTUNE_STRATEGY) for
    the rest of the process. `factory(warmup_runs=, timed_runs=, statistic=)` makes one
    tuning's strategy (a class works). Every rank must register the same strategies.

    `options` declares the strategy's own options, name -> default; the default's type is the
    option's (float: a finite number, int: an integer, str: any text). The factory then also
    gets `options=`: a dict of every declared option and `seed` (int, default 0), each the
    value given in `strategy_options=` or its default, typed as its default. Without
    `options`, the strategy takes none: any strategy option, `seed` too, is InvalidSetting
    naming it, as is a name it does not declare or a value of the wrong type.
    ValueError if `name` is taken; TypeError for a default of another type."""
    _core.register_strategy(name, factory, None if options is None else dict(options))


def registered_strategies() -> List[str]:
    """The registered names, the built-in ones (exhaustive, adaptive, converge, search, random) first."""
    return list(_core.registered_strategies())
