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
import inspect
from typing import Any, Callable, Generic, Mapping, Optional

from disttune import _core, _ranks, _timing, _triton_hook, _triton_setup
from disttune._signatures import P, R
from disttune._strategy_options import strategy_option_texts

__all__ = ["contextual_autotune", "ContextualFunction"]

# The defaults of the engine's options (the binding's one table of them, from C++
# ContextOptions{}); the signature of contextual_autotune() shows them, and a test checks that it does.
_DEFAULTS = _core.contextual_defaults
# The engine options (that table's names) this module sets itself for each tuner;
# contextual_autotune() passes every other one through as given.
_SET_PER_TUNER = ("timer", "communicator")
_ENGINE_OPTIONS = tuple(name for name in _core.contextual_option_names if name not in _SET_PER_TUNER)


class ContextualFunction(Generic[P, R]):
    """An outer function whose triton.autotune kernels are tuned in its real context; called
    with the outer function's own parameters, it returns its result."""

    def __init__(self, fn: Callable[P, R], **options: Any) -> None:
        """`options` are contextual_autotune()'s keyword options: its signature is their one
        definition (names, defaults); an unknown name is a TypeError."""
        chosen = inspect.signature(contextual_autotune).bind(**options)
        chosen.apply_defaults()
        option = chosen.arguments
        if not callable(fn):
            raise _core.NotCallable("disttune: contextual_autotune decorates a callable")
        self.fn = fn
        self.name = fn.__name__
        self._options = {name: option[name] for name in _ENGINE_OPTIONS}
        self._options["strategy_options"] = strategy_option_texts(option["strategy_options"])
        self._timing = _timing.TimingOptions(flush_l2=option["flush_l2"])
        _timing.check_timer_choice(option["timer"], self.name)
        self.timer = option["timer"]
        self._compile_threads = option["compile_threads"]
        if self._compile_threads is not None and (
            isinstance(self._compile_threads, bool) or not isinstance(self._compile_threads, int)
            or self._compile_threads < 1
        ):
            raise _core.InvalidSetting(f"disttune: compile_threads of '{self.name}' must be None or an int >= 1")
        # Check the settings now (the engine validates them) rather than at the first call.
        _core.ContextualAutotuner(self.name, **{**self._options, "is_dist": False})
        if option["is_dist"] and option["split_across_ranks"]:
            # Refused by the engine: every rank must run the same config at the same time.
            _core.ContextualAutotuner(self.name, is_dist=True, split_across_ranks=True)
        self._tuners: dict[Any, Any] = {}
        self.last_tuner: Optional[Any] = None

    def _tuner(self, args: tuple, kwargs: dict) -> Any:
        group = None
        if self._options["is_dist"]:
            group = _ranks.default_group()
            if group is None:
                raise _core.EngineError(
                    f"disttune: contextual function '{self.name}' has is_dist=True but "
                    "torch.distributed is not initialised with more than one rank"
                )
        identity, make_timer = _timing.timer_choice(self.timer, args, kwargs, group, self._timing)
        tuner = self._tuners.get(identity)
        if tuner is None:
            communicator = _ranks.communicator_for(group) if group is not None else None
            tuner = _core.ContextualAutotuner(
                self.name, timer=make_timer(), communicator=communicator, **self._options
            )
            self._tuners[identity] = tuner
        return tuner

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        _triton_hook.install()
        tuner = self._tuner(args, kwargs)
        session = _triton_hook.Session(self.name, tuner, self._compile_threads)
        _triton_hook.begin(session)
        result: list[R] = []

        def outer() -> None:
            result.clear()
            result.append(self.fn(*args, **kwargs))

        try:
            tuner.run(outer)
            session.publish_all()
        finally:
            session.close()
            _triton_hook.end(session)
        self.last_tuner = tuner
        return result[0]


def contextual_autotune(
    is_dist: bool = _DEFAULTS["is_dist"],
    n_repeat: int = _DEFAULTS["n_repeat"],
    n_warmup: int = _DEFAULTS["n_warmup"],
    *,
    statistic: str = _DEFAULTS["statistic"],
    flush_l2: bool = True,
    compile_threads: Optional[int] = None,
    collective_timeout_s: Optional[float] = _DEFAULTS["collective_timeout_s"],
    log_dir: Optional[str] = _DEFAULTS["log_dir"],
    timer: Any = None,
    split_across_ranks: bool = _DEFAULTS["split_across_ranks"],
    strategy: str = _DEFAULTS["strategy"],
    strategy_options: Optional[Mapping[str, Any]] = _DEFAULTS["strategy_options"],
) -> Callable[[Callable[P, R]], ContextualFunction[P, R]]:
    """Tunes the triton.autotune kernels launched inside the decorated function, in context.

    `n_warmup` untimed and `n_repeat` timed launches per candidate config, summarised by
    `statistic` (the spec's mean); `is_dist=True` takes each config's time as the MAX over
    the ranks of torch's default WORLD group. A kernel's candidate configs compile in the
    background as the strategy names them (every config, in order, for "exhaustive"; what a
    search measures and its guesses), on the process's one compile pool
    (TRITON_DIST_AUTOTUNE_COMPILE_THREADS threads shared with the drop-in; `compile_threads=N`:
    a pool of N threads for this function's calls; the strategy is told the pool's size), and
    each candidate's first launch waits for its own compile only, so timing overlaps the later
    compiles; a config
    Triton finds out of resources fails before any launch and is skipped for the kernel's
    later keys (docs/python.md, "Compile pipeline"); `flush_l2` clears the device cache
    before each timed launch; `collective_timeout_s` as in autotune() (at least 0.001 s,
    math.inf: none, None: TRITON_DIST_AUTOTUNE_TIMEOUT, else 600). `timer` chooses the timer
    as in tune.autotune (None: it follows where the work runs). Logs go to
    `<log_dir or ./.autotune_logs>/rank-<rank>.log`. Counts are at most 1,000,000; bad
    settings raise disttune.InvalidSetting (a ValueError).
    One contextual call may be active per process: nesting or concurrent use raises
    ContextualRunActive. `split_across_ranks=True` with `is_dist=True` is refused (ValueError):
    rank-split tuning is for function-level `autotune` of launchers that do not communicate.
    `strategy` names the registered strategy of each kernel's tuning (the spec's "exhaustive"
    by default; "search" measures a budgeted fraction of a large space) and `strategy_options`
    its own options, as in autotune().
    """

    options = dict(locals())  # exactly the parameters above, by name

    def decorate(fn: Callable[P, R]) -> ContextualFunction[P, R]:
        contextual = ContextualFunction(fn, **options)
        functools.update_wrapper(contextual, fn)
        _triton_setup.start()  # in the background until the first compile needs it
        return contextual

    return decorate
