"""Where a drop-in tuning's time went: one entry per kernel and key (compiles, waits on them,
measurement, host and device), kept for the process and, with TRITON_DIST_AUTOTUNE_TIMELINE
set, appended to that file as one JSON line per tuning."""

from __future__ import annotations

import json
import os
import threading
from typing import Any

_lock = threading.Lock()
_entries: list[dict] = []


def entries() -> list[dict]:
    """This process's tunings so far, in order (a copy)."""
    with _lock:
        return list(_entries)


def clear() -> None:
    with _lock:
        _entries.clear()


def _busy_s(spans: list[tuple[float, float]]) -> float:
    """Seconds covered by at least one of `spans` (start, end)."""
    busy, reach = 0.0, float("-inf")
    for start, end in sorted(spans):
        if end > reach:
            busy += end - max(start, reach)
            reach = end
    return busy


def note(kernel: str, key: str, strategy: str, report: Any, compiles: Any, began: float, ended: float) -> dict:
    """Keeps (and writes, with the setting) the timeline of one tuning: `compiles` is its
    KernelCompiles, `began`/`ended` the tuning's perf_counter() seconds."""
    from disttune import _core

    events = sorted(compiles.events, key=lambda event: event[1])
    device_ms = sum(sum(result.samples) for result in report.candidates)
    entry = {
        "kernel": kernel,
        "key": key,
        "source": report.source,
        "strategy": strategy,
        "configs": len(report.candidates),
        "measured": sum(1 for result in report.candidates if result.measured),
        "failed": sum(1 for result in report.candidates if result.failed),
        "compiled": len(events),
        "stages_reused": compiles.stages_reused,
        "total_s": ended - began,
        "compile_busy_s": _busy_s([(start, end) for _, start, end in events]),
        "compile_cpu_s": sum(end - start for _, start, end in events),
        "waited_on_compiles_s": compiles.waited_s,
        "measure_s": max(0.0, ended - began - compiles.waited_s),
        "device_s": device_ms / 1000.0,
        "compiles": [{"config": index, "start_s": start - began, "end_s": end - began}
                     for index, start, end in events],
    }
    with _lock:
        _entries.append(entry)
    path = _core.timeline_setting()
    if path:
        line = json.dumps(entry) + "\n"
        with _lock:
            descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(descriptor, line.encode())
            finally:
                os.close(descriptor)
    return entry


def table(rows: list[dict]) -> str:
    """The timelines as a text table: one row per kernel and key."""
    header = ("kernel", "source", "strategy", "configs", "compiled", "measured", "total s", "waits s",
              "measure s", "device s", "compile busy s")
    lines = [header]
    for row in rows:
        lines.append((row["kernel"][:40], row["source"], row["strategy"], str(row["configs"]), str(row["compiled"]),
                      str(row["measured"]), f"{row['total_s']:.3f}", f"{row['waited_on_compiles_s']:.3f}",
                      f"{row['measure_s']:.3f}", f"{row['device_s']:.4f}", f"{row['compile_busy_s']:.3f}"))
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    return "\n".join("  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip() for line in lines) + "\n"
