"""Conformance of disttune.triton.autotune with triton.autotune (Triton 3.6), written from
triton.autotune's documented behaviour. Every case runs against plain Triton ("triton"), the
drop-in measured by the same do_bench ("dropin") and the drop-in measured by the engine
("engine", where a case asserts no winner). A case marked xfail(strict) for plain Triton is
a documented difference (docs/triton-dropin.md). On the CPU kernels run in Triton's
interpreter; out-of-resources cases need a GPU."""

import pytest
import torch
import triton
import triton.runtime.autotuner

import disttune.triton as dropin
from dropin_kernels import DEVICE, CostBench, MatmulCostBench, add_kernel, bias_kernel, grid_of, matmul_kernel
from dropin_kernels import scaled_add_kernel

# Triton's own decorator (the switch is off in the test process).
TRITON_AUTOTUNE = triton.runtime.autotuner.autotune
assert TRITON_AUTOTUNE is not dropin.autotune, "run the conformance tests with the drop-in switch off"

BLOCKS = (16, 32, 64, 128)
N = 200


class Variant:
    """One autotune under test: `decorate(jit, bench, **options)` decorates a JIT kernel,
    measured by `bench` unless the engine measures."""

    def __init__(self, name):
        self.name = name
        self.autotune = TRITON_AUTOTUNE if name == "triton" else dropin.autotune
        self.costed = name != "engine"

    def decorate(self, jit, bench, **options):
        if self.costed:
            options.setdefault("do_bench", bench)
        return self.autotune(**options)(jit)


@pytest.fixture(params=["triton", "dropin", "engine"])
def variant(request):
    return Variant(request.param)


def differs_in_triton(request, variant, reason):
    """A documented difference: the case holds for the drop-in, not for plain Triton."""
    if variant.name == "triton":
        request.applymarker(pytest.mark.xfail(strict=True, reason=reason))


def configs(blocks=BLOCKS, **options):
    return [triton.Config({"BLOCK": block}, **options) for block in blocks]


def tensors(n=N, dtype=torch.float32):
    x = torch.arange(n, dtype=dtype, device=DEVICE)
    y = torch.ones(n, dtype=dtype, device=DEVICE)
    seen = torch.zeros(2, dtype=torch.int32, device=DEVICE)
    return x, y, seen


def launches(seen):
    return int(seen[1].item())


def test_the_lowest_time_wins_and_is_cached_per_key(variant):
    x, y, seen = tensors()
    bench = CostBench(seen, lambda block: {16: 4.0, 32: 3.0, 64: 1.0, 128: 2.0}[block])
    kernel = variant.decorate(add_kernel, bench, configs=configs(), key=["n"])
    assert isinstance(kernel, triton.runtime.autotuner.Autotuner)
    assert kernel.configs == configs()
    kernel[grid_of(N)](x, y, seen, N)
    key = (N, "torch.float32", "torch.float32", "torch.int32")
    assert list(kernel.cache) == [key]
    assert kernel.best_config in kernel.configs
    assert kernel.cache[key] is kernel.best_config
    if variant.costed:
        assert sorted(bench.blocks) == sorted(BLOCKS)
        assert kernel.best_config.kwargs == {"BLOCK": 64}
    # The same key: no tuning; a new key: one more.
    before = launches(seen)
    kernel[grid_of(N)](x, y, seen, N)
    assert launches(seen) == before + 1
    x2, y2, _ = tensors(N + 1)
    kernel[grid_of(N + 1)](x2, y2, seen, N + 1)
    assert len(kernel.cache) == 2
    assert launches(seen) > before + 2


def test_a_config_put_in_the_cache_is_used_without_tuning(variant):
    x, y, seen = tensors()
    bench = CostBench(seen, lambda block: 1.0)
    kernel = variant.decorate(add_kernel, bench, configs=configs(), key=["n"])
    chosen = kernel.configs[2]
    kernel.cache[(N, "torch.float32", "torch.float32", "torch.int32")] = chosen
    kernel[grid_of(N)](x, y, seen, N)
    assert launches(seen) == 1
    assert int(seen[0].item()) == chosen.kwargs["BLOCK"]
    assert kernel.best_config is chosen
    torch.testing.assert_close(y, 1 + x)


def test_keyword_and_positional_launches_share_the_key(variant):
    x, y, seen = tensors()
    bench = CostBench(seen, lambda block: block)
    kernel = variant.decorate(add_kernel, bench, configs=configs(), key=["n"])
    kernel[grid_of(N)](x, y, seen, N)
    tuned = launches(seen)
    kernel[grid_of(N)](x, y_ptr=y, seen_ptr=seen, n=N)
    kernel[grid_of(N)](x_ptr=x, y_ptr=y, seen_ptr=seen, n=N)
    # Keywords of one dtype in another order: the same key.
    kernel[grid_of(N)](y_ptr=y, x_ptr=x, seen_ptr=seen, n=N)
    assert launches(seen) == tuned + 3
    assert len(kernel.cache) == 1


def test_keyword_order_of_mixed_dtypes_keeps_the_key(request, variant):
    differs_in_triton(request, variant, "Triton 3.6 appends argument dtypes in call order, so "
                      "reordered keywords of different dtypes make a new key and tune again")
    x, y, seen = tensors()
    bench = CostBench(seen, lambda block: block)
    kernel = variant.decorate(add_kernel, bench, configs=configs(), key=["n"])
    kernel[grid_of(N)](x_ptr=x, y_ptr=y, seen_ptr=seen, n=N)
    tuned = launches(seen)
    kernel[grid_of(N)](seen_ptr=seen, y_ptr=y, x_ptr=x, n=N)
    assert launches(seen) == tuned + 1
    assert len(kernel.cache) == 1


def test_hooks_are_called_in_pairs_around_each_benchmarked_run(variant):
    x, y, seen = tensors()
    calls = []

    def pre_hook(kwargs, reset_only=False):
        calls.append(("pre", kwargs["BLOCK"], reset_only))

    def post_hook(kwargs, exception):
        calls.append(("post", kwargs["BLOCK"], exception))

    bench = CostBench(seen, lambda block: block)
    kernel = variant.decorate(add_kernel, bench, configs=configs(), key=["n"], pre_hook=pre_hook,
                              post_hook=post_hook)
    kernel[grid_of(N)](x, y, seen, N)
    *runs, last = calls
    assert last[0] == "pre" and last[2] is True  # the reset before the chosen config's launch
    assert last[1] == kernel.best_config.kwargs["BLOCK"]
    assert len(runs) % 2 == 0
    for pre, post in zip(runs[::2], runs[1::2]):
        assert pre[0] == "pre" and pre[2] is False
        assert post == ("post", pre[1], None)
    assert {pre[1] for pre in runs[::2]} == set(BLOCKS)
    if variant.costed:
        assert len(runs) == 2 * len(BLOCKS)
    # A cached launch calls no kernel hook.
    calls.clear()
    kernel[grid_of(N)](x, y, seen, N)
    assert calls == []


def test_restore_value_puts_inputs_back_after_every_benchmarked_run(variant):
    x, y, seen = tensors()
    bench = CostBench(seen, lambda block: block)
    kernel = variant.decorate(add_kernel, bench, configs=configs(), key=["n"], restore_value=["y_ptr"])
    kernel[grid_of(N)](x, y, seen, N)
    torch.testing.assert_close(y, 1 + x)  # only the final launch added x
    assert launches(seen) > 1
    kernel[grid_of(N)](x, y, seen, N)
    torch.testing.assert_close(y, 1 + 2 * x)


def test_reset_to_zero_zeroes_before_each_benchmarked_run_and_the_chosen_launch(variant):
    x, y, seen = tensors()
    bench = CostBench(seen, lambda block: block)
    kernel = variant.decorate(add_kernel, bench, configs=configs(), key=["n"], reset_to_zero=["y_ptr"])
    kernel[grid_of(N)](x, y, seen, N)
    torch.testing.assert_close(y, x)
    kernel[grid_of(N)](x, y, seen, N)  # cached: nothing is reset
    torch.testing.assert_close(y, 2 * x)


def test_a_none_argument_outside_the_hooks_is_a_launch_argument_and_no_key_part(variant):
    x, y, seen = tensors()
    bench = CostBench(seen, lambda block: block)
    kernel = variant.decorate(bias_kernel, bench, configs=configs(), key=["n"], restore_value=["y_ptr"])
    kernel[grid_of(N)](x, None, y, seen, N)
    torch.testing.assert_close(y, x)
    assert list(kernel.cache) == [(N, "torch.float32", "torch.float32", "torch.int32")]
    b = torch.full((N,), 2.0, device=DEVICE)
    kernel[grid_of(N)](x, b, y, seen, N)
    torch.testing.assert_close(y, x + 2)
    assert len(kernel.cache) == 2


@pytest.mark.parametrize("option", ["reset_to_zero", "restore_value"])
def test_a_none_argument_named_in_reset_or_restore_is_skipped(request, variant, option):
    differs_in_triton(request, variant, "Triton 3.6's hooks call zero_()/clone() on None; newer Triton skips it")
    x, y, seen = tensors()
    bench = CostBench(seen, lambda block: block)
    kernel = variant.decorate(bias_kernel, bench, configs=configs(), key=["n"], **{option: ["b_ptr"]})
    kernel[grid_of(N)](x, None, y, seen, N)
    torch.testing.assert_close(y, x)
    assert len(kernel.cache) == 1


def test_a_fractional_top_k_that_keeps_nothing_keeps_the_model_s_best(request, variant):
    differs_in_triton(request, variant, "Triton 3.6 keeps int(8 * 0.1) = 0 configs; newer Triton keeps one")
    x, y, seen = tensors()
    bench = CostBench(seen, lambda block: block)
    kernel = variant.decorate(add_kernel, bench, configs=configs(EIGHT), key=["n"],
                              prune_configs_by={"perf_model": _model, "top_k": 0.1})
    kernel[grid_of(N)](x, y, seen, N)
    assert kernel.best_config.kwargs["BLOCK"] == 128


def _model(**kwargs):
    return abs(kwargs["BLOCK"] - 128)


EIGHT = (16, 32, 64, 128, 256, 512, 1024, 2048)


@pytest.mark.parametrize(
    "prune, expected",
    [
        ({"perf_model": _model, "top_k": 0.5}, {128, 64, 32, 16}),  # int(8 * 0.5) by the model
        ({"perf_model": _model, "top_k": 2}, {128, 64}),
        ({"perf_model": _model, "top_k": 0.3}, {128, 64}),  # int(8 * 0.3) = 2
        # top_k counts all configs: 4 left by the early prune are not more than int(8 * 0.5).
        ({"perf_model": _model, "top_k": 0.5,
          "early_config_prune": lambda cs, nargs, **kw: [c for c in cs if c.kwargs["BLOCK"] >= 256]},
         {256, 512, 1024, 2048}),
        ({"perf_model": _model, "top_k": 3,
          "early_config_prune": lambda cs, nargs, **kw: [c for c in cs if c.kwargs["BLOCK"] >= 256]},
         {256, 512, 1024}),
        ({"early_config_prune": lambda cs, nargs, **kw: [c for c in cs if nargs["n"] <= c.kwargs["BLOCK"] <= 512]},
         {256, 512}),
    ],
)
def test_pruning_with_a_perf_model_and_top_k(variant, prune, expected):
    x, y, seen = tensors()
    ran = set()

    def pre_hook(kwargs, reset_only=False):
        if not reset_only:
            ran.add(kwargs["BLOCK"])

    bench = CostBench(seen, lambda block: block)
    kernel = variant.decorate(add_kernel, bench, configs=configs(EIGHT), key=["n"], prune_configs_by=prune,
                              pre_hook=pre_hook)
    kernel[grid_of(N)](x, y, seen, N)
    assert ran == expected
    assert kernel.best_config.kwargs["BLOCK"] in expected
    if variant.costed:
        assert kernel.best_config.kwargs["BLOCK"] == min(expected)


def test_top_k_that_is_neither_int_nor_fraction_is_a_type_error(variant):
    x, y, seen = tensors()
    bench = CostBench(seen, lambda block: block)
    kernel = variant.decorate(add_kernel, bench, configs=configs(), key=["n"],
                              prune_configs_by={"perf_model": _model, "top_k": 1.5})
    with pytest.raises(TypeError, match="top_k"):
        kernel[grid_of(N)](x, y, seen, N)


def test_an_early_prune_that_keeps_nothing_is_an_autotuner_error(variant):
    x, y, seen = tensors()
    bench = CostBench(seen, lambda block: block)
    kernel = variant.decorate(add_kernel, bench, configs=configs(), key=["n"],
                              prune_configs_by={"early_config_prune": lambda cs, nargs, **kw: []})
    with pytest.raises(triton.runtime.errors.AutotunerError):
        kernel[grid_of(N)](x, y, seen, N)


def test_a_single_config_is_not_benchmarked(variant):
    x, y, seen = tensors()
    bench = CostBench(seen, lambda block: block)
    kernel = variant.decorate(add_kernel, bench, configs=configs((64,)), key=["n"], reset_to_zero=["y_ptr"])
    kernel[grid_of(N)](x, y, seen, N)
    assert launches(seen) == 1
    assert bench.blocks == []
    assert kernel.cache == {}
    assert kernel.best_config.kwargs == {"BLOCK": 64}
    torch.testing.assert_close(y, 1 + x)  # no benchmark, so no reset


def test_no_configs_means_one_default_config(variant):
    x, y, seen = tensors()
    bench = CostBench(seen, lambda block: block)
    kernel = variant.decorate(add_kernel, bench, configs=[], key=["n"])
    assert len(kernel.configs) == 1 and kernel.configs[0].kwargs == {}
    kernel[grid_of(N)](x, y, seen, N, BLOCK=32)
    assert launches(seen) == 1 and int(seen[0].item()) == 32


def test_a_single_survivor_of_pruning_is_not_benchmarked(request, variant):
    differs_in_triton(request, variant, "Triton 3.6 benchmarks a single config left by pruning")
    x, y, seen = tensors()
    bench = CostBench(seen, lambda block: block)
    kernel = variant.decorate(add_kernel, bench, configs=configs(), key=["n"],
                              prune_configs_by={"early_config_prune": lambda cs, nargs, **kw: cs[1:2]})
    kernel[grid_of(N)](x, y, seen, N)
    assert launches(seen) == 1
    assert kernel.best_config.kwargs == {"BLOCK": 32}
    assert list(kernel.cache.values()) == [kernel.configs[1]]


def test_meta_parameters_given_by_the_launch_and_a_config_conflict(variant):
    x, y, seen = tensors()
    bench = CostBench(seen, lambda block: block)
    kernel = variant.decorate(add_kernel, bench, configs=configs(), key=["n"])
    with pytest.raises(ValueError, match="Conflicting meta-parameters: BLOCK"):
        kernel[grid_of(N)](x, y, seen, N, BLOCK=32)


def test_composes_with_heuristics_inside_and_outside(variant):
    bench_seen = tensors()[2]
    bench = CostBench(bench_seen, lambda block: {16: 2.0, 32: 1.0, 64: 3.0, 128: 4.0}[block])
    inner = variant.decorate(
        triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})(scaled_add_kernel),
        bench, configs=configs(), key=["n"], restore_value=["y_ptr"])
    outer = triton.heuristics({"SCALE": lambda args: 3})(inner)
    for n in (256, 250):
        x, y, seen = tensors(n)
        bench.seen = seen
        outer[grid_of(n)](x, y, seen, n)
        torch.testing.assert_close(y, 1 + 3 * x)
    assert len(inner.cache) == 2
    if variant.costed:
        assert inner.best_config.kwargs == {"BLOCK": 32}


def test_a_config_pre_hook_runs_before_every_launch_of_its_config(variant):
    x, y, seen = tensors()
    hooked = []
    bench = CostBench(seen, lambda block: block)
    space = [triton.Config({"BLOCK": block}, pre_hook=lambda nargs: hooked.append(nargs["BLOCK"]))
             for block in (32, 64)]
    kernel = variant.decorate(add_kernel, bench, configs=space, key=["n"], reset_to_zero=["y_ptr"])
    kernel[grid_of(N)](x, y, seen, N)
    assert set(hooked) == {32, 64}
    chosen = kernel.best_config.kwargs["BLOCK"]
    assert hooked[-1] == chosen
    hooked.clear()
    kernel[grid_of(N)](x, y, seen, N)
    assert hooked == [chosen]


@pytest.mark.skipif(DEVICE == "cpu", reason="Triton's interpreter has no warmup (compile-only) launch: a GPU case")
def test_kernel_warmup_compiles_every_pruned_config(variant):
    x, y, seen = tensors()
    bench = CostBench(seen, lambda block: block)
    kernel = variant.decorate(add_kernel, bench, configs=configs(), key=["n"],
                              prune_configs_by={"early_config_prune": lambda cs, nargs, **kw: cs[:2]})
    compiled = kernel.warmup(x, y, seen, N, grid=(1,))
    assert len(compiled) == 2
    assert launches(seen) == 0


@pytest.mark.skipif(DEVICE == "cpu", reason="Triton's interpreter has no shared-memory limit: a GPU case")
def test_out_of_resources_configs_are_skipped(variant):
    size = 256
    a = torch.randn(size, size, device=DEVICE, dtype=torch.float16)
    b = torch.randn(size, size, device=DEVICE, dtype=torch.float16)
    c = torch.empty(size, size, device=DEVICE, dtype=torch.float16)
    fits = triton.Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}, num_stages=2, num_warps=4)
    # 5 stages of 256x128 and 128x256 fp16 tiles: 640 KiB of shared memory, over any GPU's.
    too_big = triton.Config({"BLOCK_M": 256, "BLOCK_N": 256, "BLOCK_K": 128}, num_stages=5, num_warps=8)
    ran = []

    def pre_hook(kwargs, reset_only=False):
        if not reset_only:
            ran.append(kwargs["BLOCK_M"])

    # The big config would win if it could run.
    bench = MatmulCostBench(lambda: 0.1 if ran[-1] == 256 else 1.0)
    kernel = variant.decorate(matmul_kernel, bench, configs=[too_big, fits], key=["M", "N", "K"], pre_hook=pre_hook)
    grid = lambda meta: (size // meta["BLOCK_M"], size // meta["BLOCK_N"])  # noqa: E731
    kernel[grid](a, b, c, size, size, size)
    assert kernel.best_config is fits
    torch.testing.assert_close(c, (a.float() @ b.float()).half(), atol=0.5, rtol=0.05)
    # Triton launches it to find out; the drop-in's prepare finds it out of resources when
    # compiled, before any launch (docs/triton-dropin.md).
    assert (256 in ran) == (variant.name == "triton")
    if variant.name != "triton":
        assert "out of resources" in kernel.last_report.candidates[0].error


def test_triton_print_autotuning_reports_each_tuning_once(variant, monkeypatch, capsys):
    monkeypatch.setattr(triton.knobs.autotuning, "print", True)
    x, y, seen = tensors()
    bench = CostBench(seen, lambda block: {16: 4.0, 32: 3.0, 64: 1.0, 128: 2.0}[block])
    kernel = variant.decorate(add_kernel, bench, configs=configs(), key=["n"])
    kernel[grid_of(N)](x, y, seen, N)
    kernel[grid_of(N)](x, y, seen, N)
    out = capsys.readouterr().out
    assert out.count("Triton autotuning for function add_kernel") == 1
    assert f"best config selected: {kernel.best_config};" in out
