"""The hit path and the miss path of an @autotune function: key_fn runs once per call and a
miss looks the in-process cache up once (issue 21, item 5)."""

import pytest

from disttune import tune
from disttune.tune import autotune

SPACE = [{"tag": "a"}, {"tag": "b"}]


class KeyCounter:
    """A key_fn that counts its calls."""

    def __init__(self, make_key=lambda x: (x,)):
        self.calls = 0
        self.make_key = make_key

    def __call__(self, x, *args, **kwargs):
        self.calls += 1
        return self.make_key(x)


def tuned(key_fn, runs):
    @autotune(config_space=SPACE, key_fn=key_fn, disk_cache=False, warmup_runs=0, timed_runs=1)
    def launch(x, tag, scale=1):
        runs.append((x, tag))
        return x * scale, tag

    return launch


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(lambda launch, x: launch(x), id="positional"),
        pytest.param(lambda launch, x: launch(x, scale=2), id="keywords"),
        pytest.param(lambda launch, x: launch(x, autotune_verbose=False), id="call-flag"),
    ],
)
def test_key_fn_runs_once_per_call_on_a_miss_and_on_a_hit(call):
    key_fn, runs = KeyCounter(), []
    launch = tuned(key_fn, runs)
    call(launch, 1)
    assert key_fn.calls == 1  # the miss: tuned with the key computed once
    assert len(runs) == len(SPACE) + 1
    call(launch, 1)
    assert key_fn.calls == 2  # the hit
    assert len(runs) == len(SPACE) + 2


def test_unhashable_keys_run_key_fn_once_per_call():
    key_fn, runs = KeyCounter(lambda x: [x]), []
    launch = tuned(key_fn, runs)
    launch(3)
    launch(3)
    launch(3, scale=2)
    assert key_fn.calls == 3
    assert len(runs) == len(SPACE) + 3  # tuned once, found by the key's text after


def test_autotune_false_runs_no_key_fn():
    key_fn, runs = KeyCounter(), []
    launch = tuned(key_fn, runs)
    assert launch(4, autotune=False) == (4, "a")
    assert key_fn.calls == 0


class HashCounted(tuple):
    """A key that counts how often a dict hashes it (each lookup or store hashes it once)."""

    hashes = 0

    def __hash__(self):
        HashCounted.hashes += 1
        return tuple.__hash__(self)


@pytest.mark.parametrize("keywords", [{}, {"scale": 2}], ids=["positional", "keywords"])
def test_a_miss_looks_the_cache_up_once(monkeypatch, keywords):
    plain_text = tune._encoding.key_text
    monkeypatch.setattr(tune._encoding, "key_text", lambda key: plain_text(tuple(key)))
    runs = []
    launch = tuned(KeyCounter(lambda x: HashCounted((x,))), runs)
    HashCounted.hashes = 0
    launch(5, **keywords)
    # One lookup, then the choice stored twice (the cache and the hit table).
    assert HashCounted.hashes == 1 + 2
    HashCounted.hashes = 0
    launch(5, **keywords)
    assert HashCounted.hashes == 1


def test_a_miss_looks_again_when_a_key_was_cached_since_its_lookup():
    # Another thread may tune the key between a call's lookup and its turn at the lock: the
    # miss path then finds that choice instead of tuning again.
    runs = []
    launch = tuned(KeyCounter(), runs)
    launch(6)
    tuned_runs = len(runs)
    assert launch._miss((6,), 0, 6) == (6, launch.cache[(6,)]["tag"])
    assert len(runs) == tuned_runs + 1  # ran the cached choice; no second tuning
