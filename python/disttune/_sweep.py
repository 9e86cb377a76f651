"""Tuning a list of keys ahead of time: on one process, across the GPUs of a node, across nodes.

    from disttune import sweep
    summary = sweep(matmul, [lambda m=m: ((make_x(m), w), {}) for m in sizes])

Each item gives one call's arguments: a callable returning ``(args, kwargs)`` (tensors made
only when that key is tuned) or the positional arguments themselves (a tuple or list). With
torch.distributed initialised with several ranks (``torchrun``, ``mpirun``), item i is tuned
by rank ``i % world`` alone (no collective per key: one rank per GPU), every record goes to the
stores (the directory, and Redis when set: the way several nodes share them), the ranks meet
once, and then every rank reads every key from the stores, so each returns with the whole
sweep in its tuned function's cache. ``table=`` also writes the records into one table (the
``disttune export`` format) on rank 0. Keys whose records are stored already are read, not
tuned (a sweep resumes where it stopped). Keys are tuned one after another, so each new key
starts from the records of the keys before it (warm start, docs/many-shapes.md).
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Optional, Union

from disttune import _core, _encoding, _ranks
from disttune._function_tuning import FunctionTuning

__all__ = ["sweep", "SweepSummary", "KeyOutcome"]

Item = Union[Callable[[], tuple], tuple, list]

# How long a sweep's claim on a key lasts unless renewed (its sweep renews it every third).
CLAIM_LEASE_S = 60.0
# How often a sweep looks again at keys that other sweeps have claimed.
_CLAIM_POLL_S = 0.2


@dataclass(frozen=True)
class KeyOutcome:
    """What happened to one key on this rank."""

    key: str  # the canonical key text
    source: str  # "tuned"; "disk", "redis" or "table" (read from a store); "memory" (in the process's cache)
    seconds: float  # wall time of the tuning or the read, making the arguments included
    measured: int  # candidates measured (0 when read)
    warm_start_from: tuple[str, ...]  # the neighbouring keys it started from


@dataclass
class SweepSummary:
    """The keys this rank tuned or read (its share in item order, then, with several ranks,
    the other ranks' keys it read), and the sweep's totals."""

    rank: int
    world: int
    outcomes: list[KeyOutcome] = field(default_factory=list)
    seconds: float = 0.0  # the whole sweep on this rank, the meeting and the reads included
    keys_total: int = 0  # items in the sweep (all ranks)
    table: Optional[str] = None  # the table written (rank 0 only)

    @property
    def tuned(self) -> list[KeyOutcome]:
        return [o for o in self.outcomes if o.source == "tuned"]

    def text(self) -> str:
        """A few lines: keys tuned and read, time spent tuning, the slowest keys."""
        tuned = self.tuned
        spent = sum(o.seconds for o in tuned)
        warm = sum(1 for o in tuned if o.warm_start_from)
        lines = [
            f"disttune sweep, rank {self.rank} of {self.world}: {len(self.outcomes)} of {self.keys_total} keys; "
            f"{len(tuned)} tuned ({warm} warm-started) in {spent:.2f} s, "
            f"{len(self.outcomes) - len(tuned)} already stored; {self.seconds:.2f} s in all"
        ]
        for outcome in sorted(tuned, key=lambda o: -o.seconds)[:3]:
            lines.append(f"  {outcome.seconds:8.2f} s  {outcome.measured:4d} measured  key {outcome.key}")
        if self.table:
            lines.append(f"  table: {self.table}")
        return "\n".join(lines)


def made_by_autotune(candidate: Any) -> bool:
    """Whether `candidate` is a function made by disttune.autotune (what a sweep tunes)."""
    return isinstance(getattr(candidate, "tuning", None), FunctionTuning) and hasattr(candidate, "key_fn")


def _call_arguments(item: Item, index: int) -> tuple[tuple, dict]:
    if callable(item):
        made = item()
        if not (isinstance(made, tuple) and len(made) == 2 and isinstance(made[1], dict)):
            raise _core.InvalidSetting(
                f"disttune: sweep item {index} must return (args, kwargs), got {type(made).__name__}"
            )
        return tuple(made[0]), dict(made[1])
    if isinstance(item, (tuple, list)):
        return tuple(item), {}
    raise _core.InvalidSetting(
        f"disttune: sweep item {index} must be a callable returning (args, kwargs) or a tuple of "
        f"arguments, got {type(item).__name__}"
    )


class _Progress:
    """One line on stderr rewritten per key (rank 0 only, and only on a terminal)."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.total = total
        self.enabled = enabled and sys.stderr.isatty()
        self.done = 0
        self.start = time.monotonic()

    def step(self, outcome: KeyOutcome) -> None:
        self.done += 1
        if not self.enabled:
            return
        width = 30
        filled = width * self.done // max(self.total, 1)
        elapsed = time.monotonic() - self.start
        sys.stderr.write(
            f"\rdisttune sweep [{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} "
            f"{elapsed:6.1f} s  {outcome.source:5s} {outcome.key[:40]}"
        )
        if self.done == self.total:
            sys.stderr.write("\n")
        sys.stderr.flush()


def _resolve(tuned: Any, item: Item, index: int, claims: Any) -> Union[KeyOutcome, str]:
    """Tunes (or reads from the stores) the key of one item on this rank alone; the name of
    the key's claim, with nothing done, while another sweep's claim on it lives."""
    start = time.monotonic()
    args, kwargs = _call_arguments(item, index)
    key = tuned.key_fn(*args, **kwargs)
    text = _encoding.key_text(key)
    tuning = tuned.tuning
    if tuning.lookup(key) is not None:
        return KeyOutcome(text, "memory", time.monotonic() - start, 0, ())
    claim = "\0".join((tuned.name, tuned.digest, text))
    if not claims.claim(claim):
        return claim
    try:
        report = tuning.choose(key, args, kwargs)
    finally:
        claims.release(claim)
    measured = sum(1 for c in report.candidates if c.measured) if report.source == "tuned" else 0
    return KeyOutcome(text, report.source, time.monotonic() - start, measured, tuple(report.warm_start_from))


def _resolve_all(
    tuned: Any, items: list[Item], indices: Iterable[int], claims: Any, bar: Optional[_Progress]
) -> list[KeyOutcome]:
    """The outcomes of the items at `indices`: each key tuned or read in turn; a key another
    sweep has claimed is come back to after the others, until its record is stored (read
    then) or its claim ends (a dead sweep's: tuned here)."""
    outcomes = []
    waiting = list(indices)
    claim_of: dict[int, str] = {}  # item index -> its claim, held elsewhere at the last look
    while waiting:
        claimed_elsewhere = []
        for index in waiting:
            if index in claim_of:  # look at the claim before making the arguments again
                if not claims.claim(claim_of[index]):
                    claimed_elsewhere.append(index)
                    continue
                claims.release(claim_of[index])  # free: _resolve claims it for its tuning
            outcome = _resolve(tuned, items[index], index, claims)
            if isinstance(outcome, str):
                claim_of[index] = outcome
                claimed_elsewhere.append(index)
                continue
            outcomes.append(outcome)
            if bar is not None:
                bar.step(outcome)
        if claimed_elsewhere:
            time.sleep(_CLAIM_POLL_S)
        waiting = claimed_elsewhere
    return outcomes


def _world() -> tuple[int, int, Any]:
    group = _ranks.default_group()
    if group is None:
        return 0, 1, None
    dist = _ranks.torch_distributed()
    return dist.get_rank(), dist.get_world_size(), dist


def _merged_table(tuned: Any, rank: int, path: Path) -> Optional[str]:
    """On rank 0, after every rank read every key back (so rank 0's cache root holds the
    sweep's records): that root exported as one table (`disttune export`)."""
    if rank != 0:
        return None
    root = tuned.tuning.directory_root()
    if root is None:
        raise _core.EngineError(f"disttune: sweep: no directory store to export the table {path} from "
                                "(its stores have no directory)")
    try:
        _core.export_table(root, path)
    except ValueError as error:
        raise _core.EngineError(f"disttune: sweep: exporting the table {path} failed: {error}") from None
    return str(path)


def sweep(
    tuned: Any,
    items: Iterable[Item],
    *,
    table: Optional[Union[str, Path]] = None,
    progress: bool = True,
    summary: bool = True,
    claim_lease_s: float = CLAIM_LEASE_S,
) -> SweepSummary:
    """Tunes the key of every item for `tuned` (a function made by disttune.autotune) and
    returns this rank's SweepSummary (printed to stderr when `summary`).

    Items: callables returning ``(args, kwargs)``, or tuples of positional arguments (see
    the module's doc). With several torch.distributed ranks, the items are split across them
    (item i on rank i % world), each rank tunes its own alone, they meet once (a barrier of
    torch's default group), and then every rank reads every key from the stores: give them
    a store they share (the same cache directory on one node, Redis across nodes:
    TRITON_DIST_AUTOTUNE_REDIS_URL or autotune(redis_url=...)); a key no store holds for
    some rank is tuned there. `table`: rank 0 also writes the records of the sweep, gathered
    from every rank, into this file (`disttune export`'s format; it holds every record under
    rank 0's cache root). Sweeps that share a store (a cache directory, Redis) claim each
    key before tuning it, so that they split the keys: a key another sweep claimed is read
    once that sweep stores it; a claim lasts `claim_lease_s` seconds, renewed while its
    sweep lives, so a killed sweep's keys are tuned by the others after that.
    """
    if not made_by_autotune(tuned):
        raise _core.NotCallable("disttune: sweep takes a function made by disttune.autotune")
    items = list(items)
    rank, world, dist = _world()
    started = time.monotonic()
    result = SweepSummary(rank=rank, world=world, keys_total=len(items))
    bar = _Progress(len(items), progress and rank == 0)
    claims = _core.KeyClaims(claim_lease_s, **tuned.tuning.store_options)
    result.outcomes += _resolve_all(tuned, items, range(rank, len(items), world), claims, bar)
    if world > 1:
        dist.barrier()
        others = [index for index in range(len(items)) if index % world != rank]
        result.outcomes += _resolve_all(tuned, items, others, claims, None)
    if table is not None:
        result.table = _merged_table(tuned, rank, Path(table))
    result.seconds = time.monotonic() - started
    if summary:
        print(result.text(), file=sys.stderr)
    return result
