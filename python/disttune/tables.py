"""Tables that ship: a package loads a table of tuning records (written by `disttune export`
or a sweep) into the disk cache at import, so the first call of each tuned key is a hit.

    import importlib.resources, disttune
    disttune.load_table(importlib.resources.files("mypackage") / "h200.json")

The whole table is checked before anything is written (docs/cache.md, "Tables")."""

from __future__ import annotations

import importlib.resources
import json
import os
from pathlib import Path
from typing import Any, Optional

from disttune import _core
from disttune._timing import software_facts


def load_table(table: Any, cache_dir: Optional[str] = None, force: bool = False) -> list[str]:
    """Imports the records of `table` (a path, or a package resource such as
    importlib.resources.files(package) / "table.json") into the disk cache (`cache_dir`; None or
    "": TRITON_DIST_AUTOTUNE_CACHE_DIR or ~/.triton_dist/autotune, as `import --root ""`), as
    `disttune import` does: a record already on disk that is as new or newer is kept unless
    `force`; a record made with other software than this program's is used with one warning,
    or left out with TRITON_DIST_AUTOTUNE_TABLE_MISMATCH=retune. Returns one line per record.
    Raises ValueError naming the problem, with nothing written."""
    root = Path(cache_dir or _core.default_cache_root())
    software = json.dumps(software_facts())
    if isinstance(table, (str, os.PathLike)):
        return list(_core.import_table(root, Path(table), force, software))
    with importlib.resources.as_file(table) as path:  # a resource inside a zip: a copy
        return list(_core.import_table(root, path, force, software))
