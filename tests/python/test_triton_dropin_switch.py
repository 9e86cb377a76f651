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


def test_install_takes_every_autotuner_made_while_it_is_on(switch):
    assert not dropin.installed()
    before = triton.autotune(configs=configs(), key=["n"])(add_kernel)
    dropin.install()
    dropin.install()  # idempotent
    assert dropin.installed()
    decorated_on = triton.autotune(configs=configs(), key=["n"], restore_value=["y_ptr"])(add_kernel)
    made_directly = triton.runtime.autotuner.Autotuner(add_kernel, add_kernel.arg_names, configs(), ["n"], None, None)
    dropin.uninstall()
    assert not dropin.installed()
    decorated_off = triton.autotune(configs=configs(), key=["n"])(add_kernel)
    # triton.autotune keeps its own function and class: the engine takes the objects it makes.
    assert type(decorated_on) is triton.runtime.autotuner.Autotuner
    assert [dropin.taken(k) for k in (before, decorated_on, made_directly, decorated_off)] == [False, True, True, False]
    # A kernel made while the switch was on stays taken.
    x, y, seen = tensors()
    decorated_on[grid_of(N)](x, y, seen, N)
    torch.testing.assert_close(y, 1 + x)
    assert decorated_on.last_report.source == "tuned"
    assert decorated_on.best_config in decorated_on.configs


class LibraryAutotuner(triton.runtime.autotuner.Autotuner):
    """A library's own autotuner, written the way flash-linear-attention writes its
    CachedAutotuner: None-safe reset/restore hooks installed after Triton's constructor, and a
    run() that looks the key up in the library's own config store before Triton's run."""

    store = {}  # kernel name -> {key: triton.Config}, the library's shipped configs

    def __init__(self, fn, arg_names, configs, key, reset_to_zero, restore_value, **kwargs):
        super().__init__(fn, arg_names, configs, key, reset_to_zero, restore_value, **kwargs)
        self.resets = 0
        if self.reset_to_zero:
            def pre_hook(named, reset_only=False):
                self.resets += 1
                for name in self.reset_to_zero:
                    if named[name] is not None:
                        named[name].zero_()

            self.pre_hook = pre_hook

    def run(self, *args, **kwargs):
        key = tuple(dict(zip(self.arg_names, args))[name] for name in self.keys)
        shipped = self.store.get(self.base_fn.__name__, {}).get(key)
        if shipped is not None and key not in self.cache:
            self.cache[key + tuple(str(a.dtype) for a in args if hasattr(a, "dtype"))] = shipped
        return super().run(*args, **kwargs)


def library_autotune(configs, key, **kwargs):
    return lambda fn: LibraryAutotuner(fn, fn.arg_names, configs, key, kwargs.pop("reset_to_zero", None), None,
                                       **kwargs)


class OwnBenchAutotuner(triton.runtime.autotuner.Autotuner):
    """A subclass with its own measurement: the engine must leave it to Triton."""

    def _bench(self, *args, config, **meta):
        self.benched = getattr(self, "benched", 0) + 1
        return super()._bench(*args, config=config, **meta)


def test_a_library_subclass_is_taken_and_keeps_its_overrides(switch):
    dropin.install()
    kernel = library_autotune(configs(), ["n"], reset_to_zero=["y_ptr"])(add_kernel)
    assert dropin.taken(kernel)
    x, y, seen = tensors()
    kernel[grid_of(N)](x, y, seen, N)
    torch.testing.assert_close(y, x)  # its reset hook zeroed y before every run and the launch
    assert kernel.last_report.source == "tuned" and kernel.resets > 1
    # Its own store answers first: a shipped config for a new key is used, nothing is tuned.
    shipped = kernel.configs[2]
    LibraryAutotuner.store["add_kernel"] = {(N // 2,): shipped}
    kernel.last_report = None
    x, y, seen = tensors(N // 2)
    try:
        kernel[grid_of(N // 2)](x, y, seen, N // 2)
    finally:
        LibraryAutotuner.store.clear()
    assert kernel.last_report is None and kernel.best_config is shipped
    assert int(seen[0].item()) == 64


def test_a_subclass_with_its_own_measurement_is_left_to_triton_with_a_reason(switch):
    dropin.install()
    x, y, seen = tensors()
    bench = CostBench(seen, lambda block: {16: 3.0, 32: 1.0, 64: 2.0, 128: 4.0}[block])
    kernel = OwnBenchAutotuner(add_kernel, add_kernel.arg_names, configs(), ["n"], None, None, do_bench=bench)
    assert not dropin.taken(kernel)
    kernel[grid_of(N)](x, y, seen, N)  # Triton's run, its own _bench
    assert kernel.benched == 4 and kernel.best_config.kwargs == {"BLOCK": 32}
    assert not hasattr(kernel, "last_report")
    left = [entry for entry in dropin.census() if entry["class"].endswith("OwnBenchAutotuner")]
    assert left[-1]["taken"] is False
    assert "overrides Autotuner._bench (its own measurement)" in left[-1]["reason"]
    assert "\n" not in left[-1]["reason"]
    assert "left: add_kernel" in dropin.census_table()
    assert dropin.take(kernel).endswith("overrides Autotuner._bench (its own measurement)")


def test_autotuners_made_before_install_are_listed_and_can_be_taken(switch):
    early = triton.autotune(configs=configs(), key=["n"])(add_kernel)
    other = triton.autotune(configs=configs(), key=["n"])(add_kernel)
    dropin.install()
    assert not dropin.taken(early)
    entry = next(e for e in dropin.census() if e["kernel"] == "add_kernel" and not e["taken"]
                 and "switch was off" in e["reason"])
    assert entry["class"] == "triton.runtime.autotuner.Autotuner"
    assert dropin.take(early) == "" and dropin.taken(early)
    with pytest.raises(TypeError, match="needs a Triton Autotuner"):
        dropin.take(add_kernel)
    dropin.install(existing=True)
    assert dropin.taken(other)


def test_the_strategy_follows_the_size_of_the_space(monkeypatch):
    from disttune.triton import _timeline

    _timeline.clear()
    monkeypatch.setenv("TRITON_DIST_AUTOTUNE_SEARCH_FROM", "3")
    x, y, seen = tensors()
    small = dropin.autotune(configs=configs((32, 64)), key=["n"], restore_value=["y_ptr"])(add_kernel)
    small[grid_of(N)](x, y, seen, N)
    large = dropin.autotune(configs=configs(), key=["n"], restore_value=["y_ptr"])(add_kernel)
    large[grid_of(N)](x, y, seen, N)
    assert [entry["strategy"] for entry in dropin.timelines()] == ["converge", "search"]
    monkeypatch.setenv("TRITON_DIST_AUTOTUNE_SEARCH_FROM", "1")
    with pytest.raises(disttune.InvalidSetting, match="TRITON_DIST_AUTOTUNE_SEARCH_FROM .* from 2 to 1000000, got '1'"):
        dropin.autotune(configs=configs(), key=["n"])(add_kernel)[grid_of(N)](x, y, seen, N)


def test_the_search_takes_spaces_from_80_configs_by_default(monkeypatch):
    from disttune.triton._kernel_tuning import strategy_for

    monkeypatch.delenv("TRITON_DIST_AUTOTUNE_SEARCH_FROM", raising=False)
    monkeypatch.delenv("TRITON_DIST_AUTOTUNE_STRATEGY", raising=False)
    assert [strategy_for(count) for count in (64, 79, 80, 384)] == ["converge", "converge", "search", "search"]


def test_the_search_effort_setting_reaches_the_drop_ins_search(tmp_path, monkeypatch):
    import json

    monkeypatch.setenv("TRITON_DIST_AUTOTUNE_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TRITON_DIST_AUTOTUNE_SEARCH_FROM", "3")
    monkeypatch.setenv("TRITON_DIST_AUTOTUNE_SEARCH_EFFORT", "Thorough")
    x, y, seen = tensors()
    kernel = dropin.autotune(configs=configs(), key=["n"], restore_value=["y_ptr"])(add_kernel)
    kernel[grid_of(N)](x, y, seen, N)
    with open(kernel.last_report.record_path) as file:
        measurement = json.load(file)["measurement"]
    assert measurement["strategy"] == "search" and measurement["strategy_options"]["effort"] == "thorough"
    monkeypatch.setenv("TRITON_DIST_AUTOTUNE_SEARCH_EFFORT", "most")
    with pytest.raises(disttune.InvalidSetting,
                       match="TRITON_DIST_AUTOTUNE_SEARCH_EFFORT must be quick, default or thorough, got 'most'"):
        dropin.autotune(configs=configs(), key=["n"])(add_kernel)[grid_of(N)](x, y, seen, N)


def test_each_tuning_leaves_its_timeline_in_the_file_the_variable_names(tmp_path, monkeypatch):
    import json

    path = tmp_path / "timeline.jsonl"
    monkeypatch.setenv("TRITON_DIST_AUTOTUNE_TIMELINE", str(path))
    x, y, seen = tensors()
    kernel = dropin.autotune(configs=configs(), key=["n"], restore_value=["y_ptr"])(add_kernel)
    kernel[grid_of(N)](x, y, seen, N)
    kernel[grid_of(N)](x, y, seen, N)  # cached: no tuning, no line
    x, y, seen = tensors(N // 2)
    kernel[grid_of(N // 2)](x, y, seen, N // 2)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [(line["kernel"], line["configs"], line["source"]) for line in lines] == [("add_kernel", 4, "tuned")] * 2
    for line in lines:
        assert 0 < line["measured"] <= 4 and line["total_s"] >= line["waited_on_compiles_s"] >= 0
        assert line["measure_s"] <= line["total_s"] and line["device_s"] > 0
    assert "add_kernel" in dropin.timeline_table(lines)


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
    import disttune.triton
    source = "-"
    if disttune.triton.taken(library.copy):  # (Triton's own cannot time in the interpreter)
        x = torch.arange(100, dtype=torch.float32)
        y = torch.zeros(100)
        library.copy[lambda meta: (triton.cdiv(100, meta["BLOCK"]),)](x, y, 100)
        assert torch.equal(x, y)
        source = library.copy.last_report.source
    print(disttune.triton.taken(library.copy), disttune.triton.taken(library.copy_too), source)
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
    # copy_too's module took triton.autotune before the switch: its kernel is taken all the same.
    assert done.stdout.split() == ["True", "True", "tuned"]


def test_without_the_variable_libraries_keep_triton_autotune(tmp_path):
    done = _run_program(tmp_path, None)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "False", "-"]


def test_the_runner_switches_a_program_that_never_imports_disttune(tmp_path):
    done = _run_program(tmp_path, None, runner=("-m", "disttune.triton", "--census"), first_import="")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True", "tuned"]
    assert "disttune.triton: the engine tunes 2 autotuners, Triton 0" in done.stderr


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


def _no_op_hook(nargs):
    return None


def _other_hook(nargs):
    return nargs.get("n")  # other code: another identity


def test_configs_with_a_pre_hook_are_stored_under_the_hooks_identity():
    # A pre_hook (a TMA descriptor's block shape, as Liger's GEMMs set) is known by its module,
    # name and a digest of its code: a later autotuner with the same hooks reads the choice.
    x, y, seen = tensors()
    bench = CostBench(seen, lambda block: block)
    first = dropin.autotune(configs=[triton.Config({"BLOCK": b}, pre_hook=_no_op_hook) for b in (64, 32)],
                            key=["n"], do_bench=bench)(add_kernel)
    first[grid_of(N)](x, y, seen, N)
    assert first.last_report.source == "tuned" and sorted(bench.blocks) == [32, 64]
    bench.blocks.clear()
    space = [triton.Config({"BLOCK": b}, pre_hook=_no_op_hook) for b in (64, 32)]
    second = dropin.autotune(configs=space, key=["n"], do_bench=bench)(add_kernel)
    second[grid_of(N)](x, y, seen, N)
    assert second.last_report.source == "disk" and bench.blocks == []
    assert second.best_config is space[1]  # this autotuner's config, with its own hook
    # A hook with other code is another config: tuned again.
    third = dropin.autotune(configs=[triton.Config({"BLOCK": b}, pre_hook=_other_hook) for b in (64, 32)],
                            key=["n"], do_bench=bench)(add_kernel)
    third[grid_of(N)](x, y, seen, N)
    assert third.last_report.source == "tuned" and sorted(bench.blocks) == [32, 64]


def test_configs_with_a_hook_without_code_are_tuned_but_not_stored():
    import functools

    x, y, seen = tensors()
    bench = CostBench(seen, lambda block: block)
    hook = functools.partial(_no_op_hook)
    space = [triton.Config({"BLOCK": block}, pre_hook=hook) for block in (32, 64)]
    for _ in range(2):
        kernel = dropin.autotune(configs=space, key=["n"], do_bench=bench)(add_kernel)
        kernel[grid_of(N)](x, y, seen, N)
        assert kernel.last_report.source == "tuned"
        assert kernel.best_config is space[0]


def _hook_returning(value):
    def hook(nargs):
        return value

    return hook


def test_configs_whose_hooks_differ_only_in_what_they_capture_stay_apart():
    # Their hooks have one identity (same code), but Triton keeps two such configs apart (a
    # config's equality takes its pre_hook object); the same hook object makes them one.
    from disttune.triton import _kernel_tuning

    apart = [triton.Config({"BLOCK": 32}, pre_hook=_hook_returning(value)) for value in (1, 2)]
    distinct, texts, storable = _kernel_tuning._candidates(apart)
    assert distinct == apart and len(set(texts)) == 2 and storable
    assert _kernel_tuning._candidates(apart) == (distinct, texts, storable)  # the same texts again
    hook = _hook_returning(1)
    same = [triton.Config({"BLOCK": 32}, pre_hook=hook) for _ in range(2)]
    assert _kernel_tuning._candidates(same)[0] == same[:1]


def test_a_hooks_identity_is_the_same_in_another_process():
    # Its bytecode, names and constants, whatever string hashing's seed (a set's order).
    code = textwrap.dedent("""
        from disttune.triton._kernel_tuning import _hook_identity
        def hook(nargs):
            return nargs["n"] in {"a", "b", "c"} and (lambda: 3)()
        print(_hook_identity(hook))
    """)
    seen = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("1", "2")}
    assert len(seen) == 1 and seen.pop().startswith("__main__.hook#")


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


@pytest.mark.skipif(DEVICE == "cpu", reason="Triton's interpreter compiles nothing: a GPU case")
def test_the_search_compiles_only_the_configs_it_names(monkeypatch):
    from dropin_kernels import matmul_kernel

    monkeypatch.setenv("TRITON_DIST_AUTOTUNE_SEARCH_FROM", "48")
    space = [triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k}, num_warps=w, num_stages=s)
             for m in (32, 64, 128) for n in (32, 64, 128) for k in (32, 64) for w in (4, 8) for s in (2, 3)]
    size = 512
    a = torch.randn(size, size, device=DEVICE, dtype=torch.float16)
    b = torch.randn(size, size, device=DEVICE, dtype=torch.float16)
    c = torch.empty(size, size, device=DEVICE, dtype=torch.float16)
    kernel = dropin.autotune(configs=space, key=["M", "N", "K"])(matmul_kernel)
    kernel[lambda meta: (size // meta["BLOCK_M"], size // meta["BLOCK_N"])](a, b, c, size, size, size)
    torch.testing.assert_close(c, (a.float() @ b.float()).half(), atol=0.5, rtol=0.05)
    entry = dropin.timelines()[-1]
    assert entry["kernel"] == "matmul_kernel" and entry["strategy"] == "search" and entry["configs"] == 72
    assert 0 < entry["measured"] < entry["configs"] and entry["compiled"] < entry["configs"]


def test_the_drop_in_tells_the_strategy_which_configs_compiled_and_how_long_each_took(monkeypatch):
    # Each compile's seconds reach the engine (TuningRequest::prepared), which shapes the
    # search's rounds by them. Triton's interpreter compiles nothing, so a compile here is a
    # 20 ms sleep on the drop-in's executor, where Triton's AsyncCompileMode would queue one.
    import time

    import compile_seen_strategy
    from disttune import _triton_compile

    def compile_by_sleeping(kernel, configs, args, kwargs, executor, indices=None):
        for index in indices:
            executor.submit(lambda: time.sleep(0.02)).result()
        return {}

    compile_seen_strategy.seen.clear()
    monkeypatch.setattr(_triton_compile, "start_compiles", compile_by_sleeping)
    monkeypatch.setenv("TRITON_DIST_AUTOTUNE_STRATEGY", compile_seen_strategy.NAME)
    x, y, seen_block = tensors()
    kernel = dropin.autotune(configs=configs(), key=["n"])(add_kernel)
    kernel[grid_of(N)](x, y, seen_block, N)
    seen = compile_seen_strategy.seen
    assert len(seen) == 1
    assert [prepared for prepared, _ in seen[0]] == [True, True, False, False]
    assert all(seconds >= 0.02 for _, seconds in seen[0][:2])


def test_a_config_tritons_cache_already_held_stands_compiled(monkeypatch):
    # start_compiles hands back the compiled kernel itself when Triton's cache held it: no
    # compile runs on the pool, so none reports its seconds; the engine is still told it is
    # prepared (0 s: no compile time to learn from), not that it is compiling.
    from disttune import _resources, _triton_compile

    def held_by_tritons_cache(kernel, configs, args, kwargs, executor, indices=None):
        return {index: object() for index in indices}  # a CompiledKernel has no result()

    monkeypatch.setattr(_triton_compile, "start_compiles", held_by_tritons_cache)
    configs = [triton.Config({"BLOCK": 32}), triton.Config({"BLOCK": 64})]
    compiles = _triton_compile.KernelCompiles(None, configs, (), {}, _resources.Unrunnable().of(str, ()), (),
                                              longest_first=True)
    assert compiles.prepare([], [0]) == []
    assert compiles.prepared(0) == 0.0
    assert compiles.prepared(1) is None  # never named
