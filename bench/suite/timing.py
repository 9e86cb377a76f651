"""Reference timings: the oracle (each config timed for at least `min_ms` of device time,
median; the L2 cache flushed before every run, or CUDA-graph replay for launch-bound
work), the wall time of a first call, and the host time of one cached call."""

import contextlib
import math
import os
import statistics
import tempfile
import time
from typing import Callable, Iterator

import torch

FLUSH_BYTES = 256 << 20  # zeroed before each run: more than the H200's 60 MB of L2
MAX_BATCH = 20000


def _event() -> torch.cuda.Event:
    return torch.cuda.Event(enable_timing=True)


def oracle_flushed(run: Callable[[], object], min_ms: float) -> dict:
    """Per-run event pairs, the L2 cache zeroed before each run, until the runs add up to
    `min_ms`; the median run time in ms."""
    flush = torch.empty(FLUSH_BYTES, dtype=torch.int8, device="cuda")
    run()
    torch.cuda.synchronize()
    times: list[float] = []
    batch = 5
    while sum(times) < min_ms:
        pairs = []
        for _ in range(batch):
            flush.zero_()
            start, stop = _event(), _event()
            start.record()
            run()
            stop.record()
            pairs.append((start, stop))
        torch.cuda.synchronize()
        times += [start.elapsed_time(stop) for start, stop in pairs]
        per_run = max(sum(times) / len(times), 1e-6)
        batch = min(MAX_BATCH, max(5, math.ceil((min_ms - sum(times)) / per_run * 1.05)))
    return {"ms": statistics.median(times), "runs": len(times), "total_ms": sum(times)}


def capture_graph(run: Callable[[], object], launches: int) -> "torch.cuda.CUDAGraph":
    """One CUDA graph of `launches` runs (after one eager run, so that capture sees a
    compiled kernel); not replayed yet."""
    run()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(launches):
            run()
    return graph


def replays_in_turn(graphs: list, min_ms: float, turns: int) -> list[list[float]]:
    """Replays `graphs` in turn (each `turns` times per pass), an event pair per replay,
    until every graph's replays add up to `min_ms`; per graph, its replay times in ms."""
    replays: list[list[float]] = [[] for _ in graphs]
    while min(sum(times) for times in replays) < min_ms:
        pairs = []
        for _ in range(turns):
            for index, graph in enumerate(graphs):
                start, stop = _event(), _event()
                start.record()
                graph.replay()
                stop.record()
                pairs.append((index, start, stop))
        torch.cuda.synchronize()
        for index, start, stop in pairs:
            replays[index].append(start.elapsed_time(stop))
    return replays


def oracle_graph(run: Callable[[], object], min_ms: float, per_graph: int = 256) -> dict:
    """CUDA-graph replays of `per_graph` runs (warm L2, as in a loop of launches), event
    pairs per replay, until the replays add up to `min_ms`; the median per-run time in ms."""
    graph = capture_graph(run, per_graph)
    graph.replay()
    torch.cuda.synchronize()
    replays = replays_in_turn([graph], min_ms, turns=50)[0]
    return {"ms": statistics.median(replays) / per_graph, "runs": len(replays) * per_graph, "total_ms": sum(replays)}


def oracle_graph_rotated(runs: list, min_ms: float, per_graph: int = 256) -> list:
    """The launch-bound oracle: one CUDA graph of `per_graph` runs per config (warm L2, as in
    a loop of launches), replayed in turn, config after config, with an event pair per
    replay, until every config's replays add up to `min_ms`; per config the median per-run
    time in ms. Interleaving spreads a passing state of the device over every config alike:
    timed one after the other, one config caught a faster spell (issue 12, BENCHMARKS.md)."""
    graphs = []
    for run in runs:
        graphs.append(capture_graph(run, per_graph))
        graphs[-1].replay()
    torch.cuda.synchronize()
    replays = replays_in_turn(graphs, min_ms, turns=10)
    return [{"ms": statistics.median(times) / per_graph, "runs": len(times) * per_graph, "total_ms": sum(times)}
            for times in replays]


def timed_call(call: Callable[[], object]) -> tuple[float, object]:
    """(seconds, result) of call(), from an idle device until its device work is done."""
    torch.cuda.synchronize()
    begin = time.perf_counter()
    result = call()
    torch.cuda.synchronize()
    return time.perf_counter() - begin, result


def host_call_us(calls: dict, per_batch: int, batches: int) -> dict:
    """Host microseconds per call of each named callable: batches of `per_batch` calls
    from an idle device, interleaved across the callables, best batch."""
    best = {name: math.inf for name in calls}
    for _ in range(batches):
        for name, call in calls.items():
            torch.cuda.synchronize()
            begin = time.perf_counter()
            for _ in range(per_batch):
                call()
            best[name] = min(best[name], (time.perf_counter() - begin) / per_batch * 1e6)
    torch.cuda.synchronize()
    return best


@contextlib.contextmanager
def captured_stderr() -> Iterator[list]:
    """Collects what this process (C++ included) writes to file descriptor 2 inside the
    block; the text is the list's one item after the block, and is written through too."""
    text: list[str] = []
    with tempfile.TemporaryFile(mode="w+b") as sink:
        saved = os.dup(2)
        os.dup2(sink.fileno(), 2)
        try:
            yield text
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            text.append(sink.read().decode(errors="replace"))
            if text[0]:
                os.write(2, text[0].encode())
