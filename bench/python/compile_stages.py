"""Where a Triton compile's time goes, config by config, for every autotuned kernel an op launches:
first the compile of each config is captured (nothing compiles or launches), then each is
compiled alone through Triton 3.6's stages (AST->TTIR codegen, TTIR, TTGIR, LLIR, PTX, ptxas)
with each stage's CPU seconds (ptxas's included) and wall seconds, the share of the GIL it
leaves to another thread (--gil), and a digest of its output, so configs that compile to the
same TTGIR or the same binary show.

    python bench/python/compile_stages.py [--op fla.chunk_gla] [--out stages.json] [--gil] [--wheels .whl]

Needs a GPU for the op's tensors (the libraries installed from --wheels as real_libs.py does);
the compiles target the current device, one at a time. Prints one JSON line per config as it
compiles, then a table per kernel (CPU seconds; `shared`: were what configs have in common
compiled once).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import resource
import sys
import threading
import time
from typing import Any, Callable, Iterator

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

STAGES = ("ast", "ttir", "ttgir", "llir", "ptx", "cubin")


@contextlib.contextmanager
def captured_compiles() -> Iterator[list[dict]]:
    """While open, every Triton autotuner's run hands each of its configs to the JIT without
    tuning, and the JIT records the compile it would make (its ASTSource's parts and options)
    instead of compiling or launching: the op runs through, doing no GPU work."""
    from triton.runtime.autotuner import Autotuner
    from triton.runtime.jit import JITFunction

    compiles: list[dict] = []
    tuning: dict = {}

    def run(self, *args, **kwargs):
        kwargs.pop("warmup", None)
        kwargs.pop("grid", None)
        self.nargs = dict(zip(self.arg_names, args))
        configs = self.prune_configs(kwargs)  # as the drop-in tunes them
        for index, config in enumerate(configs):
            tuning.update(kernel=self.fn.__name__, config=index, configs=len(configs),
                          config_text=str(config), fn=self.fn)
            self.fn.run(*args, grid=None, warmup=True, **{**kwargs, **config.all_kwargs()})
        tuning.clear()

    def do_compile(self, key, signature, device, constexprs, options, attrs, warmup):
        if tuning:
            compiles.append(dict(tuning, signature=signature, constexprs=constexprs, attrs=attrs,
                                 options=dict(options.__dict__)))
        return None  # nothing compiled: the launch returns without running

    saved = Autotuner.run, JITFunction._do_compile
    Autotuner.run, JITFunction._do_compile = run, do_compile
    try:
        yield compiles
    finally:
        Autotuner.run, JITFunction._do_compile = saved


def distinct(compiles: list[dict]) -> list[dict]:
    """The compiles of `compiles` that differ (a later key of a kernel often repeats one)."""
    from triton.compiler import ASTSource

    seen: set = set()
    kept = []
    for compile_spec in compiles:
        source = ASTSource(compile_spec["fn"], compile_spec["signature"], compile_spec["constexprs"],
                           compile_spec["attrs"])
        identity = (source.hash(), json.dumps(compile_spec["options"], sort_keys=True, default=str))
        if identity not in seen:
            seen.add(identity)
            kept.append(compile_spec)
    return kept


class GilTicker:
    """A thread that counts in pure Python: the ticks it makes while a stage runs, against its
    ticks while the main thread sleeps, say how much of the GIL the stage left it (near 1: the
    stage released it; near 0.5 or below: the stage held it)."""

    def __init__(self) -> None:
        self.ticks = 0
        self._running = True
        self._thread = threading.Thread(target=self._count, daemon=True)
        self._thread.start()
        self.idle_rate = self._rate(lambda: time.sleep(0.2))

    def _count(self) -> None:
        while self._running:
            self.ticks += 1

    def _rate(self, work: Callable[[], Any]) -> float:
        ticks, began = self.ticks, time.perf_counter()
        work()
        return (self.ticks - ticks) / max(time.perf_counter() - began, 1e-9)

    def share(self, work: Callable[[], Any]) -> tuple[Any, float]:
        result: list = []
        rate = self._rate(lambda: result.append(work()))
        return result[0], rate / self.idle_rate

    def stop(self) -> None:
        self._running = False
        self._thread.join()


def digest(module: Any) -> str:
    text = module if isinstance(module, (str, bytes)) else module.str_nodebug()
    return hashlib.sha256(text if isinstance(text, bytes) else text.encode()).hexdigest()[:16]


def cpu_seconds() -> float:
    """This thread's CPU seconds and those of the finished child processes (ptxas): a stage's cost
    that other processes on a busy host do not inflate, as they do its wall time."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.thread_time() + children.ru_utime + children.ru_stime


def compile_stages(compile_spec: dict, ticker: GilTicker | None) -> dict:
    """Compiles one captured compile through each of Triton's stages, as triton.compile does (no
    cache), and returns each stage's seconds, GIL share (with a ticker) and output digest."""
    from triton._C.libtriton import ir
    from triton.compiler import ASTSource, make_backend
    from triton.runtime.driver import driver

    target = driver.active.get_current_target()
    backend = make_backend(target)
    source = ASTSource(compile_spec["fn"], compile_spec["signature"], compile_spec["constexprs"],
                       compile_spec["attrs"])
    options = backend.parse_options(compile_spec["options"])
    stages: dict = {}
    backend.add_stages(stages, options, source.language)
    context = ir.context()
    ir.load_dialects(context)
    backend.load_dialects(context)
    metadata = {"hash": source.hash(), "target": target, **options.__dict__}
    steps = [("ast", lambda _: source.make_ir(target, options, backend.get_codegen_implementation(options),
                                             backend.get_module_map(), context))]
    steps += [(name, lambda module, stage=stage: stage(module, metadata)) for name, stage in stages.items()]
    seconds, wall, shares, digests = {}, {}, {}, {}
    module = None
    for name, step in steps:
        began, began_cpu = time.perf_counter(), cpu_seconds()
        if ticker is None:
            module = step(module)
        else:
            module, shares[name] = ticker.share(lambda: step(module))
        seconds[name] = cpu_seconds() - began_cpu
        wall[name] = time.perf_counter() - began
        if name != "ast":
            digests[name] = digest(module)
    row = {"kernel": compile_spec["kernel"], "config": compile_spec["config"], "configs": compile_spec["configs"],
           "config_text": compile_spec["config_text"], "num_warps": options.num_warps,
           "num_stages": options.num_stages, "seconds": seconds, "wall_seconds": wall, "digest": digests,
           "shared_bytes": metadata.get("shared")}
    if shares:
        row["gil_share"] = shares
    return row


def kernel_table(rows: list[dict]) -> str:
    """Per kernel: configs, distinct TTIR / TTGIR / cubins, CPU seconds per stage summed, and the
    seconds were what configs have in common compiled once (`shared_seconds`)."""
    kernels: dict[str, list[dict]] = {}
    for row in rows:
        kernels.setdefault(row["kernel"], []).append(row)
    lines = ["| kernel | configs | TTIR | TTGIR | cubins | " + " | ".join(STAGES) + " | all | shared |",
             "|---" * (len(STAGES) + 7) + "|"]
    totals = [0.0] * (len(STAGES) + 2)
    for name, kernel_rows in kernels.items():
        per_stage = [sum(r["seconds"][s] for r in kernel_rows) for s in STAGES]
        distinct_counts = [len({r["digest"][s] for r in kernel_rows}) for s in ("ttir", "ttgir", "cubin")]
        cells = per_stage + [sum(per_stage), shared_seconds(kernel_rows)]
        totals = [t + c for t, c in zip(totals, cells)]
        lines.append(f"| {name} | {len(kernel_rows)} | " + " | ".join(map(str, distinct_counts)) + " | "
                     + " | ".join(f"{c:.2f}" for c in cells) + " |")
    lines.append(f"| all | {len(rows)} | | | | " + " | ".join(f"{c:.2f}" for c in totals) + " |")
    return "\n".join(lines)


def shared_seconds(kernel_rows: list[dict]) -> float:
    """The kernel's compile seconds were each stage's output made once per distinct input:
    codegen and TTIR once per distinct TTIR and num_warps (codegen may read num_warps:
    tl.extra.cuda.num_warps()), TTGIR per config, LLIR, PTX and ptxas once per distinct TTGIR."""
    by_ttir: dict[tuple, dict] = {}
    by_ttgir: dict[str, dict] = {}
    for row in kernel_rows:
        by_ttir.setdefault((row["digest"]["ttir"], row["num_warps"]), row)
        by_ttgir.setdefault(row["digest"]["ttgir"], row)
    return (sum(r["seconds"]["ast"] + r["seconds"]["ttir"] for r in by_ttir.values())
            + sum(r["seconds"]["ttgir"] for r in kernel_rows)
            + sum(r["seconds"]["llir"] + r["seconds"]["ptx"] + r["seconds"]["cubin"] for r in by_ttgir.values()))


def measure(op: Callable[[], Any], out_path: str | None, gil: bool) -> list[dict]:
    with captured_compiles() as compiles:
        op()
    specs = distinct(compiles)
    print(f"{len(compiles)} compiles captured, {len(specs)} distinct", file=sys.stderr)
    ticker = GilTicker() if gil else None
    rows = []
    try:
        for spec in specs:
            rows.append(compile_stages(spec, ticker))
            print(json.dumps(rows[-1]), flush=True)
    finally:
        if ticker is not None:
            ticker.stop()
    if out_path:
        with open(out_path, "w") as out:
            json.dump(rows, out)
    print(kernel_table(rows))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--op", default="fla.chunk_gla", help="an op of real_libs.py")
    parser.add_argument("--out", help="write every config's row here (JSON)")
    parser.add_argument("--gil", action="store_true", help="also measure each stage's GIL share")
    parser.add_argument("--wheels", default=os.path.join(os.path.dirname(os.path.dirname(HERE)), ".whl"))
    args = parser.parse_args()
    import real_libs  # noqa: E402  (beside this file)

    sys.path.insert(0, real_libs.install_wheels(args.wheels))
    measure(real_libs.OPS[args.op](), args.out, args.gil)


if __name__ == "__main__":
    main()
