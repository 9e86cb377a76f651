"""The drop-in's process-wide switch (disttune.triton.install / uninstall and
TRITON_DIST_AUTOTUNE_TRITON_DROPIN), its engine path (stores, strategies, failures), its
interplay with contextual tuning and its Triton version check."""

import os
import subprocess
import sys
import textwrap

import pytest
import torch
import triton
import triton.runtime
import triton.runtime.autotuner

import disttune
import disttune.triton as dropin
from disttune import _triton_hook
from disttune.autotuner import contextual_autotune
from dropin_kernels import DEVICE, CostBench, add_kernel, grid_of

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.join(os.path.dirname(os.path.dirname(HERE)), "python")
N = 200


def configs(blocks=(16, 32, 64, 128)):
    return [triton.Config({"BLOCK": block}) for block in blocks]


def tensors(n=N):
    x = torch.arange(n, dtype=torch.float32, device=DEVICE)
    return x, torch.ones(n, device=DEVICE), torch.zeros(2, dtype=torch.int32, device=DEVICE)


@pytest.fixture
def switch():
    yield
    dropin.uninstall()


def test_install_replaces_every_autotune_of_triton_and_uninstall_puts_them_back(switch):
    original = triton.autotune
    assert not dropin.installed()
    dropin.install()
    dropin.install()  # idempotent
    assert dropin.installed()
    assert triton.autotune is dropin.autotune
    assert triton.runtime.autotune is dropin.autotune
    assert triton.runtime.autotuner.autotune is dropin.autotune
    decorated_on = triton.autotune(configs=configs(), key=["n"], restore_value=["y_ptr"])(add_kernel)
    dropin.uninstall()
    assert not dropin.installed()
    assert triton.autotune is original and triton.runtime.autotuner.autotune is original
    decorated_off = triton.autotune(configs=configs(), key=["n"])(add_kernel)
    assert type(decorated_on) is dropin.Autotuner
    assert type(decorated_off) is triton.runtime.autotuner.Autotuner
    # A kernel decorated while the switch was on stays a drop-in kernel.
    x, y, seen = tensors()
    decorated_on[grid_of(N)](x, y, seen, N)
    torch.testing.assert_close(y, 1 + x)
    assert decorated_on.last_report is not None


LIBRARY = textwrap.dedent(
    """
    import triton
    import triton.language as tl
    from triton import autotune as taken_at_import

    @triton.autotune(configs=[triton.Config({"BLOCK": 32}), triton.Config({"BLOCK": 64})], key=["n"])
    @triton.jit
    def copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(y_ptr + offsets, tl.load(x_ptr + offsets, mask=offsets < n), mask=offsets < n)

    @taken_at_import(configs=[triton.Config({"BLOCK": 32}), triton.Config({"BLOCK": 64})], key=["n"])
    @triton.jit
    def copy_too(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(y_ptr + offsets, tl.load(x_ptr + offsets, mask=offsets < n), mask=offsets < n)
    """
)

PROGRAM = textwrap.dedent(
    """
    import torch
    if not hasattr(torch.Tensor, "untyped_storage"):  # Debian's torch 1.13 (as in conftest.py)
        torch.Tensor.untyped_storage = lambda self: self.storage()
    import library
    import triton
    source = "-"
    if hasattr(library.copy, "last_report"):  # a drop-in kernel (Triton's cannot time in the interpreter)
        x = torch.arange(100, dtype=torch.float32)
        y = torch.zeros(100)
        library.copy[lambda meta: (triton.cdiv(100, meta["BLOCK"]),)](x, y, 100)
        assert torch.equal(x, y)
        source = library.copy.last_report.source
    print(type(library.copy).__module__, type(library.copy_too).__module__, type(library.copy).__name__, source)
    """
)


def _run_program(tmp_path, value, runner=(), first_import="import disttune\n"):
    """Runs PROGRAM (after `first_import`) with the variable set to `value` (None: unset)."""
    (tmp_path / "library.py").write_text(LIBRARY)
    (tmp_path / "program.py").write_text(first_import + PROGRAM)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    env.pop("TRITON_DIST_AUTOTUNE_TRITON_DROPIN", None)
    env["TRITON_INTERPRET"] = "1"  # CPU tensors, on any host
    if value is not None:
        env["TRITON_DIST_AUTOTUNE_TRITON_DROPIN"] = value
    return subprocess.run([sys.executable, *runner, str(tmp_path / "program.py")], env=env, capture_output=True,
                          text=True, timeout=300)


def test_the_variable_makes_libraries_imported_after_disttune_use_the_dropin(tmp_path):
    done = _run_program(tmp_path, "1")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["disttune.triton._autotuner", "disttune.triton._autotuner", "Autotuner", "tuned"]


def test_without_the_variable_libraries_keep_triton_autotune(tmp_path):
    done = _run_program(tmp_path, None)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["triton.runtime.autotuner", "triton.runtime.autotuner", "Autotuner", "-"]


def test_the_runner_switches_a_program_that_never_imports_disttune(tmp_path):
    done = _run_program(tmp_path, None, runner=("-m", "disttune.triton"), first_import="")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["disttune.triton._autotuner", "disttune.triton._autotuner", "Autotuner", "tuned"]


def test_a_bad_value_of_the_variable_is_refused_at_import(tmp_path):
    done = _run_program(tmp_path, "sometimes")
    assert done.returncode != 0
    assert "TRITON_DIST_AUTOTUNE_TRITON_DROPIN" in done.stderr and "'sometimes'" in done.stderr


def test_an_unsupported_triton_version_is_refused_naming_the_supported_range():
    with pytest.raises(disttune.EngineError, match=r"disttune.triton supports Triton >= 3\.6, < 3\.7; .* 3\.5\.1"):
        _triton_hook.check_triton_version("3.5.1", "disttune.triton", dropin.SUPPORTED_TRITON)
    _triton_hook.check_triton_version("3.6.0", "disttune.triton", dropin.SUPPORTED_TRITON)


def test_a_fresh_kernel_object_reads_the_choice_from_the_engine_store():
    x, y, seen = tensors()
    bench = CostBench(seen, lambda block: {16: 3.0, 32: 1.0, 64: 2.0, 128: 4.0}[block])
    first = dropin.autotune(configs=configs(), key=["n"], do_bench=bench)(add_kernel)
    first[grid_of(N)](x, y, seen, N)
    assert first.last_report.source == "tuned" and first.best_config.kwargs == {"BLOCK": 32}
    # Another process would make a new kernel object: it runs nothing to choose.
    bench.blocks.clear()
    second = dropin.autotune(configs=configs(), key=["n"], do_bench=bench)(add_kernel)
    second[grid_of(N)](x, y, seen, N)
    assert second.last_report.source == "disk"
    assert bench.blocks == []
    assert second.best_config.kwargs == {"BLOCK": 32}
    # Other configs are another tuning.
    third = dropin.autotune(configs=configs((16, 64)), key=["n"], do_bench=bench)(add_kernel)
    third[grid_of(N)](x, y, seen, N)
    assert third.last_report.source == "tuned" and sorted(bench.blocks) == [16, 64]


def test_configs_with_a_pre_hook_are_tuned_but_not_stored():
    x, y, seen = tensors()
    bench = CostBench(seen, lambda block: block)
    space = [triton.Config({"BLOCK": block}, pre_hook=lambda nargs: None) for block in (32, 64)]
    for _ in range(2):
        kernel = dropin.autotune(configs=space, key=["n"], do_bench=bench)(add_kernel)
        kernel[grid_of(N)](x, y, seen, N)
        assert kernel.last_report.source == "tuned"
        assert kernel.best_config is space[0]


def test_a_config_the_benchmarker_cannot_time_fails_alone():
    x, y, seen = tensors()
    bench = CostBench(seen, lambda block: float("inf") if block == 16 else block)
    kernel = dropin.autotune(configs=configs(), key=["n"], do_bench=bench)(add_kernel)
    kernel[grid_of(N)](x, y, seen, N)
    assert kernel.best_config.kwargs == {"BLOCK": 32}
    assert kernel.configs_timings[kernel.configs[0]] == float("inf")
    assert [r.failed for r in kernel.last_report.candidates] == [True, False, False, False]


def test_when_every_config_fails_the_launch_raises_tuning_failed_naming_each():
    x, y, seen = tensors()
    bench = CostBench(seen, lambda block: float("inf"))
    kernel = dropin.autotune(configs=configs((32, 64)), key=["n"], do_bench=bench)(add_kernel)
    with pytest.raises(disttune.TuningFailed, match="(?s)BLOCK.*32.*BLOCK.*64"):
        kernel[grid_of(N)](x, y, seen, N)
    assert kernel.cache == {}


def test_the_engine_measures_with_the_strategy_variable(monkeypatch):
    monkeypatch.setenv("TRITON_DIST_AUTOTUNE_STRATEGY", "exhaustive")
    x, y, seen = tensors()
    kernel = dropin.autotune(configs=configs((32, 64)), key=["n"], restore_value=["y_ptr"])(add_kernel)
    kernel[grid_of(N)](x, y, seen, N)
    # exhaustive: 5 warm-up and 10 timed runs of each config, then the chosen launch.
    launched = int(seen[1].item())
    # (A CUDA timer may re-take a run taken while the clock was low.)
    assert launched == 2 * 15 + 1 if DEVICE == "cpu" else launched >= 2 * 15 + 1
    torch.testing.assert_close(y, 1 + x)
    assert [len(r.samples) for r in kernel.last_report.candidates] == [10, 10]


def test_a_contextual_call_drives_dropin_kernels_inside_it():
    x, y, seen = tensors()
    kernel = dropin.autotune(configs=configs((32, 64)), key=["n"], reset_to_zero=["y_ptr"])(add_kernel)

    @contextual_autotune(n_warmup=1, n_repeat=2)
    def outer():
        kernel[grid_of(N)](x, y, seen, N)

    outer()
    assert kernel.last_report is None  # the contextual engine chose, not the function-level one
    assert kernel.best_config in kernel.configs
    assert list(kernel.cache.values()) == [kernel.best_config]
    assert outer.last_tuner is not None


def test_the_dropin_keeps_triton_autotune_s_signature():
    import inspect

    assert inspect.signature(dropin.autotune).parameters.keys() == (
        inspect.signature(triton.runtime.autotuner.autotune).parameters.keys()
    )
    for name, parameter in inspect.signature(dropin.autotune).parameters.items():
        assert parameter.default == inspect.signature(triton.runtime.autotuner.autotune).parameters[name].default
