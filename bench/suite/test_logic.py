"""CPU checks of the suite's logic: the spec method's selection and run counts, the report's
regret and targets, and both of the suite's kernels in Triton's interpreter.

    python3 -m pytest bench/suite/test_logic.py -q

(scripts/test.sh runs them on the wheel's test venv.)
"""

import os
import sys

os.environ.setdefault("TRITON_INTERPRET", "1")  # before Triton is imported: kernels on the CPU
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pytest  # noqa: E402
import torch  # noqa: E402

if not hasattr(torch.Tensor, "untyped_storage"):
    # Triton's interpreter reads untyped_storage() (torch >= 2.0); older torch names it storage().
    torch.Tensor.untyped_storage = lambda self: self.storage()

from report import markdown, regrets, summary_rows, targets, within  # noqa: E402
from spec_method import TIMED_RUNS, WARMUP_RUNS, SpecMethodTuner  # noqa: E402


class FakeClock:
    """Device events over a virtual clock that each launch advances by its config's cost."""

    def __init__(self):
        self.now = 0.0

    def event(self):
        clock = self

        class Event:
            def record(self):
                self.at = clock.now

            def synchronize(self):
                pass

            def elapsed_time(self, other):
                return other.at - self.at

        return Event()


def test_spec_method_runs_five_plus_ten_per_surviving_config_and_picks_the_fastest():
    clock = FakeClock()
    cost = {"a": 3.0, "b": 1.0, "c": 0.5, "d": 2.0}
    launches = []

    def launcher(x, cfg):
        launches.append(cfg)
        clock.now += cost[cfg]
        return x * 2

    tuner = SpecMethodTuner(launcher, [{"cfg": name} for name in "abcd"], key_fn=lambda x: x,
                            prune_fn=lambda entry, x: entry["cfg"] != "c", make_event=clock.event)
    assert tuner(21) == 42
    assert tuner.cache == {21: {"cfg": "b"}}  # "c" is faster but pruned
    assert [launches.count(name) for name in "abcd"] == [15, 15 + 1, 0, 15]
    assert tuner.last_timed_runs == 3 * TIMED_RUNS and WARMUP_RUNS == 5
    assert dict(tuner.last_times_ms) == {0: 3.0, 1: 1.0, 3: 2.0}
    tuner(21)  # a hit: one more launch, no tuning
    assert len(launches) == 3 * 15 + 2


def test_spec_method_ties_go_to_the_first_config_and_pruning_everything_is_an_error():
    clock = FakeClock()

    def launcher(x, cfg):
        clock.now += 1.0

    tuner = SpecMethodTuner(launcher, [{"cfg": 0}, {"cfg": 1}], key_fn=lambda x: x, make_event=clock.event)
    tuner(1)
    assert tuner.cache[1] == {"cfg": 0}
    pruned = SpecMethodTuner(launcher, [{"cfg": 0}], key_fn=lambda x: x, prune_fn=lambda entry, x: False,
                             make_event=clock.event)
    with pytest.raises(RuntimeError, match="removed every config"):
        pruned(1)


def _results(adaptive_measure, spec_measure, adaptive_choices, scale_choices):
    def tuner(measure, chosen, oracle, timing="t"):
        return {"measure_s": measure, "chosen": chosen, "regret": regrets(oracle, chosen),
                "timed_runs": [4] * len(chosen), "timing": timing, "graph_fallback": False}

    matmul_oracle = [1.0, 1.004, 1.2]
    scale_oracle = [2.0, 2.1, 2.02]
    return {
        "meta": {"device": "GPU", "driver": "1", "torch": "t", "triton": "3.6", "python": "3.12",
                 "disttune": "0.1", "date": "today", "wall_s": 1.0, "command": "x"},
        "cases": {
            "matmul_4096": {"title": "matmul", "configs": 3, "tuners": {
                "spec method": tuner(spec_measure, [0] * 10, matmul_oracle),
                "disttune adaptive": tuner(adaptive_measure, adaptive_choices, matmul_oracle)}},
            "scale_2p18": {"title": "scale", "configs": 3, "tuners": {
                "spec method": tuner([0.1], [1] * 10, scale_oracle),
                "disttune adaptive": tuner([0.1], scale_choices, scale_oracle, "graph replay x20, median"),
                "disttune exhaustive": tuner([0.1], scale_choices, scale_oracle)}},
        },
    }


def test_regret_is_relative_to_the_oracle_best():
    assert regrets([2.0, 3.0, 2.5], [0, 1, 2]) == [0.0, 0.5, 0.25]
    assert within([0.0, 0.005, 0.0051], 0.005) == 2


def test_targets_met_when_adaptive_is_fast_and_right():
    results = _results([0.02] * 10, [0.1] * 10, [0, 1] * 5, [0, 2] * 5)
    met = {target: ok for target, _, ok in targets(results)}
    assert all(ok for ok in met.values() if ok is not None)
    # issue 7's four, and issue 25's exhaustive-vs-spec row of scale 2^18 (both ran there)
    assert len([ok for ok in met.values() if ok is not None]) == 5
    assert met["scale 2^18: exhaustive measurement phase <= the spec method's"] is True
    assert [row[1] for row in summary_rows(results) if row[1] != "INFO"] == ["MET"] * 5
    # the comparison rows are shown too, as INFO: the summary hides no row it measures
    assert len(summary_rows(results)) == len(targets(results))


def test_targets_missed_are_reported_as_missed():
    results = _results([0.05] * 10, [0.1] * 10, [0] * 9 + [2], [0] * 9 + [1])
    measured = {target: (value, ok) for target, value, ok in targets(results)}
    ratio = measured["matmul: adaptive measurement phase <= 0.3x the spec method's"]
    assert ratio[1] is False and ratio[0].startswith("0.50x")
    assert measured["matmul: adaptive regret <= 0.5% in 10 of 10"] == ("9/10 (max 20.00%)", False)
    table = markdown(results)
    assert "NOT MET" in table and "| matmul (3) | disttune adaptive |" in table
    assert "MISSED" in [row[1] for row in summary_rows(results)]


def test_a_target_whose_tuner_did_not_run_is_shown_as_not_run_not_missed():
    results = _results([0.05] * 10, [0.1] * 10, [0] * 10, [0] * 10)
    del results["cases"]["matmul_4096"]["tuners"]["disttune adaptive"]
    rows = {what: (status, figure) for what, status, figure in summary_rows(results)}
    status, figure = rows["suite: matmul: adaptive targets (issue 7)"]
    assert status == "INFO" and figure.startswith("not run")


def test_converge_targets_count_time_regret_and_the_same_choice():
    def tuner(measure, chosen, oracle):
        return {"measure_s": measure, "chosen": chosen, "regret": regrets(oracle, chosen),
                "timing": "event pair per run, median"}

    results = {"cases": {
        "matmul_4096": {"tuners": {"disttune converge": tuner([0.025] * 10, [1] * 10, [2.0, 1.0])}},
        "scale_2p26": {"tuners": {"disttune converge": tuner([0.009] * 10, [0] * 8 + [1] * 2, [1.0, 1.004])}},
        "softmax_8192": {"tuners": {"disttune converge": tuner([0.01] * 10, [2] * 9 + [0], [1.0, 1.0, 1.0])}},
    }}
    rows = {target: (measured, met) for target, measured, met in targets(results)}
    assert rows["matmul: converge measurement phase <= 30 ms"] == ("25.0 ms (median)", True)
    assert rows["matmul: converge regret <= 0.5% in 10 of 10"][1] is True
    assert rows["scale 2^26: converge measurement phase <= 8 ms"] == ("9.0 ms (median)", False)
    assert rows["scale 2^26: converge makes the same choice in >= 9 of 10 fresh tunings"] == ("8/10", False)
    assert rows["softmax: converge makes the same choice in >= 9 of 10 fresh tunings"] == ("9/10", True)


def test_pace_targets_compare_exhaustive_with_the_spec_method_in_the_same_run():
    def tuner(measure, chosen):
        return {"measure_s": measure, "chosen": chosen, "regret": [0.0] * len(chosen),
                "timing": "event pair per run, median"}

    results = {"cases": {
        "matmul_4096": {"tuners": {"spec method": tuner([0.160] * 10, [1] * 10),
                                   "disttune exhaustive": tuner([0.150] * 10, [1] * 10)}},
        "softmax_8192": {"tuners": {"spec method": tuner([0.040] * 10, [1] * 10),
                                    "disttune exhaustive": tuner([0.050] * 10, [2] * 8 + [0] * 2)}},
    }}
    rows = {target: (measured, met) for target, measured, met in targets(results)}
    assert rows["matmul: exhaustive measurement phase <= the spec method's"] == (
        "0.94x (150.0 ms vs 160.0 ms, medians)", True)
    assert rows["softmax: exhaustive measurement phase <= the spec method's"][1] is False
    assert rows["softmax: exhaustive makes the same choice in >= 9 of 10 fresh tunings"] == ("8/10", False)
    assert "scale 2^26: exhaustive makes the same choice in >= 9 of 10 fresh tunings" not in rows


def test_scale_kernel_matches_the_reference_for_every_config():
    from cases import SCALE_CONFIGS, build_scale

    case = build_scale(12, device="cpu")
    for config in SCALE_CONFIGS:
        case.args[1].zero_()
        torch.testing.assert_close(case.launch(*case.args, cfg=config), case.reference(), **case.tolerance)
    assert all(case.prune_fn(entry, *case.args) for entry in case.entries())


def test_softmax_kernel_matches_the_reference_for_every_block():
    from cases import SOFTMAX_CONFIGS, build_softmax

    assert len(SOFTMAX_CONFIGS) >= 24
    case = build_softmax(device="cpu", shape=(3, 8192))
    seen = set()
    for config in SOFTMAX_CONFIGS:
        if config.kwargs["BLOCK"] in seen:
            continue  # the interpreter ignores num_warps and num_stages
        seen.add(config.kwargs["BLOCK"])
        case.args[1].zero_()
        torch.testing.assert_close(case.launch(*case.args, cfg=config), case.reference(), **case.tolerance)
