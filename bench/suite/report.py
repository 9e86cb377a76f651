"""Turns the suite's raw results into figures: regret per tuning, the targets of issue 7
(met or not) and the markdown table."""

import statistics
from typing import Optional

MATMUL = "matmul_4096"
LAUNCH_BOUND = "scale_2p18"
SPEC = "spec method"
ADAPTIVE = "disttune adaptive"
EXHAUSTIVE = "disttune exhaustive"
FREE_CLOCK = "disttune exhaustive (clock control off)"
CONVERGE = "disttune converge"
BANDWIDTH = "scale_2p26"
SOFTMAX = "softmax_8192"


def regrets(oracle_ms: list, chosen: list) -> list:
    """Each choice's oracle time over the oracle's best, minus one."""
    best = min(oracle_ms)
    return [oracle_ms[index] / best - 1.0 for index in chosen]


def within(values: list, limit: float) -> int:
    """How many regrets are at most `limit` (a fraction: 0.005 is 0.5%)."""
    return sum(value <= limit + 1e-12 for value in values)


def _median(values: list) -> Optional[float]:
    return statistics.median(values) if values else None


def targets(results: dict) -> list:
    """[(target, measured, met)] for the targets of issue 7; a target whose case or tuner
    did not run is listed with the reason and met None (not measured: neither met nor
    missed)."""
    cases = results["cases"]
    rows = []
    matmul = cases.get(MATMUL, {}).get("tuners", {})
    if SPEC in matmul and ADAPTIVE in matmul:
        ratio = _median(matmul[ADAPTIVE]["measure_s"]) / _median(matmul[SPEC]["measure_s"])
        rows.append(("matmul: adaptive measurement phase <= 0.3x the spec method's",
                     f"{ratio:.2f}x ({_median(matmul[ADAPTIVE]['measure_s']) * 1e3:.1f} ms vs "
                     f"{_median(matmul[SPEC]['measure_s']) * 1e3:.1f} ms, medians)", ratio <= 0.3))
        regret = matmul[ADAPTIVE]["regret"]
        rows.append(("matmul: adaptive regret <= 0.5% in 10 of 10",
                     f"{within(regret, 0.005)}/{len(regret)} (max {max(regret) * 100:.2f}%)",
                     len(regret) >= 10 and within(regret, 0.005) == len(regret)))
    else:
        rows.append(("matmul: adaptive targets (issue 7)",
                     "not run: the matmul case or the adaptive tuner was not in this run", None))
    scale = cases.get(LAUNCH_BOUND, {}).get("tuners", {})
    for tuner in (ADAPTIVE, EXHAUSTIVE):
        if tuner in scale:
            regret = scale[tuner]["regret"]
            rows.append((f"scale 2^18: {tuner} regret <= 3% in 10 of 10 ({scale[tuner]['timing']})",
                         f"{within(regret, 0.03)}/{len(regret)} (max {max(regret) * 100:.2f}%)",
                         len(regret) >= 10 and within(regret, 0.03) == len(regret)))
    if SPEC in scale:
        regret = scale[SPEC]["regret"]
        rows.append(("scale 2^18: the spec method, for comparison (not a target)",
                     f"{within(regret, 0.03)}/{len(regret)} within 3% (max {max(regret) * 100:.2f}%)", None))
    return rows + converge_targets(cases) + pace_targets(cases)


def same_choice(chosen: list) -> int:
    """How many tunings chose the most frequent config."""
    return max(chosen.count(index) for index in set(chosen)) if chosen else 0


def converge_targets(cases: dict) -> list:
    """[(target, measured, met)] for the targets of issue 12, for the cases on which the
    converge strategy ran."""
    rows = []
    for slug, title, limit_ms in ((MATMUL, "matmul", 30.0), (BANDWIDTH, "scale 2^26", 8.0)):
        tuner = cases.get(slug, {}).get("tuners", {}).get(CONVERGE)
        if tuner is None:
            continue
        measure_ms = _median(tuner["measure_s"]) * 1e3
        rows.append((f"{title}: converge measurement phase <= {limit_ms:.0f} ms", f"{measure_ms:.1f} ms (median)",
                     measure_ms <= limit_ms))
        regret = tuner["regret"]
        rows.append((f"{title}: converge regret <= 0.5% in 10 of 10",
                     f"{within(regret, 0.005)}/{len(regret)} (max {max(regret) * 100:.2f}%)",
                     len(regret) >= 10 and within(regret, 0.005) == len(regret)))
    tuner = cases.get(LAUNCH_BOUND, {}).get("tuners", {}).get(CONVERGE)
    if tuner is not None:
        regret = tuner["regret"]
        rows.append((f"scale 2^18: converge regret <= 3% in 10 of 10 ({tuner['timing']})",
                     f"{within(regret, 0.03)}/{len(regret)} (max {max(regret) * 100:.2f}%)",
                     len(regret) >= 10 and within(regret, 0.03) == len(regret)))
    for slug, title in ((SOFTMAX, "softmax"), (BANDWIDTH, "scale 2^26")):
        tuner = cases.get(slug, {}).get("tuners", {}).get(CONVERGE)
        if tuner is None:
            continue
        chosen = tuner["chosen"]
        rows.append((f"{title}: converge makes the same choice in >= 9 of 10 fresh tunings",
                     f"{same_choice(chosen)}/{len(chosen)}", len(chosen) >= 10 and same_choice(chosen) >= 9))
    return rows


CASE_TITLES = ((MATMUL, "matmul"), (LAUNCH_BOUND, "scale 2^18"), (SOFTMAX, "softmax"), (BANDWIDTH, "scale 2^26"))


def pace_targets(cases: dict) -> list:
    """[(target, measured, met)] for the targets of issue 25: the exhaustive strategy's
    measurement phase no slower than the spec method's in the same run (every case where both
    ran), and the exhaustive strategy's same choice on softmax and scale 2^26."""
    rows = []
    for slug, title in CASE_TITLES:
        tuners = cases.get(slug, {}).get("tuners", {})
        if SPEC not in tuners or EXHAUSTIVE not in tuners:
            continue
        ours, spec = _median(tuners[EXHAUSTIVE]["measure_s"]), _median(tuners[SPEC]["measure_s"])
        if ours is None or spec is None:
            continue
        rows.append((f"{title}: exhaustive measurement phase <= the spec method's",
                     f"{ours / spec:.2f}x ({ours * 1e3:.1f} ms vs {spec * 1e3:.1f} ms, medians)",
                     ours <= spec))
        free = _median(tuners[FREE_CLOCK]["measure_s"]) if FREE_CLOCK in tuners else None
        if free is not None:
            rows.append((f"{title}: exhaustive, clock control off, vs the spec method (what the control costs)",
                         f"{free / spec:.2f}x ({free * 1e3:.1f} ms)", None))
    for slug, title in ((SOFTMAX, "softmax"), (BANDWIDTH, "scale 2^26")):
        tuner = cases.get(slug, {}).get("tuners", {}).get(EXHAUSTIVE)
        if tuner is None:
            continue
        chosen = tuner["chosen"]
        rows.append((f"{title}: exhaustive makes the same choice in >= 9 of 10 fresh tunings",
                     f"{same_choice(chosen)}/{len(chosen)}", len(chosen) >= 10 and same_choice(chosen) >= 9))
    return rows


def _cell_ms(seconds: Optional[float]) -> str:
    return "-" if seconds is None else f"{seconds * 1e3:.1f}"


def _cell_pct(value: float) -> str:
    return f"{value * 100:.2f}%"


def markdown(results: dict) -> str:
    """The table of every case x tuner, then the targets."""
    meta = results["meta"]
    lines = [
        f"Device: {meta['device']} (driver {meta['driver']}); torch {meta['torch']}, triton {meta['triton']}, "
        f"python {meta['python']}, disttune {meta['disttune']}; {meta['date']}; suite wall time "
        f"{meta['wall_s']:.0f} s.",
        "",
        "| case (configs) | tuner | candidate timing | measurement phase, median ms | x spec | timed runs "
        "| first call s | regret median / max | <= 0.5% | <= 3% | hit overhead us |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for case in results["cases"].values():
        tuners = case["tuners"]
        spec_measure = _median(tuners[SPEC]["measure_s"]) if SPEC in tuners else None
        for name, tuner in tuners.items():
            measure = _median(tuner["measure_s"])
            regret = tuner["regret"]
            ratio = f"{measure / spec_measure:.2f}" if spec_measure and measure is not None else "-"
            runs = tuner["timed_runs"]
            runs_cell = "-" if not runs or runs[0] is None else f"{statistics.median(runs):.0f}"
            first = tuner.get("first_call_s")
            hit = tuner.get("hit_overhead_us")
            timing = tuner["timing"] + (" (graph capture FAILED: per-run)" if tuner.get("graph_fallback") else "")
            lines.append(
                f"| {case['title']} ({case['configs']}) | {name} | {timing} | {_cell_ms(measure)} | {ratio} "
                f"| {runs_cell} | {'-' if first is None else f'{first:.2f}'} "
                f"| {_cell_pct(statistics.median(regret))} / {_cell_pct(max(regret))} "
                f"| {within(regret, 0.005)}/{len(regret)} | {within(regret, 0.03)}/{len(regret)} "
                f"| {'-' if hit is None else f'{hit:+.2f}'} |"
            )
    lines += ["", "| target | measured | met |", "|---|---|---|"]
    for target, measured, met in targets(results):
        lines.append(f"| {target} | {measured} | {'-' if met is None else ('MET' if met else 'NOT MET')} |")
    return "\n".join(lines) + "\n"


def summary_rows(results: dict) -> list:
    """[(what, MET|MISSED|INFO, figure)] for scripts/gpu_check.sh's table, one row per target
and per comparison it measures (INFO: not a target), none left out (a benchmark's result, not
a test's: a missed target does not fail the check)."""
    return [(f"suite: {target}", "INFO" if met is None else ("MET" if met else "MISSED"), measured)
            for target, measured, met in targets(results)]
