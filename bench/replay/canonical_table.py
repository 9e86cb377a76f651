"""Turns a raw table of record_table.py into the replay table the tests read: each config
becomes the candidate exactly as disttune's engine sees it, the canonical JSON of the
function-level entry {"cfg": triton.Config(...)} (disttune's own encoder), as an object.

    python bench/replay/canonical_table.py RAW.json OUT.json
"""

import json
import sys

import triton

from disttune._encoding import entry_text
from raw_table import FORMAT, VERSION


def canonical(raw: dict) -> dict:
    entries = []
    for entry in raw["entries"]:
        fields = entry["config_raw"]
        config = triton.Config(dict(fields["kwargs"]), num_warps=fields["num_warps"],
                               num_stages=fields["num_stages"])
        converted = {"config": json.loads(entry_text({"cfg": config}))}
        converted.update((name, value) for name, value in entry.items() if name != "config_raw")
        entries.append(converted)
    table = {name: value for name, value in raw.items() if name != "entries"}
    table.update(format="disttune.replay_table", entries=entries)
    return table


def main(argv: list) -> int:
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1]) as file:
        raw = json.load(file)
    if raw.get("format") != FORMAT or raw.get("version") != VERSION:
        print(f"{argv[1]}: not a raw replay table of version {VERSION}", file=sys.stderr)
        return 1
    with open(argv[2], "w") as file:
        json.dump(canonical(raw), file, separators=(",", ":"))
        file.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
