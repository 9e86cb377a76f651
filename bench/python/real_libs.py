"""Real libraries' ops under the drop-in switch and under plain Triton, one GPU (the H200):
each op (forward and backward) runs in a fresh process with fresh Triton and disttune caches,
plain and with disttune.triton.install() made before the library is imported, then once more
in a second switched process over the first one's stores. Outputs and gradients compared
(relative L2 error), first call and steady time side by side (and the two modes' choices timed
in one plain process, pinned_choices.py: the steady target reads that), the census of
autotuners and each tuning's timeline. Then the 384-config matmul through the drop-in against an
interleaved oracle of every config (L2 flushed before each run).

    python bench/python/real_libs.py [--wheels .whl] [--ops fla.chunk_gla,liger.dyt,...] [--rounds 1] [--no-matmul]
    python bench/python/real_libs.py child OP plain|dropin|again OUT_FILE       # one process
    python bench/python/real_libs.py pinned OP CHOICES_FILE   # both modes' choices, one plain process

Libraries come from the wheels in --wheels (pip install --no-deps into the bench's own
folder): fla-core, einops, Liger-Kernel. Prints one JSON object, then a table.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from pinned_choices import steady_ab, time_calls  # noqa: E402

STEADY_RUNS = 50
# Targets (issue 35): first call at most 1/8 of plain Triton's; outputs and gradients within a
# relative L2 error of 1e-2; steady time within 3%; a second process at most 1 s.
FIRST_CALL_RATIO = 1 / 8
MOST_L2_ERROR = 1e-2
STEADY_RATIO = 1.03
SECOND_PROCESS_S = 1.0
# The matmul oracle's timed milliseconds per config: ~100 runs of the fastest. The interleaved
# oracle's default (200 ms) runs every one of ~330 configs ~1,000 times: over 280 s on the H200.
ORACLE_MS = 20.0


def fla_chunk_gla():
    """flash-linear-attention's chunk_gla, forward and backward, B=2, T=2048, H=16, K=V=128, bf16."""
    import torch
    import torch.nn.functional as F

    from fla.ops.gla import chunk_gla

    B, T, H, K, V = 2, 2048, 16, 128, 128
    torch.manual_seed(0)
    q = torch.randn(B, T, H, K, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    k = torch.randn(B, T, H, K, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    v = torch.randn(B, T, H, V, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    g = F.logsigmoid(torch.randn(B, T, H, K, device="cuda", dtype=torch.float32)).to(torch.bfloat16)
    g.requires_grad_(True)
    do = torch.randn(B, T, H, V, device="cuda", dtype=torch.bfloat16)

    def op():
        for tensor in (q, k, v, g):
            tensor.grad = None
        o, _ = chunk_gla(q, k, v, g)
        o.backward(do)
        return [o.detach(), q.grad, k.grad, v.grad, g.grad]

    return op


def liger_dyt():
    """Liger-Kernel's DyT, forward and backward, 8192 x 4096 fp32."""
    import torch

    from liger_kernel.ops import dyt

    torch.manual_seed(0)
    x = torch.randn(8192, 4096, device="cuda", requires_grad=True)
    alpha = torch.full((1,), 0.5, device="cuda", requires_grad=True)
    gamma = torch.randn(4096, device="cuda", requires_grad=True)
    beta = torch.randn(4096, device="cuda", requires_grad=True)
    dy = torch.randn(8192, 4096, device="cuda")

    def op():
        for tensor in (x, alpha, gamma, beta):
            tensor.grad = None
        y = dyt.LigerDyTFunction.apply(x, alpha, gamma, beta)
        y.backward(dy)
        return [y.detach(), x.grad, alpha.grad, gamma.grad, beta.grad]

    return op


def liger_swiglu():
    """Liger-Kernel's fused SwiGLU GEMM (TMA), 4 x 1024 x 4096 by 8192, bf16, forward."""
    import torch

    from liger_kernel.ops import mlp

    torch.manual_seed(0)
    hidden = torch.randn(4, 1024, 4096, device="cuda", dtype=torch.bfloat16)
    w_gate = torch.randn(8192, 4096, device="cuda", dtype=torch.bfloat16) / 64
    w_up = torch.randn(8192, 4096, device="cuda", dtype=torch.bfloat16) / 64
    return lambda: [mlp.gemm_swiglu(hidden, w_gate, w_up, 1.0, store_preact=False)[0]]


OPS = {"fla.chunk_gla": fla_chunk_gla, "liger.dyt": liger_dyt, "liger.swiglu": liger_swiglu}


def steady_ms(op):
    """(wall, device): the medians of STEADY_RUNS calls (pinned_choices.time_calls)."""
    walls, devices = time_calls(op, STEADY_RUNS)
    return statistics.median(walls), statistics.median(devices)


def choices():
    """Each Triton autotuner object alive that tuned something (its class's subclasses too):
    its kernel's name -> {key: the chosen config}, to compare plain Triton's choices with the
    drop-in's."""
    import gc

    from triton.runtime.autotuner import Autotuner

    chosen = {}
    for tuner in gc.get_objects():
        if isinstance(tuner, Autotuner) and getattr(tuner, "cache", None):
            name = getattr(tuner, "base_fn", tuner.fn).__name__
            chosen.setdefault(name, {}).update({str(key): str(config) for key, config in tuner.cache.items()})
    return chosen


def choices_differ(plain, dropin):
    """{kernel: {key: {"plain": config, "dropin": config}}} for each key of plain Triton's
    choices (choices()) that the drop-in chose otherwise; kernels with none are left out."""
    differ = {}
    for kernel, keys in plain.items():
        chosen = dropin.get(kernel, {})
        other = {key: {"plain": config, "dropin": chosen.get(key)} for key, config in keys.items()
                 if chosen.get(key) != config}
        if other:
            differ[kernel] = other
    return differ


def child(name, mode, out_file):
    """One process: the op's first call timed, then its steady time; outputs saved."""
    if mode != "plain":
        import disttune.triton

        disttune.triton.install()  # before the library is imported
    import torch

    op = OPS[name]()
    torch.cuda.synchronize()
    begin = time.perf_counter()
    values = op()
    torch.cuda.synchronize()
    first = time.perf_counter() - begin
    torch.save([value.detach().float().cpu() for value in values], out_file)
    wall_ms, device_ms = steady_ms(op)
    result = {"op": name, "mode": mode, "first_call_s": first, "steady_ms": wall_ms, "steady_device_ms": device_ms,
              "choices": choices()}
    if mode != "plain":
        import disttune.triton

        census = disttune.triton.census()
        result["taken"] = sum(1 for entry in census if entry["taken"])
        result["left"] = [f"{entry['kernel']}: {entry['reason']}" for entry in census if not entry["taken"]]
        result["timelines"] = disttune.triton.timelines()
    return result


def pinned_child(name, choices_file):
    """One plain-Triton process: the op's steady time under plain Triton's choices and under the
    drop-in's, each of its autotuners pinned to one set and then the other in alternating
    blocks (pinned_choices.steady_ab): the choices compared in one process."""
    with open(choices_file) as sets:
        chosen = json.load(sets)
    return steady_ab(OPS[name](), chosen)


def run_child(arguments, caches, script=__file__):
    """Runs `script child ...` (this file's by default) with the given Triton and disttune cache
    folders."""
    env = dict(os.environ, TRITON_CACHE_DIR=caches[0], TRITON_DIST_AUTOTUNE_CACHE_DIR=caches[1],
               PYTHONUNBUFFERED="1")
    env.pop("TRITON_DIST_AUTOTUNE_TRITON_DROPIN", None)
    done = subprocess.run([sys.executable, script, *arguments], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        return {"error": done.stderr[-2000:]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def fresh_caches():
    return (tempfile.mkdtemp(prefix="real-libs-triton-"), tempfile.mkdtemp(prefix="real-libs-disttune-"))


def relative_l2(plain_file, other_file):
    """The largest relative L2 error ||other - plain|| / ||plain|| over the saved tensors."""
    import torch

    plain, other = torch.load(plain_file), torch.load(other_file)
    errors = [float(torch.linalg.vector_norm(o - p) / max(float(torch.linalg.vector_norm(p)), 1e-30))
              for p, o in zip(plain, other)]
    return max(errors) if len(plain) == len(other) else float("inf")


def bench_op(name, out_dir, rounds=1):
    """One op's row: `rounds` first calls of each mode, plain and drop-in alternating which goes
    first (plain Triton's first call varies by tens of seconds from one process to the next),
    compared by their medians; the first round's runs give the details, its drop-in stores the
    second process."""
    files = {mode: os.path.join(out_dir, f"{name}.{mode}.pt") for mode in ("plain", "dropin", "again")}
    first_calls: dict = {"plain": [], "dropin": []}
    runs: dict = {}
    for round_index in range(rounds):
        caches = fresh_caches()
        for mode in ("plain", "dropin") if round_index % 2 == 0 else ("dropin", "plain"):
            run = run_child(["child", name, mode, files[mode]], fresh_caches() if mode == "plain" else caches)
            runs.setdefault(mode, run)
            if "error" in run:
                return {"op": name, "runs": {**runs, mode: run}}
            first_calls[mode].append(run["first_call_s"])
        if round_index == 0:
            runs["again"] = run_child(["child", name, "again", files["again"]], caches)
            choices_file = os.path.join(out_dir, f"{name}.choices.json")
            with open(choices_file, "w") as sets:
                json.dump({mode: runs[mode]["choices"] for mode in ("plain", "dropin")}, sets)
            runs["pinned"] = run_child(["pinned", name, choices_file], fresh_caches())
    row = {"op": name, "runs": runs, "first_calls_s": first_calls}
    if "error" not in runs["again"]:
        plain, dropin, again = runs["plain"], runs["dropin"], runs["again"]
        row["first_call_ratio"] = statistics.median(first_calls["dropin"]) / statistics.median(first_calls["plain"])
        row["steady_ratio"] = dropin["steady_ms"] / plain["steady_ms"]
        row["steady_device_ratio"] = dropin["steady_device_ms"] / plain["steady_device_ms"]
        pinned = runs["pinned"]
        if "error" not in pinned:  # the choices compared in one process: what the target reads
            row["pinned_device_ratio"] = pinned["dropin"]["steady_device_ms"] / pinned["plain"]["steady_device_ms"]
        row["choices_differ"] = choices_differ(plain["choices"], dropin["choices"])
        row["l2_error"] = max(relative_l2(files["plain"], files["dropin"]), relative_l2(files["plain"], files["again"]))
        row["targets"] = {
            "first_call_at_most_1_8": row["first_call_ratio"] <= FIRST_CALL_RATIO,
            "l2_error_at_most_1e-2": row["l2_error"] <= MOST_L2_ERROR,
            "steady_within_3pct": row.get("pinned_device_ratio", row["steady_ratio"]) <= STEADY_RATIO,
            "second_process_at_most_1s": again["first_call_s"] <= SECOND_PROCESS_S,
        }
    return row


def matmul_first_call(out_file):
    """The 384-config matmul (M=2048, N=8192, K=1024) through the drop-in: first call, choice."""
    import torch
    import triton

    import disttune.triton
    from matmul import _args, matmul_kernel
    from pipeline_bench import configs_384

    configs = configs_384()
    kernel = disttune.triton.autotune(configs=configs, key=["M", "N", "K"])(matmul_kernel)
    torch.manual_seed(0)
    a = torch.randn(2048, 1024, device="cuda", dtype=torch.float16)
    b = torch.randn(1024, 8192, device="cuda", dtype=torch.float16)
    c = torch.empty(2048, 8192, device="cuda", dtype=torch.float16)
    grid = lambda meta: (triton.cdiv(2048, meta["BLOCK_M"]) * triton.cdiv(8192, meta["BLOCK_N"]),)  # noqa: E731
    torch.cuda.synchronize()
    begin = time.perf_counter()
    kernel[grid](*_args(a, b, c))
    torch.cuda.synchronize()
    first = time.perf_counter() - begin
    torch.testing.assert_close(c, a @ b, atol=0.5, rtol=0.05)
    with open(out_file, "w") as out:
        json.dump({"chosen": configs.index(kernel.best_config)}, out)
    return {"first_call_s": first, "chosen": configs.index(kernel.best_config),
            "timelines": disttune.triton.timelines()}


def matmul_oracle(chosen):
    """Every config of the 384 that runs, timed by dropin_bench's interleaved oracle (L2
    flushed before each run, as the drop-in and Triton's do_bench measure), and the chosen
    config's time over the best."""
    from concurrent.futures import ThreadPoolExecutor

    import torch
    import triton

    from dropin_bench import oracle_interleaved
    from matmul import _args, matmul_kernel
    from pipeline_bench import configs_384

    configs = configs_384()
    a = torch.randn(2048, 1024, device="cuda", dtype=torch.float16)
    b = torch.randn(1024, 8192, device="cuda", dtype=torch.float16)
    c = torch.empty(2048, 8192, device="cuda", dtype=torch.float16)

    def launch(config):
        meta = config.all_kwargs()
        matmul_kernel[(triton.cdiv(2048, meta["BLOCK_M"]) * triton.cdiv(8192, meta["BLOCK_N"]),)](*_args(a, b, c), **meta)

    def compiles(config):
        try:
            matmul_kernel.warmup(*_args(a, b, c), grid=(1,), **config.all_kwargs())
            return True
        except Exception:
            return False

    with ThreadPoolExecutor(16) as pool:
        compiled = list(pool.map(compiles, configs))
    runnable = []
    for index, config in enumerate(configs):
        if not compiled[index]:
            continue
        try:
            launch(config)
            torch.cuda.synchronize()
            runnable.append(index)
        except Exception:
            torch.cuda.synchronize()
    times = oracle_interleaved([lambda config=configs[index]: launch(config) for index in runnable], ORACLE_MS)
    medians = dict(zip(runnable, times))
    best = min(medians.values())
    return {"runnable": len(runnable), "best_ms": best, "chosen_ms": medians.get(chosen),
            "regret": medians[chosen] / best - 1 if chosen in medians else None}


def install_wheels(wheels):
    target = tempfile.mkdtemp(prefix="real-libs-site-")
    files = [os.path.join(wheels, name) for name in sorted(os.listdir(wheels)) if name.endswith(".whl")]
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target", target,
                    *files], check=True)
    return target


def table(summary):
    lines = ["op | plain first s | drop-in first s | ratio (medians) | steady plain/drop-in ms (device) | "
             "choices in one process, device ms | L2 err | 2nd process s | taken/left | choices differ"]
    for row in summary["ops"]:
        runs = row["runs"]
        if "first_call_ratio" not in row:
            errors = {mode: run["error"].strip().splitlines()[-1][:120] for mode, run in runs.items() if "error" in run}
            lines.append(f"{row['op']} | FAILED {errors}")
            continue
        medians = {mode: statistics.median(calls) for mode, calls in row["first_calls_s"].items()}
        pinned = runs["pinned"]
        one_process = (f"{pinned['plain']['steady_device_ms']:.3f}/{pinned['dropin']['steady_device_ms']:.3f} "
                       f"x{row['pinned_device_ratio']:.3f}" if "pinned_device_ratio" in row
                       else "failed: " + pinned.get("error", "").strip().splitlines()[-1][:80])
        lines.append(f"{row['op']} | {medians['plain']:.1f} | {medians['dropin']:.1f} | "
                     f"x{row['first_call_ratio']:.3f} | {runs['plain']['steady_ms']:.3f}/{runs['dropin']['steady_ms']:.3f} "
                     f"({runs['plain']['steady_device_ms']:.3f}/{runs['dropin']['steady_device_ms']:.3f}) | "
                     f"{one_process} | {row['l2_error']:.1e} | {runs['again']['first_call_s']:.2f} | "
                     f"{runs['dropin']['taken']}/{len(runs['dropin']['left'])} | "
                     f"{sum(len(keys) for keys in row['choices_differ'].values())}")
    matmul = summary.get("matmul")
    if matmul:
        lines.append(f"matmul 384 (drop-in) | first call {matmul.get('first_call_s', float('nan')):.2f} s | "
                     f"regret {matmul.get('regret')}")
    return "\n".join(lines)


def main():
    if sys.argv[1:2] == ["child"]:
        name, mode, out_file = sys.argv[2:5]
        print(json.dumps(child(name, mode, out_file) if name != "matmul" else matmul_first_call(out_file)))
        return
    if sys.argv[1:2] == ["pinned"]:
        print(json.dumps(pinned_child(*sys.argv[2:4])))
        return
    if sys.argv[1:2] == ["oracle"]:
        print(json.dumps(matmul_oracle(int(sys.argv[2]))))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheels", default=os.path.join(ROOT, ".whl"))
    parser.add_argument("--ops", default=",".join(OPS))
    parser.add_argument("--no-matmul", action="store_true")
    parser.add_argument("--rounds", type=int, default=1, help="first calls per mode and op (medians compared)")
    parser.add_argument("--out", default=None, help="also write the JSON summary here")
    args = parser.parse_args()
    site = install_wheels(args.wheels)
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [site, HERE, os.environ.get("PYTHONPATH", "")]))
    out_dir = tempfile.mkdtemp(prefix="real-libs-out-")
    summary: dict = {"ops": []}

    def save() -> None:  # after each part, so that a run cut short keeps what it measured
        if args.out:
            with open(args.out, "w") as out:
                json.dump(summary, out, indent=1)

    from disttune.triton import timeline_table

    for name in filter(None, args.ops.split(",")):
        row = bench_op(name, out_dir, args.rounds)
        for mode in ("dropin", "again"):
            if "timelines" in row["runs"][mode]:
                row["runs"][mode]["timeline_table"] = timeline_table(row["runs"][mode]["timelines"])
        summary["ops"].append(row)
        save()
        print(table(summary), flush=True)
    if not args.no_matmul:
        caches = fresh_caches()
        first = run_child(["child", "matmul", "dropin", os.path.join(out_dir, "matmul.json")], caches)
        summary["matmul"] = dict(first)
        if "chosen" in first:
            summary["matmul"].update(run_child(["oracle", str(first["chosen"])], caches))
            regret = summary["matmul"]["regret"]  # None: the choice did not run in the oracle
            summary["matmul"]["targets"] = {"first_call_at_most_8s": first["first_call_s"] <= 8.0,
                                            "regret_at_most_1pct": regret is not None and regret <= 0.01}
    save()
    print(json.dumps(summary, indent=1))
    for row in summary["ops"]:
        for mode in ("dropin", "again"):
            if "timeline_table" in row["runs"][mode]:
                print(f"== {row['op']} {mode}: timeline\n{row['runs'][mode]['timeline_table']}")
    print(table(summary))


if __name__ == "__main__":
    main()
