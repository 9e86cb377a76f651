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
    assert [identity[0] for identity in tuned._tuners] == ["cuda"]
    assert len(tuned.last_report.candidates) == 32
    assert not any(candidate.failed for candidate in tuned.last_report.candidates)

    c.zero_()
    torch.testing.assert_close(contextual_method(3, 5)(a, b, c), expected, atol=0.5, rtol=0.05)
    assert matmul_autotuned.best_config in CONFIGS
