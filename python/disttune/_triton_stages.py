"""What the compiles of one tuning share, made once: configs that reach the same TTGIR (variants by
num_stages of a kernel whose loops Triton does not pipeline) run the stages after it (LLIR, PTX,
ptxas: about four fifths of a compile) once, through Triton's add_stages_inspection_hook, and
variants by num_stages share the codegen (AST to TTIR: the part of a compile that holds the GIL)."""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
from typing import Any, Callable, Optional

# Triton 3.6's CUDA stages after TTGIR, each a function of its input text and the options but
# num_stages (read by the TTGIR stage only), writing only what it derives into the metadata.
# Other backends' compiles are left as they are.
LATER_STAGES = ("llir", "ptx", "cubin")
BACKEND = "cuda"

_scope = threading.local()  # .memo: the StageMemo of the tuning this compile thread compiles for
_install_lock = threading.Lock()
_installed = False


class _Made:
    """What the first compile to reach a step shares with the others, once `done` is set (None:
    the step raised, and the next compile to reach it runs it again)."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.shared: Any = None


class StageMemo:
    """What the compiles of one tuning made that others of it can take, by step, input and
    options but num_stages: the codegen's TTIR (for the same source, specialisation and options,
    so between num_stages variants) and the output of each stage after TTGIR (with what it wrote
    into the metadata). A compile whose step was already reached takes that (waiting while it
    is made) instead of running it. `reused` counts the steps saved."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._made: dict[tuple, _Made] = {}
        self.reused = 0

    def _once(self, key: tuple, make: Callable[[], tuple[Any, Any]]) -> tuple[Any, Any]:
        """(make()'s result, None) for the first compile that reaches `key`, which keeps what
        make() returned to share; (None, that) for the later ones."""
        with self._lock:
            made = self._made.get(key)
            first = made is None
            if first:
                made = self._made[key] = _Made()
        if not first:
            made.done.wait()
            if made.shared is None:
                return make()[0], None
            with self._lock:
                self.reused += 1
            return None, made.shared
        try:
            result, made.shared = make()
        except BaseException:
            with self._lock:
                del self._made[key]
            raise
        finally:
            made.done.set()
        return result, None

    def run(self, name: str, stage: Callable[[Any, dict], Any], source: Any, metadata: dict,
            options_key: str) -> Any:
        """stage(source, metadata), or what it made for the same input and options."""
        text = source if isinstance(source, bytes) else str(source).encode()

        def make() -> tuple[Any, Any]:
            before = dict(metadata)
            output = stage(source, metadata)
            return output, (output, {k: v for k, v in metadata.items() if k not in before or before[k] != v})

        output, shared = self._once((name, options_key, hashlib.sha256(text).digest()), make)
        if shared is None:
            return output
        metadata.update(shared[1])
        return shared[0]

    def codegen(self, make_ir: Callable[[], Any], source_hash: str, target: Any, options: Any,
                context: Any) -> Any:
        """make_ir() (Triton's AST to TTIR), or the TTIR it made for the same source and options,
        parsed into `context`."""

        def make() -> tuple[Any, Any]:
            module = make_ir()
            return module, str(module)

        module, text = self._once(("ast", source_hash, repr(target), _options_key(options)), make)
        return module if text is None else _parsed(text, context)


def _parsed(text: str, context: Any) -> Any:
    """The module of TTIR `text` in `context`, as Triton reads an IR file."""
    from triton._C.libtriton import ir

    with tempfile.NamedTemporaryFile("w", suffix=".ttir", delete=False) as file:
        file.write(text)
    try:
        module = ir.parse_mlir_module(file.name, context)
    finally:
        os.unlink(file.name)
    module.context = context  # the module keeps its context alive, as IRSource's does
    return module


def _options_key(options: Any) -> str:
    return repr(sorted((name, repr(value)) for name, value in vars(options).items() if name != "num_stages"))


def install() -> None:
    """Puts the memo's hooks into Triton once per process: a hook in
    knobs.runtime.add_stages_inspection_hook (calling the one that was there first) and a
    wrapper of ASTSource.make_ir. Both act only in CUDA compiles run `within` a memo, and leave
    every other compile as it is."""
    global _installed
    with _install_lock:
        if _installed:
            return
        from triton import knobs
        from triton.compiler import ASTSource

        earlier = knobs.runtime.add_stages_inspection_hook

        def hook(backend: Any, stages: dict, options: Any, language: Any, capability: Any) -> None:
            if earlier is not None:
                earlier(backend, stages, options, language, capability)
            memo: Optional[StageMemo] = getattr(_scope, "memo", None)
            if memo is None or backend.target.backend != BACKEND:
                return
            key = _options_key(options)
            for name in LATER_STAGES:
                if name in stages:
                    stages[name] = (lambda source, metadata, name=name, stage=stages[name]:
                                    memo.run(name, stage, source, metadata, key))

        make_ir = ASTSource.make_ir

        def shared_make_ir(self: Any, target: Any, options: Any, codegen_fns: dict, module_map: dict,
                           context: Any) -> Any:
            memo: Optional[StageMemo] = getattr(_scope, "memo", None)
            if memo is None or target.backend != BACKEND:
                return make_ir(self, target, options, codegen_fns, module_map, context)
            return memo.codegen(lambda: make_ir(self, target, options, codegen_fns, module_map, context),
                                self.hash(), target, options, context)

        knobs.runtime.add_stages_inspection_hook = hook
        ASTSource.make_ir = shared_make_ir
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
