"""Configs that cannot run: Triton's out-of-resources check of a compiled kernel before its
first launch, and what a tuned function remembers of such configs across its keys."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Hashable, Optional

from disttune import _core

# What a candidate's failure reason starts with when the device cannot run it at all.
OUT_OF_RESOURCES = "out of resources: "
# The most stored records of other keys read for out-of-resources configs (as a warm start's).
MOST_RECORDS_READ = 256


def launch_problem(compiled: Any) -> Optional[str]:
    """Why `compiled` cannot be launched on the current device, or None. A Triton
    CompiledKernel (what `kernel.warmup(...)` returns) is loaded with Triton's own check
    (shared memory against the device limit before loading, then the threads its registers
    allow), without a launch; anything else is taken as launchable."""
    load = getattr(compiled, "_init_handles", None)
    if not callable(load):
        return None
    try:
        load()
    except Exception as error:  # Triton raises OutOfResources; a failed load is reported as is
        if type(error).__name__ == "OutOfResources":
            return OUT_OF_RESOURCES + str(error)
        return f"loading the compiled kernel failed: {error!r}"
    return None


def dtype_signature(args: tuple, kwargs: dict) -> tuple:
    """The dtypes of a call's arguments, in order: with the config, what decides whether a
    kernel fits the device (block sizes times element sizes), not the shapes."""
    values = list(args) + [kwargs[name] for name in sorted(kwargs)]
    return tuple(str(value.dtype) for value in values if hasattr(value, "dtype"))


class Unrunnable:
    """Per tuned function: configs found out of resources, by (config text, dtype signature),
    with their reason, so a later key fails them without compiling them again."""

    def __init__(self) -> None:
        self._reasons: dict[tuple[str, Hashable], str] = {}
        self._learned: set[Hashable] = set()  # dtype signatures whose stored records were read

    def reason(self, config: str, signature: Hashable) -> Optional[str]:
        return self._reasons.get((config, signature))

    def of(self, text: Callable[[int], str], signature: Hashable) -> CallUnrunnable:
        """What is known of one call's candidates: config `text(c)` of each, its dtypes
        `signature`."""
        return CallUnrunnable(self, text, signature)

    def remember(self, config: str, signature: Hashable, reason: str) -> None:
        if reason.startswith(OUT_OF_RESOURCES):
            self._reasons[(config, signature)] = reason

    def learn_from_store(self, tuner: Any, signature: Hashable) -> None:
        """Takes the out-of-resources failures that `tuner`'s stores (the directory, Redis:
        read by the engine, FunctionTuner.stored_records) hold for its function on this device,
        from the records of keys naming this call's dtypes (`signature`), whose fit is this
        call's; once per signature."""
        if signature in self._learned:
            return
        self._learned.add(signature)
        for record in tuner.stored_records(MOST_RECORDS_READ):
            if all(dtype in record.key for dtype in signature):
                self._learn_from_record(json.loads(record.to_json()), signature)

    def _learn_from_record(self, record: dict, signature: Hashable) -> None:
        for candidate in record.get("candidates", []):
            error = candidate.get("error", "")
            at = error.find(OUT_OF_RESOURCES)  # a rank-split record says "on rank N: " first
            if candidate.get("status") == "failed" and at >= 0:
                config = _core.canonical_json(json.dumps(candidate["config"]))
                self._reasons.setdefault((config, signature), error[at:])


@dataclass(frozen=True)
class CallUnrunnable:
    """A tuned function's Unrunnable as one call's compile pipeline sees it: its candidates by
    index, each with its config text (`text(c)`), under the call's dtypes (`signature`)."""

    unrunnable: Unrunnable
    text: Callable[[int], str]
    signature: Hashable

    def reason(self, candidate: int) -> Optional[str]:
        """Why the candidate is known not to run on this device, or None."""
        return self.unrunnable.reason(self.text(candidate), self.signature)

    def judge(self, candidate: int, compiled: Any) -> Optional[str]:
        """Why the candidate's compiled kernel cannot be launched here (launch_problem), or
        None; an out-of-resources reason is remembered for the function's later calls."""
        problem = launch_problem(compiled)
        if problem is not None:
            self.unrunnable.remember(self.text(candidate), self.signature, problem)
        return problem
