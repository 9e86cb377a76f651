"""disttune.strategy: a strategy written in Python, registered by name (with its options) and used by autotune."""

import pytest

from disttune import _core
from disttune.autotuner import contextual_autotune
from disttune.strategy import Round, register_strategy, registered_strategies
from disttune.tune import autotune

from launchers import COST_TIMER, SPACE, CountingLauncher, key_fn


class KeepTheFastestHalf:
    """Round 1: every candidate, 2 samples. Round 2: the faster half, 4 more. Then done."""

    made = []

    def __init__(self, warmup_runs, timed_runs, statistic):
        self.warmup_runs = warmup_runs
        self.rounds = 0
        self.seen = []
        KeepTheFastestHalf.made.append(self)

    def first_round(self, count):
        return Round(list(range(count)), self.warmup_runs, 2)

    def next_round(self, standings):
        self.seen.append([(s.failed, s.time_ms, s.samples) for s in standings])
        self.rounds += 1
        alive = [i for i, s in enumerate(standings) if not s.failed and s.samples > 0]
        alive.sort(key=lambda i: standings[i].time_ms)
        kept = sorted(alive[: max(1, len(alive) // 2)])
        return Round(kept, 1, 4) if self.rounds == 1 else Round(kept)


register_strategy("fastest-half", KeepTheFastestHalf)


def tuned(launcher, **options):
    options.setdefault("timer", COST_TIMER)

    @autotune(config_space=SPACE, key_fn=key_fn, warmup_runs=1, timed_runs=3, disk_cache=False, **options)
    def launch(x, alpha=1.0, speed=0.0, tag=None):
        return launcher(x, alpha, speed, tag)

    return launch


def test_a_python_strategy_decides_the_rounds():
    KeepTheFastestHalf.made.clear()
    launcher = CountingLauncher()
    launch = tuned(launcher, strategy="fastest-half")
    assert launch(1)[2] == "fast"
    strategy = KeepTheFastestHalf.made[-1]
    assert strategy.rounds == 2
    first = strategy.seen[0]
    assert [samples for _, _, samples in first] == [2, 2, 2]
    # Round 1: 1 warm-up + 2 timed each; round 2: "fast" only, 1 warm-up + 4 timed; the final call.
    assert launcher.runs == {"slow": 3, "fast": 3 + 5 + 1, "middle": 3}
    report = launch.last_report
    assert [len(c.samples) for c in report.candidates] == [2, 6, 2]  # the others were dropped


def test_registered_names_list_the_builtins_first():
    names = registered_strategies()
    assert names[:2] == ["exhaustive", "adaptive"]
    assert "fastest-half" in names


def test_a_name_is_registered_once():
    with pytest.raises(ValueError, match="already registered"):
        register_strategy("fastest-half", KeepTheFastestHalf)
    with pytest.raises(ValueError, match="already registered"):
        register_strategy("exhaustive", KeepTheFastestHalf)


def test_an_unknown_strategy_lists_the_registered_ones():
    with pytest.raises(ValueError, match=r"unknown strategy 'psychic' \(registered: exhaustive, adaptive, .*fastest-half"):
        tuned(CountingLauncher(), strategy="psychic")


def test_a_bad_round_is_a_clear_error():
    class Wrong:
        def __init__(self, **settings):
            pass

        def first_round(self, count):
            return "everything"

        def next_round(self, standings):
            return Round([])

    register_strategy("wrong-shape", Wrong)
    with pytest.raises(TypeError, match=r"strategy 'wrong-shape': first_round\(\) must return"):
        tuned(CountingLauncher(), strategy="wrong-shape")(1)


def test_an_error_in_a_strategy_reaches_the_caller():
    class Broken:
        def __init__(self, **settings):
            pass

        def first_round(self, count):
            return Round(list(range(count)), 0, 1)

        def next_round(self, standings):
            raise ArithmeticError("no idea")

    register_strategy("broken", Broken)
    with pytest.raises(ArithmeticError, match="no idea"):
        tuned(CountingLauncher(), strategy="broken")(1)


def test_the_environment_picks_a_registered_strategy(monkeypatch):
    KeepTheFastestHalf.made.clear()
    monkeypatch.setenv("TRITON_DIST_AUTOTUNE_STRATEGY", "fastest-half")
    launcher = CountingLauncher()
    launch = tuned(launcher, strategy="")
    assert launch(1)[2] == "fast"
    assert KeepTheFastestHalf.made and KeepTheFastestHalf.made[-1].rounds == 2


class TakesOptions:
    """Keeps the `keep` fastest after one round of `samples` each; records its options."""

    made = []

    def __init__(self, warmup_runs, timed_runs, statistic, options):
        self.options = options
        self.rounds = 0
        TakesOptions.made.append(self)

    def first_round(self, count):
        return Round(list(range(count)), 1, self.options["samples"])

    def next_round(self, standings):
        self.rounds += 1
        alive = sorted((i for i, s in enumerate(standings) if not s.failed), key=lambda i: standings[i].time_ms)
        return Round(sorted(alive[: self.options["keep"]]))


register_strategy("takes-options", TakesOptions, options={"samples": 2, "keep": 1, "share": 0.5, "mode": "fast"})


def test_a_python_strategy_gets_its_declared_options_typed_with_the_defaults_filled_in():
    TakesOptions.made.clear()
    launcher = CountingLauncher()
    launch = tuned(launcher, strategy="takes-options", strategy_options={"samples": "3", "share": "2.5e-1", "seed": 7})
    assert launch(1)[2] == "fast"
    options = TakesOptions.made[-1].options
    assert options == {"seed": 7, "samples": 3, "keep": 1, "share": 0.25, "mode": "fast"}
    assert [type(options[name]) for name in ("seed", "samples", "share", "mode")] == [int, int, float, str]
    assert launcher.runs == {"slow": 4, "fast": 4 + 1, "middle": 4}  # 1 warm-up + 3 timed each, the final call


def test_an_option_a_python_strategy_does_not_declare_is_refused_naming_it():
    with pytest.raises(_core.InvalidSetting, match=r"strategy 'takes-options' has no option 'kep' \(its options: seed, samples, keep, share, mode\)"):
        tuned(CountingLauncher(), strategy="takes-options", strategy_options={"kep": 2})
    with pytest.raises(_core.InvalidSetting, match=r"option keep must be an integer, got '1.5'"):
        tuned(CountingLauncher(), strategy="takes-options", strategy_options={"keep": 1.5})
    with pytest.raises(_core.InvalidSetting, match=r"option share must be a finite number, got 'half'"):
        contextual_autotune(strategy="takes-options", strategy_options={"share": "half"})(lambda: None)


def test_a_python_strategy_without_declared_options_refuses_every_option():
    # Options used to be ignored silently; the seed too would never reach this strategy.
    for given in ({"samples": 2}, {"seed": 1}):
        name = next(iter(given))
        with pytest.raises(_core.InvalidSetting, match=rf"strategy 'fastest-half' has no option '{name}' \(its options: none\)"):
            tuned(CountingLauncher(), strategy="fastest-half", strategy_options=given)


def test_a_default_of_another_type_is_refused_when_registering():
    for default in (True, [1], None, 2**70):
        with pytest.raises(TypeError, match="strategy 'bad-default' option x"):
            register_strategy("bad-default", TakesOptions, options={"x": default})
    with pytest.raises(ValueError, match="option share must be a finite number, got 'inf' \\(its default\\)"):
        register_strategy("bad-default", TakesOptions, options={"share": float("inf")})
    assert "bad-default" not in registered_strategies()
