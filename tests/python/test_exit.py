"""Programs that use disttune exit quietly: no nanobind "leaked instances" warnings at exit
for tuned functions defined at module level (a drop-in kernel as the docs show it, tuned and
then hit from the store; autotune with a Timer written in Python)."""

import os
import subprocess
import sys
import textwrap

import pytest

DROPIN_PROGRAM = """
import torch
if not hasattr(torch.Tensor, "untyped_storage"):  # torch < 2.0 (Debian's 1.13), for Triton's interpreter
    torch.Tensor.untyped_storage = lambda self: self.storage()
import triton
import triton.language as tl
from disttune.triton import autotune

@autotune(configs=[triton.Config({"BLOCK": b}, num_warps=w) for b in (64, 128) for w in (2, 4)], key=["n"],
          reset_to_zero=["out_ptr"])
@triton.jit
def kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * 2, mask=mask)

n = 256
x = torch.arange(n, dtype=torch.float32)
out = torch.zeros(n, dtype=torch.float32)
kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, out, n)
assert torch.equal(out, 2 * x)
print(kernel.last_report.source)
"""

PYTHON_TIMER_PROGRAM = """
from disttune import _core, autotune

class Events(_core.Timer):
    def __init__(self):
        super().__init__("events", "{}", "{}")
        self.pending = []

    def start(self):
        self.pending.append(None)

    def stop(self):
        self.pending[-1] = 1.0

    def collect(self):
        out, self.pending = self.pending, []
        return out

@autotune(config_space=[{"tile": t} for t in range(3)], key_fn=lambda m: m, timer=Events())
def launch(m, tile):
    pass

launch(8)
print(launch.last_report.source)
"""


def run_program(tmp_path, text):
    program = tmp_path / "program.py"
    program.write_text(textwrap.dedent(text))
    environment = {**os.environ, "TRITON_INTERPRET": "1"}
    return subprocess.run([sys.executable, str(program)], capture_output=True, text=True, timeout=300,
                          cwd=tmp_path, env=environment)


@pytest.mark.parametrize("program", ["dropin", "python timer"])
def test_a_program_with_module_level_tuned_functions_exits_without_warnings(tmp_path, program):
    text = DROPIN_PROGRAM if program == "dropin" else PYTHON_TIMER_PROGRAM
    sources = []
    for _ in range(2):  # tuned, then a hit from the disk store
        done = run_program(tmp_path, text)
        assert done.returncode == 0, done.stderr
        assert "leaked" not in done.stderr, done.stderr
        sources.append(done.stdout.split()[-1])
    assert sources == ["tuned", "disk"]
