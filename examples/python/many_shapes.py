# Tuning many shapes on the CPU (docs/many-shapes.md): a batched matmul whose key buckets the
# batch size to a power of two, swept ahead of serving; later buckets warm-start from earlier
# ones, and serving with any batch size hits a tuned bucket. No GPU and no Triton needed.
import random

import torch

from disttune import buckets, sweep
from disttune.tune import autotune

WEIGHT = torch.randn(256, 256)


def config_space():
    return [
        {"rows": rows, "threads": threads, "transposed": transposed}
        for rows in (4, 8, 16, 32, 64, 128, 256, 512)
        for threads in (1, 2)
        for transposed in (False, True)
    ]


def key_fn(x):
    return (buckets.pow2(x.shape[0], low=16, high=1024), x.shape[1], x.dtype)


@autotune(config_space=config_space(), key_fn=key_fn, warmup_runs=1, timed_runs=3)
def project(x, rows, threads, transposed):
    torch.set_num_threads(threads)
    w = WEIGHT.t().contiguous().t() if transposed else WEIGHT
    out = torch.empty(x.shape[0], w.shape[1])
    for start in range(0, x.shape[0], rows):
        torch.mm(x[start : start + rows], w, out=out[start : start + rows])
    return out


def batch(size):
    """One sweep item: the arguments of a call with `size` rows, made when it is tuned."""
    return lambda: ((torch.randn(size, 256),), {})


if __name__ == "__main__":
    summary = sweep(project, [batch(16 << i) for i in range(7)])  # buckets 16 .. 1024
    for outcome in summary.outcomes:
        start = f"from {', '.join(outcome.warm_start_from)}" if outcome.warm_start_from else "in full"
        print(f"bucket {outcome.key}: {outcome.source}, {outcome.measured} configs measured ({start})")
    served = 0
    for size in random.Random(0).sample(range(1, 1025), 20):  # serving: any batch size hits
        x = torch.randn(size, 256)
        torch.testing.assert_close(project(x), x @ WEIGHT, atol=1e-3, rtol=1e-3)
        served += 1
    print(f"served {served} batch sizes, {len(project.cache)} tuned buckets")
