"""CPU launchers for the tests: they count their runs and take a chosen time per entry."""

import time
from collections import Counter


class CountingLauncher:
    """A launcher whose entry `speed` (ms) decides how long a run takes; counts runs per entry."""

    def __init__(self):
        self.runs = Counter()

    def __call__(self, x, alpha=1.0, speed=0.0, tag=None):
        self.runs[tag] += 1
        if speed:
            end = time.perf_counter() + speed / 1000.0
            while time.perf_counter() < end:
                pass
        return (x, alpha, tag)

    @property
    def total(self):
        return sum(self.runs.values())


SPACE = [
    {"tag": "slow", "speed": 2.0},
    {"tag": "fast", "speed": 0.2},
    {"tag": "middle", "speed": 1.0},
]


def key_fn(x, *args, **kwargs):
    return (x,)
