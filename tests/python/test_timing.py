"""Timer selection follows the work: CPU for CPU work, device events for accelerator work
(nested tensors, an initialised context, an NCCL group), or the timer= option."""

import dataclasses
import json
import os
import types

import pytest
import torch

import disttune
from disttune import _core, _timing
from disttune.autotuner import contextual_autotune
from disttune.tune import autotune

from step_timer import StepTimer


class FakeEvent:
    """A torch-style event (stands in for torch.npu.Event) on a simulated device clock that the
    launches advance (FakeEvent.now_ms), so what it times does not depend on the machine's load."""

    now_ms = 0.0

    def __init__(self, enable_timing=False):
        assert enable_timing
        self.at = None

    def record(self):
        self.at = FakeEvent.now_ms

    def synchronize(self):
        pass

    def elapsed_time(self, other):
        return other.at - self.at


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
    device_ms = [3.0, 0.5]

    def run(i):
        FakeEvent.now_ms += device_ms[i]

    report = tuner.resolve("[1]", ['{"i":0}', '{"i":1}'], run)
    assert report.best == 1
    assert report.candidates[0].samples == pytest.approx([3.0] * 3)


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


# --- The timer follows the work (issue 17): nested tensors, context, group, timer= ---------


@dataclasses.dataclass
class Buffers:
    """Operands kept in a dataclass, as distributed operators keep their buffers."""

    inputs: list
    scale: float = 1.0


def test_tensors_nested_in_lists_dicts_and_dataclasses_count():
    # The meta device stands in for an accelerator: a device that is not the CPU.
    on_device = torch.empty(4, device="meta")
    assert _timing.device_of(([1, (2, on_device)],), {}).type == "meta"
    assert _timing.device_of((), {"operands": {"a": [on_device]}}).type == "meta"
    assert _timing.device_of((Buffers(inputs=[None, on_device]),), {}).type == "meta"
    # An accelerator tensor anywhere wins over CPU tensors before it.
    assert _timing.device_of((torch.ones(1), [on_device]), {}).type == "meta"
    assert _timing.device_of(([torch.ones(1)],), {}).type == "cpu"


def test_top_level_tensors_and_keyword_arguments_count_in_order():
    # The arguments are read directly and containers walked only when met; the answer is the
    # first accelerator tensor's device in argument order, keyword arguments last.
    on_device = torch.empty(4, device="meta")
    assert _timing.device_of((torch.ones(1), 2, "s", None, b"b"), {"w": on_device}).type == "meta"
    assert _timing.device_of((torch.ones(1),), {"w": torch.ones(1), "n": 3}).type == "cpu"
    assert _timing.device_of((1, 2.0, "s", None, int), {"n": None}) is None
    assert _timing.device_of((), {"n": 1, "nested": ((on_device,),)}).type == "meta"
    assert _timing.device_of((Buffers(inputs=[1, 2]), "x", 3), {}) is None


def test_no_tensor_and_no_accelerator_context_means_the_cpu_clock(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: False)  # as in a CPU-only process
    assert _timing.work_device((16, 32), {"name": "sizes only"}) is None
    identity, timer = _timing.select_timer(None, (16, 32), {}, None, _timing.TimingOptions())
    assert identity == ("cpu",) and timer.name == "cpu"


def test_no_tensor_with_an_initialised_cuda_context_means_device_events(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 1)
    assert _timing.work_device((16, 32), {}) == torch.device("cuda", 1)
    # Tensors still decide where there are some: CPU tensors are CPU work.
    assert _timing.work_device((torch.ones(2),), {}).type == "cpu"


def test_no_tensor_with_an_nccl_group_means_device_events(monkeypatch):
    import torch.distributed as dist

    group = object()
    backends = {"nccl": "nccl", "gloo": "gloo"}
    monkeypatch.setattr(dist, "get_backend", lambda g: backends[current])
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    current = "nccl"
    assert _timing.work_device((8,), {}, group) == torch.device("cuda", 0)
    current = "gloo"
    # A gloo group says nothing of the device: the CPU, unless this process already
    # initialised CUDA (as the GPU tests before this one do).
    on_cuda = torch.device("cuda", 0) if torch.cuda.is_initialized() else None
    assert _timing.work_device((8,), {}, group) == on_cuda


def test_timer_option_chooses_the_timer():
    on_device = torch.empty(4, device="meta")
    identity, timer = _timing.select_timer("cpu", (on_device,), {}, None, _timing.TimingOptions())
    assert identity == ("cpu",) and timer.name == "cpu"
    own = _core.CpuTimer()
    identity, timer = _timing.select_timer(own, (), {}, None, _timing.TimingOptions())
    assert timer is own and identity == ("given", id(own))


def test_timer_cuda_without_a_cuda_device_is_a_clear_error():
    if torch.cuda.is_available():
        return  # the GPU tests time with timer="cuda"
    with pytest.raises(RuntimeError, match='timer="cuda" was asked for but torch sees no CUDA device'):
        _timing.select_timer("cuda", (), {}, None, _timing.TimingOptions())


@pytest.mark.parametrize("bad", ["gpu", "CUDA", 3, object()])
def test_a_bad_timer_value_is_refused_by_both_decorators(bad):
    with pytest.raises(ValueError, match=r"timer=.* of 'launch' is not a timer"):
        autotune(config_space=[{"x": 1}], key_fn=lambda: (), timer=bad)(launch)
    with pytest.raises(ValueError, match=r"timer=.* of 'launch' is not a timer"):
        contextual_autotune(timer=bad)(launch)


def launch(x=0):
    return x


def test_record_report_and_table_name_the_timer(capfd):
    timer = StepTimer()
    times = {"a": 2.0, "b": 0.5}

    @autotune(config_space=[{"name": "a"}, {"name": "b"}], key_fn=lambda n: (n,), timer=timer)
    def timed(n, name):
        timer.current = times[name]
        return name

    assert timed(1, autotune_verbose=True) == "b"
    report = timed.last_report
    assert report.timer == "step-events"
    assert "  timer: step-events\n" in capfd.readouterr().err  # the engine prints the table
    record = json.loads(report.record_path.read_text())
    assert record["measurement"]["timer"] == "step-events"

    @autotune(config_space=[{"name": "a"}], key_fn=lambda n: (n,))
    def on_cpu(n, name):
        return name

    on_cpu(1)
    # No tensor: the CPU timer, unless this process initialised CUDA (then device events).
    expected = "cuda" if torch.cuda.is_initialized() else "cpu"
    assert on_cpu.last_report.timer == expected
    assert json.loads(on_cpu.last_report.record_path.read_text())["measurement"]["timer"] == expected


class CountingTimer(StepTimer):
    """A StepTimer that counts its collects; `holds` answers holds_pairs_across_candidates()."""

    def __init__(self, holds):
        super().__init__()
        self.holds = holds
        self.collects = 0

    def holds_pairs_across_candidates(self):
        return self.holds

    def collect(self):
        self.collects += 1
        return super().collect()


@pytest.mark.parametrize("holds, collects", [(True, 1), (False, 3)])
def test_a_round_is_collected_once_unless_the_timer_times_one_candidate_at_a_time(holds, collects):
    timer = CountingTimer(holds)
    times = {"a": 2.0, "b": 0.5, "c": 1.0}

    @autotune(config_space=[{"name": n} for n in "abc"], key_fn=lambda n: (n,), timer=timer,
              disk_cache=False, strategy="exhaustive")
    def timed(n, name):
        timer.current = times[name]
        return name

    assert timed(1) == "b"
    assert timer.collects == collects  # one exhaustive round of three candidates
    samples = {c.config: c.samples for c in timed.last_report.candidates}
    assert samples == {'{"name":"a"}': [2.0] * 10, '{"name":"b"}': [0.5] * 10, '{"name":"c"}': [1.0] * 10}
