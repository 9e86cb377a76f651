"""The spec's function-level method, written from the text of the usage guide
(/work/shared/seed/autotune-usage-guide.txt, "Working Principle: Function-Level Method"):

  1. key_fn generates the key from the business arguments;
  2. look the key up in the cache;
  3. on a miss, prune_fn filters the candidate configs;
  4. each config gets 5 warm-up and 10 timed runs, timed with device events;
  5. (multi-rank: MAX of each config's time across ranks; not modelled: one GPU here);
  6. the best (lowest time) config is saved and the launcher runs again with it.

Choices the text leaves open, made here: a config's time is the mean of its 10 timed runs
(one event pair per run, the events read after the last run); ties go to the first
config; the cache is in-process only (the suite compares tunings, so every tuner runs
without a disk cache)."""

from typing import Any, Callable, Mapping, Optional, Sequence

WARMUP_RUNS = 5
TIMED_RUNS = 10


def _cuda_event() -> Any:
    import torch

    return torch.cuda.Event(enable_timing=True)


class SpecMethodTuner:
    """A launcher tuned per key by the spec's method. `make_event()` returns a device event
    with record(), synchronize() and elapsed_time(other) in ms (torch.cuda.Event by
    default)."""

    def __init__(
        self,
        fn: Callable,
        config_space: Sequence[Mapping[str, Any]],
        key_fn: Callable,
        prune_fn: Optional[Callable] = None,
        make_event: Callable[[], Any] = _cuda_event,
    ) -> None:
        if not config_space:
            raise ValueError("spec method: the config space is empty")
        self.fn = fn
        self.config_space = list(config_space)
        self.key_fn = key_fn
        self.prune_fn = prune_fn
        self.make_event = make_event
        self.cache: dict = {}  # key -> chosen entry
        self.last_times_ms: list = []  # (entry index, mean ms) of the last tuning
        self.last_timed_runs = 0  # timed runs made by the last tuning

    def __call__(self, *args: Any) -> Any:
        key = self.key_fn(*args)
        entry = self.cache.get(key)
        if entry is None:
            entry = self._tune(key, args)
        return self.fn(*args, **entry)

    def _tune(self, key: Any, args: tuple) -> Mapping[str, Any]:
        surviving = [
            index
            for index, entry in enumerate(self.config_space)
            if self.prune_fn is None or self.prune_fn(entry, *args)
        ]
        if not surviving:
            raise RuntimeError(f"spec method: prune_fn removed every config for key {key!r}")
        times = []
        for index in surviving:
            entry = self.config_space[index]
            for _ in range(WARMUP_RUNS):
                self.fn(*args, **entry)
            pairs = []
            for _ in range(TIMED_RUNS):
                start, stop = self.make_event(), self.make_event()
                start.record()
                self.fn(*args, **entry)
                stop.record()
                pairs.append((start, stop))
            pairs[-1][1].synchronize()
            times.append((index, sum(start.elapsed_time(stop) for start, stop in pairs) / TIMED_RUNS))
        best = min(times, key=lambda item: item[1])[0]  # min keeps the first of equal times
        self.last_times_ms = times
        self.last_timed_runs = len(surviving) * TIMED_RUNS
        self.cache[key] = self.config_space[best]
        return self.cache[key]
