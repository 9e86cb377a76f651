"""The CPU example runs as a program, tunes once, and a second process reads its record."""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_cpu_example_tunes_then_reads_the_disk_record(private_cache):
    example = os.path.join(ROOT, "examples", "python", "scale_cpu.py")
    env = dict(os.environ, TRITON_DIST_AUTOTUNE_CACHE_DIR=str(private_cache))
    first = subprocess.run([sys.executable, example], env=env, check=True, capture_output=True, text=True)
    assert "(tuned)" in first.stderr and "chosen:" in first.stdout
    second = subprocess.run([sys.executable, example], env=env, check=True, capture_output=True, text=True)
    assert "(from disk)" in second.stderr
    assert second.stdout == first.stdout


def test_survive_bad_configs_example_picks_a_good_config():
    example = os.path.join(ROOT, "examples", "python", "survive_bad_configs.py")
    run = subprocess.run([sys.executable, example], check=True, capture_output=True, text=True, timeout=300)
    result, expected = run.stdout.splitlines()[0].split()[1::2]
    assert result == expected
    assert "crashed (signal SIGSEGV)" in run.stdout and "timed out after 5 s" in run.stdout
    assert "differs from the reference (expected)" in run.stdout


def test_triton_dropin_example_tunes_then_reads_the_store(private_cache):
    example = os.path.join(ROOT, "examples", "python", "triton_dropin.py")
    env = dict(os.environ, TRITON_DIST_AUTOTUNE_CACHE_DIR=str(private_cache))
    first = subprocess.run([sys.executable, example], env=env, check=True, capture_output=True, text=True)
    second = subprocess.run([sys.executable, example], env=env, check=True, capture_output=True, text=True)
    assert first.stdout.endswith("(tuned)\n") and second.stdout.endswith("(disk)\n")
    assert first.stdout.split("(")[0] == second.stdout.split("(")[0]
