import functools, glob, json, os, sys, tempfile
sys.path.insert(0, "bench/python")
variant, m = sys.argv[1], int(sys.argv[2])
scratch = tempfile.mkdtemp()
os.environ.update(TRITON_CACHE_DIR=scratch + "/triton", TRITON_DIST_AUTOTUNE_CACHE_DIR=scratch + "/dt",
                  TRITON_DIST_AUTOTUNE_WARM_START="0")
import torch
import many_shapes as ms
import many_shapes_kernels as k
from disttune import _encoding
tuned = ms.tuned_matmul(variant)
a, b, c = k.operands(m, 4096, 4096)
import time
t = time.monotonic(); tuned(a, b, c); print("tuning s", time.monotonic() - t, file=sys.stderr)
rec = json.load(open(glob.glob(scratch + "/dt/*/*.json")[0]))
json.dump(rec, open(os.environ["OUT"] + f"/rec_{variant}_{m}.json", "w"))
chosen = _encoding.entry_text(tuned.cache[(m, 4096, 4096)])
print(json.dumps(ms.oracle(variant, m, {"engine": chosen})))
