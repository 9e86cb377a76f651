"""One bucket of bench/python/many_shapes.py tuned alone over the full space (warm start off),
in fresh Triton and disttune caches: keeps the tuning's record (every candidate's samples and
the timer's clocks: gapped and host-bound runs, the lead) and checks the choice against the
interleaved oracle. What BENCHMARKS.md's session-9 single tunings ran.

    python3 bench/python/one_bucket.py constexpr 16 --record rec.json   # about 40 s on an H200

Prints the oracle's JSON (best config, the choice's ratio to it) on stdout.
"""

import argparse
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("variant", choices=("constexpr", "runtime"))
    parser.add_argument("m", type=int, help="the bucket's M (N = K = 4096)")
    parser.add_argument("--record", help="where to copy the tuning's record")
    args = parser.parse_args()
    scratch = tempfile.mkdtemp(prefix="one-bucket-")
    os.environ.update(TRITON_CACHE_DIR=os.path.join(scratch, "triton"),
                      TRITON_DIST_AUTOTUNE_CACHE_DIR=os.path.join(scratch, "disttune"),
                      TRITON_DIST_AUTOTUNE_WARM_START="0")
    import many_shapes
    import many_shapes_kernels
    from disttune import _encoding

    tuned = many_shapes.tuned_matmul(args.variant)
    operands = many_shapes_kernels.operands(args.m, many_shapes.N, many_shapes.K)
    start = time.monotonic()
    tuned(*operands)
    print(f"tuning took {time.monotonic() - start:.1f} s", file=sys.stderr)
    record = many_shapes.records_by_m()[args.m]
    print(f"clocks: {json.dumps(record.get('clocks', {}))}", file=sys.stderr)
    if args.record:
        with open(args.record, "w") as out:
            json.dump(record, out)
    chosen = _encoding.entry_text(tuned.cache[(args.m, many_shapes.N, many_shapes.K)])
    print(json.dumps(many_shapes.oracle(args.variant, args.m, {"engine": chosen})))
    return 0


if __name__ == "__main__":
    sys.exit(main())
