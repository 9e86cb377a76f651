"""Timer selection: CPU for CPU tensors, torch's event API for another accelerator."""

import json
import os
import time
import types

import torch

import disttune
from disttune import _core, _timing


class FakeEvent:
    """A torch-style event on the host clock (stands in for torch.npu.Event)."""

    def __init__(self, enable_timing=False):
        assert enable_timing
        self.at = None

    def record(self):
        self.at = time.perf_counter()

    def synchronize(self):
        pass

    def elapsed_time(self, other):
        return (other.at - self.at) * 1000.0


def test_cpu_tensors_use_the_cpu_timer():
    identity, timer = _timing.timer_for(_timing.device_of((torch.ones(2),), {}), _timing.TimingOptions())
    assert identity == ("cpu",) and timer.name == "cpu"
    assert _timing.device_of((1, "x"), {"y": None}) is None


def test_another_accelerator_uses_torch_events(monkeypatch):
    backend = types.SimpleNamespace(Event=FakeEvent, get_device_name=lambda device: "Fake 910B")
    monkeypatch.setattr(torch, "fakeacc", backend, raising=False)
    device = types.SimpleNamespace(type="fakeacc", index=0)
    identity, timer = _timing.timer_for(device, _timing.TimingOptions())
    assert identity == ("fakeacc", 0)
    assert isinstance(timer, _timing.TorchEventTimer)
    assert '"name":"Fake 910B"' in timer.hardware_json()

    tuner = _core.FunctionTuner("fake", "digest", timer=timer, disk_cache=False, warmup_runs=1, timed_runs=3)
    spins = [0.003, 0.0005]

    def run(i):
        end = time.perf_counter() + spins[i]
        while time.perf_counter() < end:
            pass

    report = tuner.resolve("[1]", ['{"i":0}', '{"i":1}'], run)
    assert report.best == 1
    assert report.candidates[0].samples[0] >= 2.5


def test_torch_event_timer_reports_its_flush_and_the_record_keeps_it(monkeypatch, tmp_path):
    backend = types.SimpleNamespace(Event=FakeEvent)
    monkeypatch.setattr(torch, "fakeacc", backend, raising=False)
    zeroed = []
    # The flush buffer of a device without memory here: zero_() counts the flushes.
    monkeypatch.setattr(torch, "empty", lambda *args, **kwargs: types.SimpleNamespace(zero_=lambda: zeroed.append(1)))
    device = types.SimpleNamespace(type="fakeacc", index=0)
    _, plain = _timing.timer_for(device, _timing.TimingOptions())
    _, flushing = _timing.timer_for(device, _timing.TimingOptions(flush_l2=True))
    assert plain.flushes_l2() is False
    assert flushing.flushes_l2() is True

    tuner = _core.FunctionTuner("fake", "digest", timer=flushing, cache_dir=str(tmp_path), warmup_runs=0, timed_runs=2)
    report = tuner.resolve("[1]", ['{"i":0}', '{"i":1}'], lambda i: None)
    assert len(zeroed) == 4  # before each timed run of each candidate
    record = json.loads(report.record_path.read_text())
    assert record["measurement"]["flush_l2"] is True


def test_installed_package_is_typed():
    package = os.path.dirname(disttune.__file__)
    assert os.path.exists(os.path.join(package, "py.typed"))
    assert "class FunctionTuner" in open(os.path.join(package, "_core.pyi")).read()
