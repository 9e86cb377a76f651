"""The kernels of the replay tables still to record (bench/replay: attention, fp8 matmul, softmax) give
torch's answers for configs covering every knob value (under Triton's interpreter on a host without
a GPU), compile for Hopper (sm_90, fp8 through wgmma) without a GPU, and their spaces make replay
tables that the engine reads."""

import json
import os
import random
import re
import subprocess
import sys
import textwrap

import pytest
import torch

REPLAY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "replay")
sys.path.insert(0, REPLAY)
from attention import Attention  # noqa: E402
from canonical_table import canonical  # noqa: E402
from fp8_matmul import Fp8Matmul  # noqa: E402
from raw_table import raw_entry, raw_table  # noqa: E402
from softmax import Softmax  # noqa: E402

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"  # conftest.py: the interpreter without a GPU


def tile(config) -> int:
    """The product of a config's integer meta-parameters: what its tiles take grows with it."""
    size = 1
    for value in config.kwargs.values():
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            size *= value
    return size


def covering(configs: list, seed: int = 0) -> list:
    """A few configs among which every value of every knob (num_warps and num_stages aside) appears,
    all of 2 stages and the smallest tiles first (so that they fit a GPU's shared memory: fp8's
    256-wide tiles at 2 stages need 324 KiB of the H100's 227; the interpreter has no stages)."""
    shuffled = [config for config in configs if config.num_stages == 2]
    random.Random(seed).shuffle(shuffled)
    shuffled.sort(key=tile)
    seen, chosen = set(), []
    for config in shuffled:
        values = set(config.kwargs.items())
        if not values <= seen:
            seen |= values
            chosen.append(config)
    return chosen


def launch(case, config) -> None:
    grid, args = case.args(config)
    case.kernel[grid](*args, num_warps=config.num_warps, num_stages=config.num_stages, **config.kwargs)


def causal_attention(case: Attention) -> torch.Tensor:
    q, k, v = (t.float() for t in (case.q, case.k, case.v))
    tokens = q.shape[2]
    scores = (q @ k.transpose(-1, -2)) * case.scale
    scores = scores.masked_fill(torch.ones(tokens, tokens, dtype=torch.bool, device=q.device).triu(1), float("-inf"))
    return torch.softmax(scores, -1) @ v


def test_attention_is_causal_softmax_attention_for_every_knob_value():
    case = Attention(device=DEVICE, batch=1, heads=2, tokens=256)
    expected = causal_attention(case)
    configs = covering(case.configs)
    assert {c.kwargs["MASKING"] for c in configs} == {"diagonal", "every_block"}
    for config in configs:
        case.o.fill_(float("nan"))
        launch(case, config)
        torch.testing.assert_close(case.o.float(), expected, atol=5e-3, rtol=1e-2, msg=lambda m: f"{config}: {m}")


def test_fp8_matmul_is_a_matmul_for_every_knob_value():
    # Debian's torch 1.13 has no float8 dtype and the interpreter none either: there the same kernel
    # on fp16 inputs checks the indexing, grouping and promotion; test_new_kernels_compile_for_hopper
    # checks that the fp8 one compiles to fp8 tensor-core instructions. A GPU with fp8 (sm_89 on)
    # runs it on fp8.
    fp8 = DEVICE == "cuda" and torch.cuda.get_device_capability() >= (8, 9)
    case = Fp8Matmul(device=DEVICE, shape=(256, 256, 1024), dtype=None if fp8 else torch.float16)
    expected = case.a.float() @ case.b.float()
    configs = covering(case.configs)
    assert {c.kwargs["PROMOTE"] for c in configs} == {"none", "every_2", "every_4"}
    for config in configs:
        case.c.fill_(float("nan"))
        launch(case, config)
        torch.testing.assert_close(case.c.float(), expected, atol=0.1, rtol=1e-2, msg=lambda m: f"{config}: {m}")


def test_softmax_is_a_row_softmax_for_every_knob_value_and_one_block_needs_the_whole_row():
    case = Softmax(device=DEVICE, rows=8)
    expected = torch.softmax(case.x.float(), 1)
    width = case.x.shape[1]
    whole_rows = [c for c in case.configs if c.kwargs["PASSES"] != "one_block" or c.kwargs["BLOCK_N"] == width]
    configs = covering(whole_rows)
    assert {c.kwargs["PASSES"] for c in configs} == {"one_block", "online", "max_then_sum"}
    for config in configs:
        case.y.fill_(float("nan"))
        launch(case, config)
        torch.testing.assert_close(case.y.float(), expected, atol=1e-6, rtol=5e-3, msg=lambda m: f"{config}: {m}")
    partial_row = next(c for c in case.configs if c.kwargs["PASSES"] == "one_block" and c.kwargs["BLOCK_N"] < width)
    with pytest.raises(Exception, match="one_block holds the whole row"):
        launch(case, partial_row)


# Each kernel's argument types as Triton's compiler names them, the arguments it specializes, the
# knobs of the config compiled (the first that has them) and the tensor-core operands expected.
HOPPER_BUILDS = {
    "attention": ("Attention", {"q_ptr": "*fp16", "k_ptr": "*fp16", "v_ptr": "*fp16", "o_ptr": "*fp16",
                                "scale": "fp32", "stride_b": "i32", "stride_h": "i32", "stride_t": "i32"},
                  {"HEADS": 16, "HEAD_DIM": 128}, {"BLOCK_M": 128, "MASKING": "every_block"}, "f16.f16"),
    "fp8_matmul": ("Fp8Matmul", {"a_ptr": "*fp8e4nv", "b_ptr": "*fp8e4nv", "c_ptr": "*fp16", "M": "i32",
                                 "N": "i32", "K": "i32", "stride_am": "i32", "stride_bn": "i32", "stride_cm": "i32"},
                   {"stride_ak": 1, "stride_bk": 1, "stride_cn": 1}, {}, "e4m3.e4m3"),
    "softmax": ("Softmax", {"x_ptr": "*fp16", "y_ptr": "*fp16"}, {"N": 8192}, {"PASSES": "online"}, None),
}


@pytest.mark.parametrize("module", sorted(HOPPER_BUILDS))
def test_new_kernels_compile_for_hopper(module):
    # Compiled in a child without the interpreter (which replaces @triton.jit), for sm_90 with the
    # ptxas that Triton ships.
    case_name, types, fixed, knobs, mma = HOPPER_BUILDS[module]
    code = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {REPLAY!r})
        import triton
        from triton.backends.compiler import GPUTarget
        from triton.compiler import ASTSource
        from {module} import {case_name} as case
        config = next(c for c in case.configs if all(c.kwargs[k] == v for k, v in {knobs!r}.items()))
        kernel = case.kernel
        constants = {{**{fixed!r}, **config.kwargs}}
        source = ASTSource(fn=kernel, signature={{name: {types!r}.get(name, "constexpr") for name in kernel.arg_names}},
                           constexprs={{(kernel.arg_names.index(name),): value for name, value in constants.items()}})
        compiled = triton.compile(source, target=GPUTarget("cuda", 90, 32),
                                  options={{"num_warps": config.num_warps, "num_stages": config.num_stages}})
        print(" ".join(sorted(set(__import__("re").findall(r"wgmma\\.mma_async\\S*", compiled.asm["ptx"])))))
    """)
    env = {name: value for name, value in os.environ.items() if name != "TRITON_INTERPRET"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    if mma:
        assert re.search(rf"wgmma\.mma_async\S*\.{re.escape(mma)}", done.stdout), done.stdout


@pytest.mark.parametrize("case", [Attention, Fp8Matmul, Softmax], ids=lambda case: case.name)
def test_each_space_makes_a_replay_table_the_engine_reads(case, tmp_path):
    # A raw table as record_table.py writes one (raw_table.py), its times made up here (tmp_path only): every
    # config must be its own candidate once canonical (a repeat is refused) and every knob read.
    entries = [raw_entry(config, 1.0, samples_ms=[1.0 + index % 97 / 100]) for index, config in enumerate(case.configs)]
    raw = raw_table(case.name, case.problem, "times made up", entries, facts={})
    converted = canonical(raw)
    assert len({json.dumps(entry["config"], sort_keys=True) for entry in converted["entries"]}) == len(entries)
    table = tmp_path / f"{case.name}.json"
    table.write_text(json.dumps(converted))
    done = subprocess.run([sys.executable, "-m", "disttune", "replay", str(table), "--strategy", "exhaustive",
                           "--seeds", "1"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert f"{case.name} ({len(case.configs)} entries) exhaustive over 1 seeds: median x1.0000" in done.stdout
