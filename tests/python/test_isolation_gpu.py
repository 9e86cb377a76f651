"""Isolated tuning of Triton kernels on a CUDA device: an illegal address, a kernel that never
ends and wrong results fail their configs in the worker; the caller's CUDA context stays good."""

import pytest
import torch

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


def test_illegal_address_endless_kernel_and_wrong_results_fail_alone():
    import isolated_gpu_launchers as launchers

    x = torch.randn(1 << 16, device="cuda")
    out = launchers.misbehaving_scale(x)
    torch.testing.assert_close(out, x * 2)
    report = launchers.misbehaving_scale.last_report
    errors = [c.error for c in report.candidates]
    assert "illegal" in errors[0].lower() or "context was lost" in errors[0], errors[0]
    assert "timed out after 20 s" in errors[1], errors[1]
    assert "differs from the reference (doubled)" in errors[2], errors[2]
    assert [c.failed for c in report.candidates] == [True, True, True, False, False]
    assert all(len(c.samples) == 10 for c in report.candidates[3:])
    # The caller's CUDA context is untouched: more work, a synchronize, another key.
    torch.testing.assert_close(launchers.misbehaving_scale(x), x * 2)
    torch.cuda.synchronize()
    y = torch.randn(1000, device="cuda", dtype=torch.float16)
    torch.testing.assert_close(launchers.misbehaving_scale(y), y * 2)
