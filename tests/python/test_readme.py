"""README.md's first Python example, as written, runs on the CPU against the installed package
and does what its comments say."""

import os
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_example():
    """The fenced block after the marker `<!-- README example: python`, without its fences."""
    lines = README.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("<!-- README example: python"))
    assert lines[start + 1] == "```python"
    end = lines.index("```", start + 2)
    return "\n".join(lines[start + 2:end]) + "\n"


def run_example(tmp_path):
    script = tmp_path / "example.py"
    script.write_text(readme_example())
    environment = dict(os.environ, TRITON_DIST_AUTOTUNE_CACHE_DIR=str(tmp_path / "cache"))
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300, env=environment, cwd=tmp_path)


def test_the_readme_example_tunes_on_the_cpu_then_hits_and_stores_the_choice(tmp_path):
    done = run_example(tmp_path)
    assert done.returncode == 0, done.stderr
    first, second, best = done.stdout.splitlines()
    assert first == second == str(sum(range(200_000)))
    assert best in {"{'chunk': %d}" % chunk for chunk in (16, 256, 4096, 65536)}
    assert "disttune: total key" in done.stderr  # the table autotune_verbose printed
    assert len(list((tmp_path / "cache" / "total").glob("*.json"))) == 1
    again = run_example(tmp_path)  # a new process: the record on disk answers, no table
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines()[2] == best
