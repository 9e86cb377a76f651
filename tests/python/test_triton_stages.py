"""What the compiles of one tuning share is made once (disttune._triton_stages): the codegen of
num_stages variants, and the stages after a TTGIR that several configs reach (LLIR, PTX,
ptxas). Real compiles for sm_90 on the CPU, with the ptxas Triton ships, in a child without
Triton's interpreter; the memo's own rules on plain stage functions."""

import json
import os
import subprocess
import sys
import textwrap
import threading

import triton

from disttune import _triton_stages

CHILD = textwrap.dedent('''
    import hashlib, json, sys
    from concurrent.futures import ThreadPoolExecutor
    import triton
    import triton.language as tl
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from disttune import _triton_stages

    @triton.jit
    def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):  # no loop: num_stages changes nothing
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offsets < n
        tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * 2, mask=mask)

    @triton.jit
    def dot_loop_kernel(a_ptr, b_ptr, c_ptr, K, BLOCK: tl.constexpr):  # aligned loads into a dot: pipelined
        offsets = tl.arange(0, BLOCK)
        acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
        for k in range(0, K, BLOCK):
            a = tl.load(a_ptr + offsets[:, None] * K + (k + offsets[None, :]))
            b = tl.load(b_ptr + (k + offsets[:, None]) * BLOCK + offsets[None, :])
            acc += tl.dot(a, b)
        tl.store(c_ptr + offsets[:, None] * BLOCK + offsets[None, :], acc)

    ALIGNED = {(i,): [["tt.divisibility", 16]] for i in range(4)}  # 16-byte pointers, K a multiple of 16
    KERNELS = {
        "scale": (scale_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}),
        "dot_loop": (dot_loop_kernel, {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32", "K": "i32",
                                       "BLOCK": "constexpr"}),
    }

    def cubin(name, stages):
        fn, signature = KERNELS[name]
        source = ASTSource(fn, signature, {"BLOCK": 64}, ALIGNED)
        compiled = triton.compile(source, target=GPUTarget("cuda", 90, 32),
                                  options={"num_warps": 4, "num_stages": stages})
        return hashlib.sha256(compiled.asm["cubin"]).hexdigest(), compiled.metadata.shared, compiled.metadata.name

    earlier_calls = []  # a hook someone set before: the memo's hook calls it first
    triton.knobs.runtime.add_stages_inspection_hook = lambda *args: earlier_calls.append(args[1])
    _triton_stages.install()
    result = {}
    for name in KERNELS:
        alone = [cubin(name, stages) for stages in (2, 3, 4)]  # no memo: every stage runs
        memo = _triton_stages.StageMemo()
        with ThreadPoolExecutor(3) as pool:  # three compile threads at once, as on the drop-in's pool
            shared = list(pool.map(lambda stages: _triton_stages.within(memo, lambda: cubin(name, stages)),
                                   (2, 3, 4)))
        result[name] = {"alone": alone, "shared": shared, "reused": memo.reused}
    result["earlier_hook_calls"] = len(earlier_calls)
    print(json.dumps(result))
''')


def compile_in_child(tmp_path) -> dict:
    script = tmp_path / "stages_child.py"  # @triton.jit reads its kernels' source from a file
    script.write_text(CHILD)
    env = {name: value for name, value in os.environ.items() if name != "TRITON_INTERPRET"}
    env.update(TRITON_CACHE_DIR=str(tmp_path / "triton"), TRITON_ALWAYS_COMPILE="1")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_num_stages_variants_share_their_codegen_and_without_a_pipelined_loop_make_one_binary_once(tmp_path):
    result = compile_in_child(tmp_path)
    scale = result["scale"]
    # The same binary (and shared memory, and name) whichever num_stages, with or without the memo;
    # with it, two of the three compiles took the TTIR, LLIR, PTX and the cubin from the first.
    assert len({tuple(made) for made in scale["alone"] + scale["shared"]}) == 1
    assert scale["reused"] == 2 * (1 + len(_triton_stages.LATER_STAGES))
    # A loop Triton pipelines: each num_stages is its own binary, the one Triton makes alone;
    # only the codegen (before num_stages matters) is shared.
    loop = result["dot_loop"]
    assert len({made[0] for made in loop["alone"]}) == 3
    assert loop["shared"] == loop["alone"]
    assert loop["reused"] == 2
    assert result["earlier_hook_calls"] == 2 * 6  # every compile, with the memo or without


def stage_recording(calls: list, fail_first: bool = False):
    def stage(source, metadata):
        calls.append(source)
        if fail_first and len(calls) == 1:
            raise RuntimeError("ptxas failed")
        metadata["shared"] = len(source)
        return source.upper()

    return stage


def test_a_stage_runs_once_per_input_and_options_and_hands_on_what_it_wrote_in_the_metadata():
    memo = _triton_stages.StageMemo()
    calls: list = []
    stage = stage_recording(calls)
    first, second = {"num_stages": 2}, {"num_stages": 3}
    assert memo.run("llir", stage, "ttgir text", first, "options") == "TTGIR TEXT"
    assert memo.run("llir", stage, "ttgir text", second, "options") == "TTGIR TEXT"
    assert second == {"num_stages": 3, "shared": len("ttgir text")}
    assert calls == ["ttgir text"] and memo.reused == 1
    # Another input, other options, another stage: each runs.
    memo.run("llir", stage, "other text", {}, "options")
    memo.run("llir", stage, "ttgir text", {}, "other options")
    memo.run("ptx", stage, "ttgir text", {}, "options")
    assert len(calls) == 4 and memo.reused == 1


def test_a_stage_that_raised_is_run_again_by_the_next_compile_that_reaches_it():
    memo = _triton_stages.StageMemo()
    calls: list = []
    stage = stage_recording(calls, fail_first=True)
    try:
        memo.run("cubin", stage, "ptx", {}, "options")
        raise AssertionError("the stage's error did not reach its compile")
    except RuntimeError as error:
        assert str(error) == "ptxas failed"
    assert memo.run("cubin", stage, "ptx", {}, "options") == "PTX"
    assert len(calls) == 2 and memo.reused == 0


def test_a_compile_waits_for_the_output_another_thread_is_making():
    memo = _triton_stages.StageMemo()
    started, release = threading.Event(), threading.Event()
    calls: list = []

    def slow_stage(source, metadata):
        calls.append(source)
        started.set()
        release.wait(10)
        return "made once"

    first = threading.Thread(target=memo.run, args=("llir", slow_stage, "ttgir", {}, "options"))
    first.start()
    started.wait(10)
    outputs: list = []
    second = threading.Thread(target=lambda: outputs.append(memo.run("llir", slow_stage, "ttgir", {}, "options")))
    second.start()
    second.join(0.2)
    assert second.is_alive()  # waiting for the first, not running the stage
    release.set()
    first.join(10)
    second.join(10)
    assert outputs == ["made once"] and calls == ["ttgir"] and memo.reused == 1


def test_only_cuda_compiles_within_a_memo_share_and_a_pool_thread_is_clean_after_one_that_raised():
    # The hook wraps the later stages only for a CUDA compile run `within` a memo: a compile
    # queued on the same pool thread afterwards (another front end's, or the drop-in's after a
    # compile that raised) runs every stage as Triton does.
    from concurrent.futures import ThreadPoolExecutor
    from types import SimpleNamespace

    _triton_stages.install()
    hook = triton.knobs.runtime.add_stages_inspection_hook
    options = SimpleNamespace(num_warps=4, num_stages=2)

    def shares(backend: str = "cuda") -> bool:
        stage = stage_recording([])
        stages = {name: stage for name in _triton_stages.LATER_STAGES}
        hook(SimpleNamespace(target=SimpleNamespace(backend=backend)), stages, options, None, 90)
        return any(wrapped is not stage for wrapped in stages.values())

    def raises() -> None:
        raise RuntimeError("codegen failed")

    memo = _triton_stages.StageMemo()
    with ThreadPoolExecutor(1) as pool:  # one thread: every task below runs on it
        assert pool.submit(_triton_stages.within, memo, shares).result()
        assert not pool.submit(_triton_stages.within, memo, lambda: shares("hip")).result()
        assert isinstance(pool.submit(_triton_stages.within, memo, raises).exception(), RuntimeError)
        assert not pool.submit(shares).result()


def test_stage_variants_are_queued_after_the_first_of_their_config():
    configs = [triton.Config({"BLOCK": block}, num_warps=warps, num_stages=stages)
               for block in (32, 64) for warps in (4, 8) for stages in (2, 3)]
    order = _triton_stages.stage_variants_last(configs, list(range(len(configs))))
    assert order == [0, 2, 4, 6, 1, 3, 5, 7]
    assert _triton_stages.stage_variants_last(configs, [3, 2, 1]) == [3, 1, 2]


def test_a_tuning_queues_its_predicted_longest_compiles_first_and_stage_variants_last():
    from disttune import _triton_compile

    configs = [triton.Config({"BK": bk}, num_warps=warps, num_stages=stages)
               for bk in (32, 64) for warps in (8, 2) for stages in (2, 3)]
    # Fewest warps first, then the larger tile times stages; the num_stages variants of a config
    # already queued after every first one.
    order = _triton_compile.submission_order(configs, list(range(len(configs))))
    assert [(configs[i].num_warps, configs[i].kwargs["BK"], configs[i].num_stages) for i in order] == [
        (2, 64, 3), (2, 32, 3), (8, 64, 3), (8, 32, 3), (2, 64, 2), (2, 32, 2), (8, 64, 2), (8, 32, 2)]


def test_only_a_strategy_that_compiles_every_config_has_its_compiles_reordered(monkeypatch):
    # The search names its round's picks, then its guesses, in the order it wants them: they are
    # queued as named. Converge and exhaustive compile every config: queued longest first.
    from disttune import _resources, _triton_compile
    from disttune.triton import _kernel_tuning

    queued = []

    def recorded(kernel, configs, args, kwargs, executor, indices=None):
        queued.extend(indices)
        return {}

    monkeypatch.setattr(_triton_compile, "start_compiles", recorded)
    configs = [triton.Config({"BK": 32}, num_warps=8), triton.Config({"BK": 64}, num_warps=2)]
    for strategy, expected in (("search", [0, 1]), ("random", [0, 1]), ("converge", [1, 0]), ("exhaustive", [1, 0])):
        queued.clear()
        compiles = _triton_compile.KernelCompiles(None, configs, (), {}, _resources.Unrunnable().of(str, ()), (),
                                                  longest_first=strategy in _kernel_tuning.COMPILES_EVERY_CONFIG)
        compiles.prepare([], [0, 1])
        assert queued == expected, strategy
