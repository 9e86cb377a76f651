# A tuning that survives bad configs (CPU, no GPU needed): one config segfaults, one hangs, one
# computes a wrong sum; the launcher accumulates into its output in place. Isolated runs,
# a reference and restore_value keep the tuning, the caller and the caller's tensor right.
import ctypes
import time

import torch

from disttune.tune import autotune


def expected(x, out):
    """The reference: what the launcher must return for the caller's arguments."""
    return out + x.sum()


# The worker imports this script as a module (multiprocessing's spawn), so the launcher is a
# top-level function and the script's work sits under `if __name__ == "__main__"`.
@autotune(
    config_space=[{"chunk": 0}, {"chunk": -1}, {"chunk": 1 << 12}, {"chunk": 1 << 10}, {"chunk": 1 << 16}],
    key_fn=lambda x, out: (tuple(x.shape), str(x.dtype)),
    isolate=True,
    candidate_timeout_s=5,
    reference=expected,
    restore_value=["out"],
    disk_cache=False,
)
def add_sum_into(x, out, chunk):
    if chunk == 0:
        ctypes.string_at(0)  # a crash: the worker dies with SIGSEGV
    if chunk < 0:
        while True:  # a hang: timed out after 5 s
            time.sleep(1)
    total = sum(x[start : start + chunk].sum() for start in range(0, x.numel(), chunk))
    if chunk == 1 << 12:
        total = 2 * total  # a wrong result
    out += total  # in place: without restore_value every run would add again
    return out


if __name__ == "__main__":
    x = torch.arange(1 << 18, dtype=torch.float64)
    out = torch.zeros(1, dtype=torch.float64)
    result = add_sum_into(x, out, autotune_verbose=True)
    print("result:", float(result[0]), "expected:", float(x.sum()))
    for candidate in add_sum_into.last_report.candidates:
        print(candidate.config, "failed: " + candidate.error.splitlines()[-1] if candidate.failed else "ok")
