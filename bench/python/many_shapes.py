"""Many shapes on one GPU (issue 23): 16 buckets of an fp16 matmul (M 16..8192, N = K = 4096)
over a 384-config space, tuned by a warm-started disttune.sweep against independent tunings
with the same strategy (converge), each checked bucket's choice against an interleaved
oracle. Two variants: sizes as tl.constexpr (every bucket compiles the configs it runs) and
sizes as run-time arguments (binaries shared by the buckets).

    python3 bench/python/many_shapes.py > many_shapes.json      # 6-8 minutes on an H200

Each phase runs in its own process with its own Triton cache and disttune cache directories,
so no phase reuses another's compiled binaries or records. To fit the time, the independent
tunings run on 6 of the 16 buckets (spread over the range; the ones the oracle checks) and
their mean is scaled to 16 buckets (`--independent all`: all 16, about 8 more minutes).
Compiling uses autotune(precompile=..., precompile_threads=16): with the engine's prepare
hook (issue 22), only the candidates a round measures are compiled; the JSON says whether
the hook was there. Prints one JSON object on stdout; progress on stderr.
"""

from __future__ import annotations

import argparse
import functools
import inspect
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = os.path.dirname(os.path.abspath(__file__))
# Per key, from its record's "clocks" (docs/strategies.md, "Clock control").
CLOCK_FIGURES = ("gapped_runs", "host_bound_runs", "lead_ms", "probes", "leads_ms")
BUCKETS = [16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 2048, 3072, 4096, 8192]
CHECKED = [16, 64, 192, 512, 2048, 8192]  # the oracle's buckets (and the independent subset)
N = K = 4096
ORACLE_SHORTLIST = 16  # configs of the oracle's second stage (plus the choices it checks)
ORACLE_PASSES = 15


def log(text: str) -> None:
    print(f"[many_shapes] {text}", file=sys.stderr, flush=True)


# ---- one phase, in its own process -------------------------------------------------------

def tuned_matmul(variant: str):
    """The disttune function of `variant` (its own name: its records stay apart)."""
    import many_shapes_kernels as kernels
    from disttune.tune import autotune

    options = dict(config_space=kernels.config_space(), key_fn=lambda a, b, c: (a.shape[0], b.shape[1], a.shape[1]),
                   strategy="converge", precompile=functools.partial(kernels.compile_only, variant),
                   precompile_threads=16)
    if variant == "constexpr":
        @autotune(**options)
        def sized_matmul(a, b, c, cfg):
            return kernels.launch("constexpr", a, b, c, cfg)
        return sized_matmul

    @autotune(**options)
    def runtime_matmul(a, b, c, cfg):
        return kernels.launch("runtime", a, b, c, cfg)
    return runtime_matmul


def item(m: int):
    import many_shapes_kernels as kernels

    return lambda: (kernels.operands(m, N, K), {})


def oracle(variant: str, m: int, under_test: dict) -> dict:
    """Interleaved CUDA-graph timing of every config that runs at bucket m: one pass over all
    of them, then ORACLE_PASSES passes over the fastest ORACLE_SHORTLIST and the configs
    under test, in turn; per config the median per-run time. Returns the exhaustive best and
    each choice's ratio to it."""
    import torch

    import many_shapes_kernels as kernels
    from disttune import _encoding

    a, b, c = kernels.operands(m, N, K)
    entries = kernels.config_space()
    texts = [_encoding.entry_text(entry) for entry in entries]
    graphs, per_graph = {}, None
    for index, entry in enumerate(entries):
        run = functools.partial(kernels.launch, variant, a, b, c, entry["cfg"])
        try:
            run()
            torch.cuda.synchronize()
            if per_graph is None:  # about 1 ms per replay for the first config that runs
                start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                for _ in range(10):
                    run()
                stop.record()
                torch.cuda.synchronize()
                per_graph = max(1, min(64, round(10.0 / max(start.elapsed_time(stop), 1e-3))))
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                for _ in range(per_graph):
                    run()
            graphs[index] = graph
        except Exception:  # out of resources for this size: not a candidate here
            continue

    def passes(indices, count):
        times = {i: [] for i in indices}
        for p in range(count):
            order = indices[p % len(indices):] + indices[:p % len(indices)]
            pairs = []
            for i in order:
                start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                graphs[i].replay()
                stop.record()
                pairs.append((i, start, stop))
            torch.cuda.synchronize()
            for i, start, stop in pairs:
                times[i].append(start.elapsed_time(stop) / per_graph)
        return {i: statistics.median(t) for i, t in times.items()}

    first = passes(list(graphs), 1)
    tested = {name: texts.index(text) for name, text in under_test.items() if text in texts}
    shortlist = sorted(first, key=first.get)[:ORACLE_SHORTLIST]
    final = passes(sorted(set(shortlist) | set(tested.values())), ORACLE_PASSES)
    best = min(final, key=final.get)
    return {
        "m": m, "configs_that_run": len(graphs), "per_graph": per_graph, "best_ms": final[best],
        "best": texts[best],
        "ratio_to_best": {name: final[i] / final[best] for name, i in tested.items()},
    }


def run_phase(args) -> dict:
    import torch  # noqa: F401  (CUDA up before the first tuning)

    import disttune
    from disttune import _encoding
    from disttune.tune import autotune

    variant = args.variant
    tuned = tuned_matmul(variant)
    buckets = BUCKETS if args.phase == "sweep" else [int(m) for m in args.buckets.split(",")]
    log(f"phase {args.phase} {variant}: {len(buckets)} buckets, warm start "
        f"{os.environ.get('TRITON_DIST_AUTOTUNE_WARM_START', 'on')}")
    summary = disttune.sweep(tuned, [item(m) for m in buckets], progress=False)
    keys = []
    for m, outcome in zip(buckets, summary.outcomes):
        keys.append({"m": m, "seconds": outcome.seconds, "measured": outcome.measured, "source": outcome.source,
                     "warm_start_from": list(outcome.warm_start_from)})
    stored = records_by_m()
    for entry in keys:
        record = stored.get(entry["m"], {})
        entry.update({field: record.get("clocks", {}).get(field) for field in CLOCK_FIGURES})
        entry["samples"], entry["timed_ms"] = timed_runs(record)
    choices = {m: _encoding.entry_text(tuned.cache[(m, N, K)]) for m in buckets}
    result = {"phase": args.phase, "variant": variant, "keys": keys, "seconds": summary.seconds,
              "choices": {str(m): text for m, text in choices.items()},
              "prepare_hook": "compile_timeout_s" in inspect.signature(autotune).parameters}
    if args.oracle:
        tested_elsewhere = json.loads(args.tested) if args.tested else {}
        checks = []
        for m in [int(x) for x in args.oracle.split(",")]:
            under_test = {args.phase: choices[m]} if m in choices else {}
            under_test.update({name: texts[str(m)] for name, texts in tested_elsewhere.items() if str(m) in texts})
            checks.append(oracle(variant, m, under_test))
            log(f"oracle M={m}: {checks[-1]['ratio_to_best']}")
        result["oracle"] = checks
    return result


def records_by_m() -> dict:
    """Each bucket's record in this phase's disk cache, by M."""
    found = {}
    for path in Path(os.environ["TRITON_DIST_AUTOTUNE_CACHE_DIR"]).glob("*/*.json"):
        record = json.loads(path.read_text())
        found[json.loads(record["key"])["$tuple"][0]] = record  # key (M, N, K)
    return found


def per_key(keys: list, *fields: str) -> dict:
    """{field: each key's value of it, in the keys' order}."""
    return {field: [key.get(field) for key in keys] for field in fields}


def timed_runs(record: dict) -> tuple:
    """(samples kept, their device time in ms) of a record: the timed runs' share of a key's
    wall time."""
    samples = [ms for candidate in record.get("candidates", []) for ms in candidate.get("samples_ms", [])]
    return len(samples), round(sum(samples), 3)


# ---- the orchestrator ----------------------------------------------------------------------

def phase(name: str, variant: str, *, buckets=None, oracle=None, tested=None, warm=True, timeout_s=540) -> dict:
    """Runs one phase in a fresh process with fresh Triton and disttune caches."""
    with tempfile.TemporaryDirectory(prefix="many-shapes-") as scratch:
        env = dict(os.environ, TRITON_CACHE_DIR=os.path.join(scratch, "triton"),
                   TRITON_DIST_AUTOTUNE_CACHE_DIR=os.path.join(scratch, "disttune"),
                   TRITON_DIST_AUTOTUNE_WARM_START="1" if warm else "0",
                   PYTHONPATH=HERE + os.pathsep + os.environ.get("PYTHONPATH", ""))
        env.pop("TRITON_DIST_AUTOTUNE_REDIS_URL", None)
        command = [sys.executable, os.path.abspath(__file__), "--phase", name, "--variant", variant]
        if buckets:
            command += ["--buckets", ",".join(map(str, buckets))]
        if oracle:
            command += ["--oracle", ",".join(map(str, oracle))]
        if tested:
            command += ["--tested", json.dumps(tested)]
        start = time.monotonic()
        done = subprocess.run(command, env=env, stdout=subprocess.PIPE, timeout=timeout_s, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"phase {name} {variant} failed with status {done.returncode}")
        result = json.loads(done.stdout)
        result["process_seconds"] = time.monotonic() - start
        return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--phase", choices=("sweep", "independent"))
    parser.add_argument("--variant", choices=("constexpr", "runtime"), default="constexpr")
    parser.add_argument("--buckets")
    parser.add_argument("--oracle")
    parser.add_argument("--tested")
    parser.add_argument("--independent", choices=("subset", "all"), default="subset",
                        help="independent tunings on the 6 checked buckets (scaled to 16) or on all 16")
    parser.add_argument("--skip-runtime", action="store_true", help="only the constexpr variant")
    args = parser.parse_args()
    if args.phase:
        print(json.dumps(run_phase(args)))
        return 0

    report = {"buckets": BUCKETS, "checked": CHECKED, "n": N, "k": K, "configs": 384, "strategy": "converge"}
    try:
        report.update(constexpr_variant(args.independent))
    except (RuntimeError, subprocess.TimeoutExpired, ValueError, KeyError) as error:
        report["constexpr_error"] = repr(error)  # the run-time variant is still measured
    if not args.skip_runtime:
        try:
            report.update(runtime_variant())
        except (RuntimeError, subprocess.TimeoutExpired, ValueError, KeyError) as error:
            report["runtime_error"] = repr(error)
    print(json.dumps(report, indent=1))
    return 0 if "constexpr_error" not in report and "runtime_error" not in report else 1


def constexpr_variant(independent: str) -> dict:
    log("constexpr sizes: warm-started sweep of 16 buckets")
    warm = phase("sweep", "constexpr")
    independent_buckets = CHECKED if independent == "subset" else BUCKETS
    log(f"constexpr sizes: independent tunings of {len(independent_buckets)} buckets, then the oracle")
    alone = phase("independent", "constexpr", buckets=independent_buckets, oracle=CHECKED, warm=False,
                  tested={"sweep": warm["choices"]})
    warm_s = sum(k["seconds"] for k in warm["keys"])
    alone_mean = statistics.mean(k["seconds"] for k in alone["keys"])
    within = {name: sum(1 for c in alone["oracle"] if c["ratio_to_best"].get(name, 9.0) <= 1.02)
              for name in ("sweep", "independent")}
    sweep, independent = per_key(warm["keys"], *CLOCK_FIGURES), per_key(alone["keys"], *CLOCK_FIGURES)
    return {"constexpr": {
        "warm_sweep_s": warm_s,
        "warm_per_key_s": [round(k["seconds"], 3) for k in warm["keys"]],
        "warm_measured": [k["measured"] for k in warm["keys"]],
        "warm_started_keys": sum(1 for k in warm["keys"] if k["warm_start_from"]),
        "full_space_keys": sum(1 for k in warm["keys"] if k["measured"] >= 300),
        "independent_buckets": independent_buckets,
        "independent_per_key_s": [round(k["seconds"], 3) for k in alone["keys"]],
        "independent_16_estimate_s": alone_mean * len(BUCKETS),
        "ratio_warm_to_independent": warm_s / (alone_mean * len(BUCKETS)),
        "target_ratio": 0.20,
        "oracle": alone["oracle"],
        "within_2pct_of_best": within,
        "prepare_hook": warm["prepare_hook"],
        **{field: {"sweep": sweep[field], "independent": independent[field]} for field in CLOCK_FIGURES},
    }}


def runtime_variant() -> dict:
    log("run-time sizes: warm-started sweep of 16 buckets, then the oracle")
    runtime = phase("sweep", "runtime", oracle=CHECKED)
    later = [k["seconds"] for k in runtime["keys"][1:]]
    return {"runtime": {
        "first_key_s": runtime["keys"][0]["seconds"],
        "later_keys_s": [round(s, 3) for s in later],
        "later_keys_max_s": max(later),
        "later_keys_median_s": statistics.median(later),
        "target_later_max_s": 0.15,
        "warm_measured": [k["measured"] for k in runtime["keys"]],
        "oracle": runtime["oracle"],
        "within_2pct_of_best": sum(1 for c in runtime["oracle"] if c["ratio_to_best"].get("sweep", 9.0) <= 1.02),
        **per_key(runtime["keys"], *CLOCK_FIGURES, "samples", "timed_ms"),
    }}


if __name__ == "__main__":
    sys.exit(main())
