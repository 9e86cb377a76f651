"""GPU checks of the Python package: the spec's examples, and a 32-config fp16 4096^3 matmul
through both methods on the engine's CUDA timer. Skipped without a CUDA device."""

import os
import subprocess
import sys

import pytest
import torch

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.parametrize("example", ["scale_function.py", "scale_contextual.py"])
def test_spec_example(example):
    subprocess.run([sys.executable, os.path.join(ROOT, "examples", "python", example)], check=True)


def test_matmul_32_configs_both_methods():
    sys.path.insert(0, os.path.join(ROOT, "bench", "python"))
    from bench_gpu import contextual_method, function_method
    from matmul import CONFIGS, matmul_autotuned, operands

    a, b, c = operands()
    expected = a @ b
    tuned = function_method()
    torch.testing.assert_close(tuned(a, b, c), expected, atol=0.5, rtol=0.05)
    assert [identity[0] for identity in tuned.tuning.tuners] == ["cuda"]
    assert len(tuned.last_report.candidates) == 32
    failed = {str(candidate.config): candidate.error for candidate in tuned.last_report.candidates if candidate.failed}
    assert not failed, f"every one of the 32 configs runs on this GPU; failed: {failed}"

    c.zero_()
    torch.testing.assert_close(contextual_method(3, 5)(a, b, c), expected, atol=0.5, rtol=0.05)
    assert matmul_autotuned.best_config in CONFIGS


_TABLE_PROGRAM = """
import sys
import torch
import disttune

cache, table, phase = sys.argv[1:4]
runs = []


@disttune.autotune(config_space=[{"chunks": 1}, {"chunks": 4}, {"chunks": 16}],
                   key_fn=lambda x, *args, **kwargs: (x.numel(),), cache_dir=cache)
def scale(x, chunks):
    runs.append(chunks)
    for part in x.chunk(chunks):
        part.mul_(1.0001)


if phase == "load":
    lines = disttune.load_table(table, cache_dir=cache)
    assert len(lines) == 2 and all(line.startswith("wrote scale") for line in lines), lines
x = torch.ones(1 << 22, device="cuda")
for n in (1 << 22, 1 << 18):
    scale(x[:n])
    torch.cuda.synchronize()
    print(scale.last_report.source, len(runs))
"""


def test_a_table_from_a_gpu_tuning_makes_every_first_call_a_hit_in_another_cache(tmp_path):
    tuned, shipped, table = tmp_path / "tuned", tmp_path / "shipped", tmp_path / "table.json"

    def program(cache, phase):
        done = subprocess.run([sys.executable, "-c", _TABLE_PROGRAM, str(cache), str(table), phase],
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        return done.stdout.split()

    program(tuned, "tune")
    done = subprocess.run([sys.executable, "-m", "disttune", "export", str(table), "--root", str(tuned)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "exported 2 records" in done.stdout, done.stderr
    # The other cache: both keys are read from disk (records the table import wrote), and only
    # the two calls themselves run.
    assert program(shipped, "load") == ["table", "1", "table", "2"]
