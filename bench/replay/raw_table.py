"""The raw replay table that record_table.py and bench/python/pipeline_bench.py write and
canonical_table.py reads: configs as Triton's fields, each entry's compile seconds and either
its timed samples or why it failed, and the device and software it was recorded on."""

FORMAT = "disttune.replay_table.raw"
VERSION = 1


def raw_entry(config, compile_s: float, samples_ms=None, reason=None) -> dict:
    """One config's entry: "ok" with `samples_ms` (may be filled later), or "failed" with `reason`."""
    entry = {"config_raw": {"kwargs": config.kwargs, "num_warps": config.num_warps, "num_stages": config.num_stages},
             "status": "failed" if reason else "ok", "compile_s": round(compile_s, 4)}
    entry.update({"reason": reason} if reason else {"samples_ms": [round(ms, 5) for ms in samples_ms or []]})
    return entry


def failure_text(error: BaseException) -> str:
    """A failure's reason as an entry keeps it: its type and first line, at most 300 characters."""
    return f"{type(error).__name__}: {error}".splitlines()[0][:300]


def device_facts() -> dict:
    """The device (CUDA device 0) and software a table is recorded with."""
    import torch
    import triton

    props = torch.cuda.get_device_properties(0)
    return {"device": {"name": props.name, "sm_count": props.multi_processor_count,
                       "capability": f"{props.major}.{props.minor}"},
            "software": {"torch": torch.__version__, "triton": triton.__version__, "cuda": torch.version.cuda}}


def raw_table(kernel: str, problem: dict, method: str, entries: list, facts: dict) -> dict:
    """The whole table; `facts` as device_facts() gives them."""
    return {"format": FORMAT, "version": VERSION, "kernel": kernel, "problem": problem, **facts, "method": method,
            "entries": entries}
