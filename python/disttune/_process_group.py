"""The process group of an isolated worker: what its configs start is counted and killed with it.

The worker leads a group of its own (os.setpgid), so the caller kills the worker and everything
its configs started, and their children, with one os.killpg. Linux /proc is read to count the
live members; elsewhere the count is 0 (no bound is enforced, the group is still killed)."""

from __future__ import annotations

import ctypes
import os
import signal
import time

# The most processes a worker's group may hold (the worker, what its configs started, and what
# those started); a candidate after which it holds more fails, and the group is killed.
MAX_WORKER_PROCESSES = 256


def members(group: int) -> list[int]:
    """The live (not zombie) processes of process group `group`."""
    found = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for name in entries:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                text = stat.read(512)
        except OSError:
            continue  # gone meanwhile
        # "pid (comm) state ppid pgrp ...": comm may hold spaces and ')'.
        fields = text[text.rfind(b")") + 2 :].split()
        if len(fields) >= 3 and int(fields[2]) == group and fields[0] not in (b"Z", b"X"):
            found.append(int(name))
    return found


def kill_group(group: int) -> None:
    """SIGKILL to every process of `group`, again while members fork (a bounded number of times)."""
    for _ in range(100):
        try:
            os.killpg(group, signal.SIGKILL)
        except ProcessLookupError:
            return
        except PermissionError:
            return
        if not members(group):
            return
        time.sleep(0.001)


def lead_own_group() -> None:
    """In a worker: leads a process group of its own, and (Linux) becomes the reaper of the
    orphans its configs leave, so that kill_strays() reaps them too."""
    os.setpgid(0, 0)
    try:
        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass  # not Linux: orphans go to init, which reaps them


def kill_strays(keep: set[int]) -> None:
    """In a worker: SIGKILL to every process of its own group but `keep`; reaps those that are
    its children (with lead_own_group(), every orphan is)."""
    group = os.getpgid(0)
    killed = []
    for _ in range(100):
        strays = [pid for pid in members(group) if pid not in keep]
        if not strays:
            break
        for pid in strays:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
            except ProcessLookupError:
                pass
    for pid in killed:
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass  # not its child (reaped by its own parent)
