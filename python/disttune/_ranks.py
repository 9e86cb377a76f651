"""The engine's Communicator over a torch.distributed ProcessGroup (NCCL, gloo, HCCL, ...).

Every collective is an asynchronous torch.distributed call polled against the engine's
deadline; a missed deadline raises CollectiveTimeout naming the phase. Bytes travel as
uint8 tensors with their sizes gathered first (no pickling)."""

from __future__ import annotations

import socket
import sys
import time
from typing import Any, Optional

from disttune import _core
from disttune._missing_ranks import MissingRanks

_communicators: dict[int, tuple[Any, Any]] = {}

# Polling a pending collective: the pause starts at 20 us and doubles, up to 50 us during
# the first POLL_FAST_WINDOW_S of the wait (collectives between candidates usually complete
# then: a late poll there idles every rank's device), then up to POLL_PAUSE_MAX_S.
POLL_FAST_WINDOW_S = 0.01
POLL_PAUSE_MAX_S = 2e-3


def torch_distributed() -> Any:
    """torch.distributed when torch is imported and has it, else None."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    import torch.distributed as dist

    return dist if dist.is_available() else None


# Passed as a tuning's group: this rank tunes alone, whatever torch.distributed holds (a
# sweep splits keys, not candidates, across ranks).
ALONE = object()


def default_group() -> Optional[Any]:
    """torch's default group when torch.distributed is initialised with more than one rank."""
    dist = torch_distributed()
    if dist is None or not dist.is_initialized() or dist.get_world_size() <= 1:
        return None
    return dist.group.WORLD


def communicator_for(group: Any) -> Any:
    """The engine Communicator over `group` (made once per group and kept)."""
    held = _communicators.get(id(group))
    if held is not None and held[0] is group:
        return held[1]
    communicator = _GroupCollectives(group).communicator()
    _communicators[id(group)] = (group, communicator)
    return communicator


def _default_timeout_s() -> float:
    # The engine reads and checks TRITON_DIST_AUTOTUNE_TIMEOUT (inf when there is no deadline).
    return _core.collective_timeout_setting_s()


class _GroupCollectives:
    """The four collectives the engine needs, on one ProcessGroup."""

    def __init__(self, group: Any) -> None:
        dist = torch_distributed()
        if dist is None or not dist.is_initialized():
            raise _core.EngineError("disttune: autotune_pg needs torch.distributed to be initialised")
        self._torch = sys.modules["torch"]
        self._dist = dist
        self._group = group
        self._rank = dist.get_rank(group)
        self._size = dist.get_world_size(group)
        if self._rank < 0:
            raise _core.InvalidSetting("disttune: this process is not a member of autotune_pg")
        self._device = self._collective_device(str(dist.get_backend(group)))
        self._missing = MissingRanks(group, self._rank, self._size)
        self._waits = 0  # collectives waited on so far: the same sequence on every rank

    def communicator(self) -> Any:
        local_rank = self._local_rank()
        return _core.make_callback_communicator(
            self._rank, self._size, local_rank, self.barrier, self.all_reduce_max, self.all_gather
        )

    def _collective_device(self, backend: str) -> Any:
        torch = self._torch
        if "gloo" in backend or "mpi" in backend:
            return torch.device("cpu")
        if "nccl" in backend:
            return torch.device("cuda", torch.cuda.current_device())
        if "hccl" in backend:
            return torch.device("npu", torch.npu.current_device())
        return torch.device("cpu")

    def _local_rank(self) -> int:
        hostname = socket.gethostname().encode()
        hosts = self._gather(hostname, _default_timeout_s(), "local rank roll call")
        return sum(1 for host in hosts[: self._rank] if host == hostname)

    def _wait(self, work: Any, seconds_left: float, what: str) -> None:
        began = time.monotonic()
        deadline = began + seconds_left
        pause = 20e-6
        self._waits += 1
        while not work.is_completed():
            now = time.monotonic()
            if now > deadline:
                raise _core.CollectiveTimeout(
                    f"disttune: {what} did not complete before its deadline on rank {self._rank} "
                    f"of {self._size} (torch.distributed backend {self._dist.get_backend(self._group)}); "
                    + self._missing.after_lost_collective(self._waits)
                )
            time.sleep(pause)
            pause = min(pause * 2, 50e-6 if now - began < POLL_FAST_WINDOW_S else POLL_PAUSE_MAX_S)
        try:
            work.wait()
        except RuntimeError as error:  # e.g. gloo: a peer's connection closed (the peer died)
            raise RuntimeError(
                f"disttune: {what} failed on rank {self._rank} of {self._size} (torch.distributed "
                f"backend {self._dist.get_backend(self._group)}): {error}; "
                + self._missing.after_lost_collective(self._waits)
            ) from error

    def _all_reduce(self, tensor: Any, op: Any, seconds_left: float, what: str) -> Any:
        work = self._dist.all_reduce(tensor, op=op, group=self._group, async_op=True)
        self._wait(work, seconds_left, what)
        return tensor

    def _gather(self, data: bytes, seconds_left: float, what: str) -> list[bytes]:
        torch = self._torch
        deadline = time.monotonic() + seconds_left
        size = torch.tensor([len(data)], dtype=torch.int64, device=self._device)
        sizes = [torch.zeros_like(size) for _ in range(self._size)]
        work = self._dist.all_gather(sizes, size, group=self._group, async_op=True)
        self._wait(work, deadline - time.monotonic(), what)
        lengths = [int(s.item()) for s in sizes]
        longest = max(lengths)
        payload = torch.zeros(longest, dtype=torch.uint8, device=self._device)
        if data:
            payload[: len(data)] = torch.tensor(list(data), dtype=torch.uint8, device=self._device)
        payloads = [torch.zeros_like(payload) for _ in range(self._size)]
        work = self._dist.all_gather(payloads, payload, group=self._group, async_op=True)
        self._wait(work, deadline - time.monotonic(), what)
        return [bytes(p[:n].cpu().tolist()) for p, n in zip(payloads, lengths)]

    def barrier(self, context: Any) -> None:
        torch = self._torch
        token = torch.zeros(1, dtype=torch.float64, device=self._device)
        self._all_reduce(token, self._dist.ReduceOp.SUM, context.seconds_left, context.describe())

    def all_reduce_max(self, values: list[float], context: Any) -> list[float]:
        torch = self._torch
        tensor = torch.tensor(values, dtype=torch.float64, device=self._device)
        op = self._dist.ReduceOp.MAX
        return self._all_reduce(tensor, op, context.seconds_left, context.describe()).cpu().tolist()

    def all_gather(self, data: bytes, context: Any) -> list[bytes]:
        return self._gather(data, context.seconds_left, context.describe())

