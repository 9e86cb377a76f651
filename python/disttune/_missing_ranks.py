"""Which ranks of a torch.distributed group never reached a collective that missed its
deadline (or failed: gloo notices a dead peer), told through the group's key-value store
(TCPStore) after the fact.

Every rank whose n-th engine collective is lost writes one key for it and waits a short
grace for the keys of the others: a rank that is alive and waiting at the same collective
loses it too and writes its key; a rank that was killed, hangs inside a launcher or is far
behind writes none, and is named. Nothing is written while collectives succeed, so this
costs nothing until one is lost."""

from __future__ import annotations

import datetime
import sys
from typing import Any

# How long a rank that missed a deadline waits for the others' keys.
GRACE_S = 2.0


class MissingRanks:
    """The roll call of one group (one instance per engine communicator)."""

    def __init__(self, group: Any, rank: int, size: int) -> None:
        self._group = group
        self._rank = rank
        self._size = size
        self._prefix = f"disttune/late/{self._group_tag(group)}"

    @staticmethod
    def _group_tag(group: Any) -> str:
        import torch.distributed as dist

        name = getattr(group, "group_name", None)
        if name:
            return str(name)
        ranks = dist.get_process_group_ranks(group) if hasattr(dist, "get_process_group_ranks") else "world"
        return str(ranks).replace(" ", "")

    def _store(self) -> Any:
        c10d = sys.modules["torch.distributed"].distributed_c10d
        return c10d._get_default_store()

    def after_lost_collective(self, collective: int) -> str:
        """Call on a rank whose `collective`-th collective missed its deadline or failed: a
        sentence naming the ranks that never reached it, or saying why that is unknown."""
        try:
            missing = self._roll_call(collective)
        except Exception as error:  # the store is on a dead rank, or gone: say so
            return f"the missing rank(s) could not be told: the group's store did not answer ({error})"
        if not missing:
            return f"every rank reached it (all {self._size} ranks lost the same collective)"
        names = ", ".join(str(rank) for rank in missing)
        return (f"ranks that did not arrive: {names} (no sign of {'it' if len(missing) == 1 else 'them'} at this "
                f"collective within {GRACE_S:g} s of the deadline: killed, hung in a launcher, or far behind)")

    def _roll_call(self, collective: int) -> list[int]:
        import time

        store = self._store()
        key = f"{self._prefix}/{collective}/"
        previous = store.timeout if hasattr(store, "timeout") else None
        store.set_timeout(datetime.timedelta(seconds=GRACE_S + 1))
        try:
            store.set(key + str(self._rank), b"1")
            deadline = time.monotonic() + GRACE_S
            missing = []
            for rank in range(self._size):
                if rank == self._rank:
                    continue
                left = max(0.01, deadline - time.monotonic())
                try:
                    store.wait([key + str(rank)], datetime.timedelta(seconds=left))
                except Exception as error:
                    if not _is_timeout(error):
                        raise
                    missing.append(rank)
            return missing
        finally:
            if previous is not None:
                store.set_timeout(previous)


def _is_timeout(error: Exception) -> bool:
    text = str(error).lower()
    return "timeout" in text or "timed out" in text
