"""bench/replay/small_spaces.py: sub-spaces cut from a recorded table by fixing knobs, within the sizes asked for."""

import itertools
import os
import random
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "bench", "replay"))
from small_spaces import sub_spaces  # noqa: E402


def table() -> dict:
    """64 configs: BLOCK in 4 values, num_warps in 4, num_stages in 4; the ones of 8 warps failed."""
    entries = [{"config": {"cfg": {"$triton.Config": {"kwargs": {"BLOCK": block}, "num_warps": warps,
                                                        "num_stages": stages}}},
                "status": "failed" if warps == 8 else "ok"}
               for block, warps, stages in itertools.product((16, 32, 64, 128), (1, 2, 4, 8), (1, 2, 3, 4))]
    return {"kernel": "k", "entries": entries}


def test_sub_spaces_fix_knobs_until_the_size_is_within_bounds():
    made = sub_spaces(table(), 6, random.Random(0), smallest=16, largest=16)
    assert len(made) == 6
    for sub in made:
        assert len(sub["entries"]) == 16  # one knob of four values fixed
        assert 2 * sum(entry["status"] == "ok" for entry in sub["entries"]) >= len(sub["entries"])
    assert [sub["kernel"] for sub in made] == [f"k_sub{n}" for n in range(6)]


def test_no_sub_space_fits_bounds_no_fixing_of_knobs_reaches():
    assert sub_spaces(table(), 4, random.Random(0), smallest=20, largest=30) == []
