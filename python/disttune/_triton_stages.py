"""One binary per TTGIR in a tuning: configs of one tuning that reach the same TTGIR (variants by
num_stages of a kernel whose loops Triton does not pipeline) compile the stages after it (LLIR,
PTX, ptxas: about three quarters of a compile) once, through Triton's add_stages_inspection_hook."""

from __future__ import annotations

import hashlib
import threading
from typing import Any, Callable, Optional

# Triton 3.6's stages after TTGIR, each a function of its input text and the options but
# num_stages (read by the TTGIR stage only), writing only what it derives into the metadata.
LATER_STAGES = ("llir", "ptx", "cubin")

_scope = threading.local()  # .memo: the StageMemo of the tuning this compile thread compiles for
_install_lock = threading.Lock()
_installed = False


class _Made:
    """A stage's output for one input, and what it wrote into the metadata; `done` is set once
    either is known, or the stage raised (output None)."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.output: Any = None
        self.metadata: dict = {}


class StageMemo:
    """What the stages after TTGIR made in one tuning, by stage, input and options but num_stages:
    a compile whose stage input was already seen takes that output (waiting while it is made)
    instead of running the stage. A stage that raised is run again by the next compile that
    reaches it. `reused` counts the stage runs saved."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._made: dict[tuple, _Made] = {}
        self.reused = 0

    def run(self, name: str, stage: Callable[[Any, dict], Any], source: Any, metadata: dict,
            options_key: str) -> Any:
        text = source if isinstance(source, bytes) else str(source).encode()
        key = (name, options_key, hashlib.sha256(text).digest())
        with self._lock:
            made = self._made.get(key)
            first = made is None
            if first:
                made = self._made[key] = _Made()
        if not first:
            made.done.wait()
            if made.output is not None:
                metadata.update(made.metadata)
                with self._lock:
                    self.reused += 1
                return made.output
            return stage(source, metadata)
        before = dict(metadata)
        try:
            made.output = stage(source, metadata)
            made.metadata = {k: v for k, v in metadata.items() if k not in before or before[k] != v}
        except BaseException:
            with self._lock:
                del self._made[key]
            raise
        finally:
            made.done.set()
        return made.output


def _options_key(options: Any) -> str:
    return repr(sorted((name, repr(value)) for name, value in vars(options).items() if name != "num_stages"))


def install() -> None:
    """Puts the memo's hook in Triton's knobs.runtime.add_stages_inspection_hook once per
    process (calling the hook that was there first); it acts only in compiles run `within` a
    memo, and leaves every other compile's stages as they are."""
    global _installed
    with _install_lock:
        if _installed:
            return
        from triton import knobs

        earlier = knobs.runtime.add_stages_inspection_hook

        def hook(backend: Any, stages: dict, options: Any, language: Any, capability: Any) -> None:
            if earlier is not None:
                earlier(backend, stages, options, language, capability)
            memo: Optional[StageMemo] = getattr(_scope, "memo", None)
            if memo is None:
                return
            key = _options_key(options)
            for name in LATER_STAGES:
                if name in stages:
                    stages[name] = (lambda source, metadata, name=name, stage=stages[name]:
                                    memo.run(name, stage, source, metadata, key))

        knobs.runtime.add_stages_inspection_hook = hook
        _installed = True


def within(memo: StageMemo, compile_fn: Callable[[], Any]) -> Any:
    """compile_fn() on this thread with its Triton compiles sharing `memo`."""
    saved = getattr(_scope, "memo", None)
    _scope.memo = memo
    try:
        return compile_fn()
    finally:
        _scope.memo = saved


def stage_variants_last(configs: list, indices: list[int]) -> list[int]:
    """`indices` with each config that differs from an earlier one of them only in num_stages
    moved after the others, in their order: those most likely to reach a TTGIR already being
    compiled then find its later stages done or under way."""
    first, later, seen = [], [], set()
    for index in indices:
        config = configs[index]
        group = (repr(sorted(config.kwargs.items())), config.num_warps, config.num_ctas,
                 getattr(config, "maxnreg", None), id(config.pre_hook))
        (later if group in seen else first).append(index)
        seen.add(group)
    return first + later
