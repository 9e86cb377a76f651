"""What the engine itself costs per new key of a function that already has many stored keys
(CPU, a no-op launcher, the host clock): a sweep over many shapes pays this on top of its
measurements. Each new key looks its function's records up for a warm start (when on), tunes
the space (`--configs` configs, the spec's 5 warm-up and 10 timed runs each, or fewer when warm
started) and writes its record and log. Reported per block of keys, as the store fills up.

    python bench/python/many_keys_host.py [--keys 1200] [--block 200] [--configs 32]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

CHILD = """
import os, sys, time
from disttune.tune import autotune
keys, block, configs = (int(a) for a in sys.argv[1:4])
space = [{"c": i} for i in range(configs)]

@autotune(config_space=space, key_fn=lambda n, **flags: n)
def launch(n, c):
    return None

for first in range(0, keys, block):
    begin = time.perf_counter()
    for n in range(first, first + block):
        launch(n, autotune=True)
    print(first, (time.perf_counter() - begin) / block * 1e3, flush=True)
"""


def run(warm_start: str, args: argparse.Namespace) -> list[tuple[int, float]]:
    """(first key of the block, host ms per new key) for each block, in a fresh process and cache."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, TRITON_DIST_AUTOTUNE_CACHE_DIR=cache, TRITON_DIST_AUTOTUNE_WARM_START=warm_start)
        out = subprocess.run(
            [sys.executable, "-c", CHILD, str(args.keys), str(args.block), str(args.configs)],
            env=env, check=True, capture_output=True, text=True,
        ).stdout
    return [(int(first), float(ms)) for first, ms in (line.split() for line in out.splitlines())]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=1200)
    parser.add_argument("--block", type=int, default=200)
    parser.add_argument("--configs", type=int, default=32)
    args = parser.parse_args()
    began = time.perf_counter()
    on, off = run("1", args), run("0", args)
    print(f"host ms per new key ({args.configs} configs, no-op launcher, CPU timer)")
    print(f"{'keys already stored':>20} | {'warm start on':>13} | {'warm start off':>14}")
    for (first, ms_on), (_, ms_off) in zip(on, off):
        print(f"{f'{first}-{first + args.block - 1}':>20} | {ms_on:13.2f} | {ms_off:14.2f}")
    print(f"({time.perf_counter() - began:.0f} s)")


if __name__ == "__main__":
    main()
