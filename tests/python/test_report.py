"""`disttune report`: the HTML page of real records, rendered by headless Chromium (Debian's
`chromium`, installed by scripts/setup.sh): the screenshot is not blank, the page names
every config, marks the failure and the choice, and fetches nothing."""

import re
import shutil
import struct
import subprocess
import sys
import zlib

from disttune.tune import autotune

from launchers import COST_TIMER, CountingLauncher, key_fn

SPACE = [
    {"tag": "slow", "speed": 2.0},
    {"tag": "fast", "speed": 0.2},
    {"tag": "broken", "speed": 0.0},
    {"tag": "middle", "speed": 1.0},
]


def chromium():
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    assert path, "headless Chromium is needed: apt-get install chromium (scripts/setup.sh does)"
    return [path, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            "--disable-background-networking", "--no-first-run", "--no-default-browser-check"]


def png_pixels(path):
    """The decompressed scanlines of a PNG (filter bytes included) and its width, height."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    position, idat, size = 8, b"", None
    while position < len(data):
        (length,) = struct.unpack(">I", data[position:position + 4])
        kind = data[position + 4:position + 8]
        body = data[position + 8:position + 8 + length]
        if kind == b"IHDR":
            size = struct.unpack(">II", body[:8])
        elif kind == b"IDAT":
            idat += body
        position += 12 + length
    return zlib.decompress(idat), size


def tuned_records(root):
    @autotune(config_space=SPACE, key_fn=key_fn, cache_dir=str(root), timer=COST_TIMER)
    def launch(x, alpha=1.0, speed=0.0, tag=None):
        if tag == "broken":
            raise RuntimeError("out of resources")
        return CountingLauncher()(x, alpha, speed, tag)

    launch(1)
    launch(2)


def test_report_renders_every_config_the_failure_and_the_choice(tmp_path):
    root = tmp_path / "cache"
    tuned_records(root)
    page = tmp_path / "report.html"
    done = subprocess.run([sys.executable, "-m", "disttune", "report", str(page), "--root", str(root)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "2 records, 0 bad files" in done.stdout
    html = page.read_text()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", html), "the page fetches from the network"
    assert "<script" not in html

    dom = subprocess.run(chromium() + ["--dump-dom", page.as_uri()], capture_output=True, text=True,
                         timeout=180)
    assert dom.returncode == 0, dom.stderr[-2000:]
    text = dom.stdout
    for entry in SPACE:
        config = f'{{"speed":{entry["speed"]},"tag":"{entry["tag"]}"}}'
        assert text.count(config.replace('"', "&quot;")) + text.count(config) >= 2, config
    assert "failed: " in text and "out of resources" in text
    assert text.count("chosen") >= 2  # one chosen row per key
    for key in (1, 2):
        assert f'key <code>{{"$tuple":[{key}]}}</code>' in text

    shot = tmp_path / "report.png"
    done = subprocess.run(chromium() + [f"--screenshot={shot}", "--window-size=1200,1400", page.as_uri()],
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0 and shot.exists(), done.stderr[-2000:]
    pixels, (width, height) = png_pixels(shot)
    assert (width, height) == (1200, 1400)
    # A blank page filters to (nearly) one byte value; text, dots and bars give many.
    assert len(set(pixels)) > 64, f"the screenshot looks blank ({len(set(pixels))} byte values)"
