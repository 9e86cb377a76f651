"""CPU launchers for the tests: they count their runs and take a chosen time per entry, in a
cost model (COST_TIMER), so that winners and run counts never depend on the machine's load."""

from collections import Counter

from disttune import _core


class CostTimer(_core.Timer):
    """Each timed run lasts the `speed` (ms) of the entry the launcher last ran, as it said."""

    def __init__(self):
        super().__init__("cost-model", "{}", "{}")
        self.current = 0.0
        self._samples = []
        self._open = False

    def start(self):
        self._open = True

    def stop(self):
        if self._open:
            self._samples.append(self.current)
        self._open = False

    def collect(self):
        out, self._samples = self._samples, []
        return out


# The timer of every tuning of CountingLauncher (pass timer=COST_TIMER).
COST_TIMER = CostTimer()


class CountingLauncher:
    """A launcher whose entry `speed` (ms) decides how long a run takes in the cost model
    (COST_TIMER); counts runs per entry."""

    def __init__(self):
        self.runs = Counter()

    def __call__(self, x, alpha=1.0, speed=0.0, tag=None):
        self.runs[tag] += 1
        COST_TIMER.current = speed
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
