"""A Python Timer that reports, per timed run, the duration the launcher set (a stand-in for
device events, so that a test decides every sample the engine sees)."""

from disttune import _core


class StepTimer(_core.Timer):
    """Each start()/stop() pair records `current` (ms) as it is at stop()."""

    def __init__(self, name="step-events", hardware_json="{}"):
        super().__init__(name, hardware_json, "{}")
        self.pending = []
        self.current = 0.0

    def start(self):
        self.pending.append(None)

    def stop(self):
        self.pending[-1] = self.current

    def collect(self):
        out, self.pending = self.pending, []
        return out
