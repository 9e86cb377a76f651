# A CPU variant of the spec's function-level example: no GPU and no Triton needed. The
# launcher scales a tensor in chunks; the chunk size and the thread count are tuned.
import torch

from disttune.tune import autotune, to_hashable


def config_space():
    return [
        {"chunk": chunk, "threads": threads}
        for chunk in (1 << 12, 1 << 15, 1 << 18)
        for threads in (1, 2)
    ]


def key_fn(x, alpha, *args, **kwargs):
    return to_hashable(x)


def prune_fn(entry, x, alpha, *args, **kwargs):
    return entry["chunk"] <= x.numel()


@autotune(config_space=config_space(), key_fn=key_fn, prune_fn=prune_fn)
def scale(x, alpha, chunk, threads):
    torch.set_num_threads(threads)
    y = torch.empty_like(x)
    for start in range(0, x.numel(), chunk):
        torch.mul(x[start : start + chunk], alpha, out=y[start : start + chunk])
    return y


if __name__ == "__main__":
    x = torch.randn(1 << 18, dtype=torch.float32)
    y = scale(x, 2.5, autotune=True, autotune_verbose=True)
    torch.testing.assert_close(y, 2.5 * x, atol=1e-5, rtol=1e-4)
    print("chosen:", scale.cache[key_fn(x, 2.5)])
