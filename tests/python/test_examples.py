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
