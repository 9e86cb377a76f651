"""Contextual autotuning (the spec's ``triton_dist.autotuner.contextual_autotune``) on the
C++ contextual engine.

    @contextual_autotune(is_dist=False, n_repeat=5, n_warmup=3)
    def run_scale(x, alpha):
        scale_kernel[grid](x, y, alpha, x.numel())   # a triton.autotune kernel
        ...

The decorated function is called again and again while the ``triton.autotune`` kernels it
launches are tuned inside it, one warm-up or timed launch per call; a last call runs every
kernel with its best config, and its result is returned. Afterwards each kernel's
``best_config`` is set and its ``cache`` holds the choice.
"""

from __future__ import annotations

import functools
import os
from typing import Any, Callable, Optional

from disttune import _core, _ranks, _timing, _triton_hook

__all__ = ["contextual_autotune", "ContextualFunction"]


class ContextualFunction:
    """An outer function whose triton.autotune kernels are tuned in its real context."""

    def __init__(
        self,
        fn: Callable,
        *,
        is_dist: bool,
        n_repeat: int,
        n_warmup: int,
        statistic: str,
        flush_l2: bool,
        compile_threads: int,
        collective_timeout_s: Optional[float],
        log_dir: Optional[str],
        split_across_ranks: bool = False,
    ) -> None:
        if not callable(fn):
            raise TypeError("disttune: contextual_autotune decorates a callable")
        self.fn = fn
        self.name = fn.__name__
        self._options = dict(
            is_dist=is_dist,
            n_warmup=n_warmup,
            n_repeat=n_repeat,
            statistic=statistic,
            collective_timeout_s=collective_timeout_s,
            log_dir=log_dir,
        )
        self._flush_l2 = flush_l2
        self._compile_threads = compile_threads
        # Check the settings now (the engine validates them) rather than at the first call.
        _core.ContextualAutotuner(self.name, **{**self._options, "is_dist": False})
        if is_dist and split_across_ranks:
            # Refused by the engine: every rank must run the same config at the same time.
            _core.ContextualAutotuner(self.name, is_dist=True, split_across_ranks=True)
        self._tuners: dict[Any, Any] = {}
        self.last_tuner: Optional[Any] = None

    def _tuner(self, args: tuple, kwargs: dict) -> Any:
        device = _timing.device_of(args, kwargs)
        identity, timer = _timing.timer_for(device, _timing.TimingOptions(flush_l2=self._flush_l2))
        tuner = self._tuners.get(identity)
        if tuner is None:
            communicator = None
            if self._options["is_dist"]:
                group = _ranks.default_group()
                if group is None:
                    raise RuntimeError(
                        f"disttune: contextual function '{self.name}' has is_dist=True but "
                        "torch.distributed is not initialised with more than one rank"
                    )
                communicator = _ranks.communicator_for(group)
            tuner = _core.ContextualAutotuner(
                self.name, timer=timer, communicator=communicator, **self._options
            )
            self._tuners[identity] = tuner
        return tuner

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        _triton_hook.install()
        tuner = self._tuner(args, kwargs)
        session = _triton_hook.Session(self.name, tuner, self._compile_threads)
        _triton_hook.begin(session)
        result: list[Any] = []

        def outer() -> None:
            result.clear()
            result.append(self.fn(*args, **kwargs))

        try:
            tuner.run(outer)
            session.publish_all()
        finally:
            _triton_hook.end(session)
        self.last_tuner = tuner
        return result[0]


def contextual_autotune(
    is_dist: bool = False,
    n_repeat: int = 5,
    n_warmup: int = 3,
    *,
    statistic: str = "mean",
    flush_l2: bool = True,
    compile_threads: int = min(32, os.cpu_count() or 1),
    collective_timeout_s: Optional[float] = None,
    log_dir: Optional[str] = None,
    split_across_ranks: bool = False,
) -> Callable[[Callable], ContextualFunction]:
    """Tunes the triton.autotune kernels launched inside the decorated function, in context.

    `n_warmup` untimed and `n_repeat` timed launches per candidate config, summarised by
    `statistic` (the spec's mean); `is_dist=True` takes each config's time as the MAX over
    the ranks of torch's default WORLD group. All candidate configs of a kernel are compiled
    concurrently (`compile_threads`) before it is timed; `flush_l2` clears the device cache
    before each timed launch. Logs go to `<log_dir or ./.autotune_logs>/rank-<rank>.log`.
    One contextual call may be active per process: nesting or concurrent use raises
    ContextualRunActive. `split_across_ranks=True` with `is_dist=True` is refused (ValueError):
    rank-split tuning is for function-level `autotune` of launchers that do not communicate.
    """

    def decorate(fn: Callable) -> ContextualFunction:
        contextual = ContextualFunction(
            fn,
            is_dist=is_dist,
            n_repeat=n_repeat,
            n_warmup=n_warmup,
            statistic=statistic,
            flush_l2=flush_l2,
            compile_threads=compile_threads,
            collective_timeout_s=collective_timeout_s,
            log_dir=log_dir,
            split_across_ranks=split_across_ranks,
        )
        functools.update_wrapper(contextual, fn)
        return contextual

    return decorate
