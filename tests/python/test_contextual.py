"""contextual_autotune driving real triton.autotune kernels (Triton's interpreter on CPU)."""

import json

import pytest
import torch

triton = pytest.importorskip("triton")

from disttune import _core  # noqa: E402
from disttune.autotuner import contextual_autotune  # noqa: E402

from kernels import BLOCK, increment_kernel, interrupted_scale_kernel, scale_kernel, sum_kernel  # noqa: E402

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


@pytest.fixture(autouse=True)
def fresh_kernels():
    for kernel in (scale_kernel, sum_kernel, increment_kernel):
        kernel.cache.clear()
        kernel.best_config = None
        if hasattr(kernel, "_disttune_state"):
            kernel._disttune_state.clear()


def discarded_runs(timer) -> int:
    """Runs a CUDA timer discarded in its last tuning (taken again: more outer runs); 0 on CPU."""
    if timer is None:
        return 0
    clocks = json.loads(timer.clocks())
    return clocks.get("gapped_runs", 0) + clocks.get("discarded_runs", 0)


def test_the_spec_example():
    calls = []
    timer = _core.CudaTimer() if DEVICE == "cuda" else None  # its clocks count the runs taken again

    @contextual_autotune(is_dist=False, n_repeat=3, n_warmup=2, timer=timer)
    def run_scale(x, alpha):
        calls.append(1)
        y = torch.empty_like(x)
        grid = (triton.cdiv(x.numel(), BLOCK),)
        scale_kernel[grid](x, y, alpha, x.numel())
        return y

    x = torch.randn(1 << 10, device=DEVICE, dtype=torch.float32)
    y = run_scale(x, 3.0)
    torch.testing.assert_close(y, 3.0 * x, atol=1e-5, rtol=1e-4)
    assert scale_kernel.best_config is not None
    assert scale_kernel.best_config in scale_kernel.configs
    assert list(scale_kernel.cache.values()) == [scale_kernel.best_config]
    # 2 configs x (2 warm-up + 3 timed) launches, one per outer run, then the final run; on a
    # GPU, a timed run whose pair held a host stall is discarded and taken again.
    assert len(calls) == run_scale.last_tuner.outer_runs
    if discarded_runs(timer) == 0:
        assert len(calls) == 2 * (2 + 3) + 1
    else:
        assert len(calls) >= 2 * (2 + 3) + 1 + discarded_runs(timer)
    choice = scale_kernel._disttune_state.last_choice()
    assert len(choice.candidates) == 2 and all(len(c.samples) == 3 for c in choice.candidates)

    calls.clear()
    torch.testing.assert_close(run_scale(x, 2.0), 2.0 * x)
    assert len(calls) == 1  # the key is cached: no tuning

    # Outside a contextual call the hook is inert: Triton's own run uses the cached choice.
    y = torch.empty_like(x)
    scale_kernel[(triton.cdiv(x.numel(), BLOCK),)](x, y, 4.0, x.numel())
    torch.testing.assert_close(y, 4.0 * x)


def test_two_kernels_prune_and_reset_to_zero():
    @contextual_autotune(n_repeat=2, n_warmup=1)
    def scale_then_sum(x, alpha):
        y = torch.empty_like(x)
        scale_kernel[(triton.cdiv(x.numel(), BLOCK),)](x, y, alpha, x.numel())
        out = torch.zeros(1, device=x.device, dtype=x.dtype)
        sum_kernel[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)](y, out, x.numel())
        return out

    x = torch.ones(1000, device=DEVICE)
    out = scale_then_sum(x, 2.0)
    assert out.item() == pytest.approx(2000.0)
    assert scale_kernel.best_config is not None and sum_kernel.best_config is not None
    assert sum_kernel.best_config.kwargs["BLOCK"] <= 128  # prune_configs_by honoured
    assert len(sum_kernel._disttune_state.last_choice().candidates) == 3


def test_restore_value_undoes_tuning_launches_only():
    @contextual_autotune(n_repeat=2, n_warmup=1)
    def increment(x):
        increment_kernel[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)](x, x.numel())

    x = torch.zeros(100, device=DEVICE)
    increment(x)
    # Every tuning launch was restored; the final run's launch stays.
    torch.testing.assert_close(x, torch.ones(100, device=DEVICE))


def test_nesting_is_an_error():
    @contextual_autotune()
    def inner(x):
        return x

    @contextual_autotune()
    def outer(x):
        return inner(x)

    with pytest.raises(_core.ContextualRunActive, match="one active"):
        outer(torch.ones(1))
    # The refused call changed nothing: both can run afterwards.
    assert inner(3) == 3


def test_bad_settings_are_errors():
    with pytest.raises(ValueError):
        contextual_autotune(n_repeat=0)(lambda x: x)
    with pytest.raises(RuntimeError, match="is_dist"):
        contextual_autotune(is_dist=True)(lambda x: x)(1)


def test_log_file_per_rank(tmp_path):
    @contextual_autotune(n_repeat=1, n_warmup=1, log_dir=str(tmp_path / "logs"))
    def run_scale(x):
        y = torch.empty_like(x)
        scale_kernel[(triton.cdiv(x.numel(), BLOCK),)](x, y, 1.0, x.numel())
        return y

    run_scale(torch.ones(64, device=DEVICE))
    assert (tmp_path / "logs" / "rank-0.log").read_text()
    assert run_scale.last_tuner.log_path == tmp_path / "logs" / "rank-0.log"


def test_keyboard_interrupt_ends_the_call():
    @contextual_autotune(n_repeat=2, n_warmup=1)
    def run_scale(x):
        y = torch.empty_like(x)
        interrupted_scale_kernel[(triton.cdiv(x.numel(), BLOCK),)](x, y, 2.0, x.numel())
        return y

    with pytest.raises(KeyboardInterrupt):
        run_scale(torch.ones(64, device=DEVICE))
    assert _core.ContextualAutotuner.active() is None
    assert getattr(interrupted_scale_kernel, "best_config", None) is None


def test_a_calls_compiles_not_started_are_dropped_and_the_shared_pool_serves_on():
    # A contextual call queues its compiles on the process's one pool; when it ends, those
    # not started are dropped, the one running finishes, and the pool serves later work.
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from disttune._triton_compile import Cancellable

    release = threading.Event()
    pool = ThreadPoolExecutor(max_workers=1)
    call = Cancellable(pool)
    running = call.submit(lambda: release.wait(30))
    queued = [call.submit(lambda: "compiled") for _ in range(3)]
    call.cancel()
    release.set()
    assert running.result(timeout=30) is True
    assert all(future.cancelled() for future in queued)
    assert pool.submit(lambda: "later").result(timeout=30) == "later"
    pool.shutdown()


@pytest.mark.parametrize("threads", [0, -1, 2.5, True, "8"])
def test_compile_threads_is_none_or_a_positive_int(threads):
    def outer():
        return None

    with pytest.raises(_core.InvalidSetting, match="compile_threads of 'outer' must be None or an int >= 1"):
        contextual_autotune(compile_threads=threads)(outer)


def test_compile_threads_may_name_a_pool_of_the_calls_own():
    @contextual_autotune(compile_threads=2)
    def outer():
        return 1

    assert outer() == 1
