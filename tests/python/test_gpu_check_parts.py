"""scripts/gpu_check.sh --parts: the check's parts (each fits one device call) hold every step,
and a step left out of them is refused by name (no GPU needed: --parts runs no step)."""

import os
import subprocess

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
SCRIPT = os.path.join(ROOT, "scripts", "gpu_check.sh")


def parts(script, tmp_path):
    env = dict(os.environ, OUT=str(tmp_path / "out"), DISTTUNE_GPU_BUILD_DIR=str(tmp_path / "build"))
    return subprocess.run(["bash", script, "--parts"], env=env, capture_output=True, text=True, timeout=60)


def test_every_step_is_in_a_part(tmp_path):
    done = parts(SCRIPT, tmp_path)
    assert done.returncode == 0, done.stderr
    listed = done.stdout.splitlines()
    assert listed[0].startswith("part 1: step_build ") and len(listed) >= 9
    assert any(line.endswith(": step_real_libs_fla") for line in listed)


def test_a_step_in_no_part_is_refused_by_name(tmp_path):
    copy = tmp_path / "scripts" / "gpu_check.sh"
    copy.parent.mkdir()
    text = open(SCRIPT).read()
    marker = "# The check in parts"
    assert marker in text
    copy.write_text(text.replace(marker, "step_unplaced() { :; }\nSTEPS+=(step_unplaced)\n" + marker, 1))
    done = parts(str(copy), tmp_path)
    assert done.returncode == 1
    assert "gpu_check: step_unplaced is in no part" in done.stderr
