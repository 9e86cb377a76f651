"""The search strategy and strategy_options from Python: function level and contextual, on a made-up space timed by StepTimer."""

import json
import math

import pytest

from disttune import _core
from disttune.autotuner import contextual_autotune
from disttune.tune import autotune

from step_timer import StepTimer

# 240 entries shaped like a kernel's space; the fastest is BLOCK 64, WARPS 4, MODE "b".
SPACE = [
    {"BLOCK": b, "WARPS": w, "MODE": m, "STAGES": s}
    for b in (16, 32, 64, 128, 256) for w in (1, 2, 4, 8) for m in ("a", "b", "c") for s in (1, 2, 3, 4)
]


def cost_ms(BLOCK, WARPS, MODE, STAGES):
    return 1.0 + 0.5 * (math.log2(BLOCK) - 6) ** 2 + 0.3 * (math.log2(WARPS) - 2) ** 2 + (MODE != "b") * 0.4 + 0.1 * (STAGES - 3) ** 2


def searched(tmp_path, **options):
    timer = StepTimer()

    @autotune(config_space=SPACE, key_fn=lambda n: (n,), timer=timer, strategy="search",
              cache_dir=str(tmp_path), **options)
    def launch(n, BLOCK, WARPS, MODE, STAGES):
        timer.current = cost_ms(BLOCK, WARPS, MODE, STAGES)
        return (BLOCK, WARPS, MODE, STAGES)

    return launch


def test_search_measures_a_fraction_and_records_its_options(tmp_path):
    launch = searched(tmp_path, strategy_options={"fraction": 0.125, "seed": 3})
    assert launch(1) == (64, 4, "b", 3)
    report = launch.last_report
    # 12.5% of 240, and up to 10/9 of it while the fastest so far is a recent find (after_fastest)
    assert 30 <= sum(1 for c in report.candidates if c.measured) <= 33
    record = json.loads(report.record_path.read_text())
    assert record["measurement"]["strategy"] == "search"
    assert record["measurement"]["strategy_options"] == {"fraction": "0.125", "seed": "3"}


def test_unknown_or_bad_strategy_options_are_refused_when_decorating(tmp_path):
    with pytest.raises(_core.InvalidSetting, match="has no option 'efort'"):
        searched(tmp_path, strategy_options={"efort": "quick"})
    with pytest.raises(_core.InvalidSetting, match="effort must be one of quick, default, thorough"):
        searched(tmp_path, strategy_options={"effort": "huge"})
    with pytest.raises(_core.InvalidSetting, match="strategy_options must map names"):
        searched(tmp_path, strategy_options={"effort": ["quick"]})


def test_contextual_takes_a_strategy_and_its_options():
    contextual_autotune(strategy="search", strategy_options={"effort": "quick"})(lambda: None)
    with pytest.raises(_core.InvalidSetting, match="unknown strategy 'nope'"):
        contextual_autotune(strategy="nope")(lambda: None)
