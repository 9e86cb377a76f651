#!/usr/bin/env python3
"""Checks every #include under src/, tools/ and python/src/ against the layer table src/layers.json.

A file may include the public headers (include/disttune/) owned by its own layer or by a
layer it may use, and the private headers of those layers by their layer path
("store/stored_choice.hpp"); a bare private name ("stored_choice.hpp") is refused under src/.
The table itself is checked too: layers listed lowest first, each using only layers below it,
every public header owned by exactly one layer, every source folder of src/ a layer; and
ARCHITECTURE.md's layer table must say what src/layers.json says (names, uses, headers).
Exits 1 naming each break (file:line, what it includes, which rule); 0 when all hold.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

SOURCE_SUFFIXES = {".cpp", ".hpp", ".h", ".cu", ".cuh"}
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


class Table:
    """The layers of src/layers.json, with what each may use (itself and everything below it
    through its uses)."""

    def __init__(self, root: Path, data: dict) -> None:
        self.root = root
        self.layers: list[dict] = data["layers"]
        self.by_name = {layer["name"]: layer for layer in self.layers}
        self.header_owner: dict[str, str] = {}
        self.allowed: dict[str, set[str]] = {}

    def problems(self) -> list[str]:
        found: list[str] = []
        seen: set[str] = set()
        for layer in self.layers:
            name = layer["name"]
            if name in self.allowed:
                found.append(f"src/layers.json: layer '{name}' is listed twice")
            reach = {name}
            for used in layer["uses"]:
                if used not in seen:
                    found.append(f"src/layers.json: layer '{name}' uses '{used}', which is not "
                                 "a layer listed below it (layers go lowest first; no cycles)")
                    continue
                reach |= self.allowed[used]
            self.allowed[name] = reach
            seen.add(name)
            for directory in layer["dirs"]:
                if not (self.root / directory).is_dir():
                    found.append(f"src/layers.json: layer '{name}' names folder {directory}, "
                                 "which does not exist")
            for header in layer["headers"]:
                if header in self.header_owner:
                    found.append(f"src/layers.json: include/disttune/{header} is owned by both "
                                 f"'{self.header_owner[header]}' and '{name}'")
                self.header_owner[header] = name
                if not (self.root / "include/disttune" / header).is_file():
                    found.append(f"src/layers.json: layer '{name}' owns include/disttune/{header}, "
                                 "which does not exist")
        for header in sorted(p.name for p in (self.root / "include/disttune").glob("*.hpp")):
            if header not in self.header_owner:
                found.append(f"include/disttune/{header}: no layer owns it (add it to a layer's "
                             "\"headers\" in src/layers.json)")
        layer_dirs = {d for layer in self.layers for d in layer["dirs"]}
        for folder in sorted(p for p in (self.root / "src").iterdir() if p.is_dir()):
            relative = folder.relative_to(self.root).as_posix()
            has_sources = any(f.suffix in SOURCE_SUFFIXES for f in folder.rglob("*"))
            if has_sources and relative not in layer_dirs:
                found.append(f"{relative}/: a source folder that is no layer (add it to "
                             "src/layers.json)")
        return found

    def layer_of(self, path: Path) -> str | None:
        relative = path.relative_to(self.root).as_posix()
        for layer in self.layers:
            if any(relative.startswith(d + "/") for d in layer["dirs"]):
                return layer["name"]
        return None

    def private_layer(self, include: str) -> str | None:
        """The layer whose folder an include path like "store/x.hpp" starts with."""
        for layer in self.layers:
            for directory in layer["dirs"]:
                if directory.startswith("src/") and include.startswith(directory[4:] + "/"):
                    return layer["name"]
        return None


def check_file(table: Table, path: Path) -> list[str]:
    layer = table.layer_of(path)
    relative = path.relative_to(table.root).as_posix()
    if layer is None:
        return [f"{relative}: in no layer of src/layers.json"]
    allowed = table.allowed[layer]
    found: list[str] = []
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    for number, line in enumerate(lines, start=1):
        match = INCLUDE.match(line)
        if not match:
            continue
        quote, include = match.groups()
        where = f"{relative}:{number}: {layer} includes {include}"
        if include.startswith("disttune/"):
            owner = table.header_owner.get(include[len("disttune/"):])
            if owner is None:
                found.append(f"{where}: no such public header in src/layers.json")
            elif owner not in allowed:
                found.append(f"{where}, owned by layer '{owner}', which {layer} may not use")
            continue
        if quote == "<":
            continue  # the standard library and third-party libraries
        owner = table.private_layer(include)
        if owner is not None and (table.root / "src" / include).is_file():
            if owner not in allowed:
                found.append(f"{where}, a private header of layer '{owner}', which {layer} "
                             "may not use")
            continue
        if (path.parent / include).is_file():
            if relative.startswith("src/"):
                beside = (path.parent / include).resolve().relative_to(table.root / "src")
                found.append(f"{where}: a bare name; include it by its layer path "
                             f"\"{beside.as_posix()}\"")
            continue  # tools/ and python/src/: a header beside the file, the same layer
        found.append(f"{where}: no such header under src/ or beside the file")
    return found


def cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def names(cell: str) -> set[str]:
    """A cell's comma-separated names ("-": none)."""
    return {name.strip() for name in cell.split(",") if name.strip() not in ("", "-")}


def architecture_problems(table: Table) -> list[str]:
    """Where ARCHITECTURE.md's table (| layer | may use | public headers it owns |) and
    src/layers.json differ. A row may name several layers; its "may use" is then prose and
    only its headers are compared."""
    path = table.root / "ARCHITECTURE.md"
    if not path.is_file():
        return ["ARCHITECTURE.md: missing (its layer table must say what src/layers.json says)"]
    lines = path.read_text(encoding="utf-8").splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("| layer | may use")), None)
    if start is None:
        return ["ARCHITECTURE.md: no layer table (a line starting '| layer | may use')"]
    found: list[str] = []
    described: set[str] = set()
    headers_named: set[str] = set()
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        row = cells(line)
        layers, uses, headers = names(row[0]), row[1], names(row[2])
        headers_named |= headers
        for name in sorted(layers - set(table.by_name)):
            found.append(f"ARCHITECTURE.md: layer '{name}' is not in src/layers.json")
        described |= layers
        if len(layers) == 1 and layers <= set(table.by_name):
            layer = table.by_name[next(iter(layers))]
            if names(uses) != set(layer["uses"]):
                found.append(f"ARCHITECTURE.md: layer '{layer['name']}' may use {uses}; "
                             f"src/layers.json says {', '.join(layer['uses']) or '-'}")
            owned = {Path(header).stem for header in layer["headers"]}
            if headers != owned:
                found.append(f"ARCHITECTURE.md: layer '{layer['name']}' owns {row[2]}; "
                             f"src/layers.json says {', '.join(sorted(owned)) or '-'}")
    for name in sorted(set(table.by_name) - described):
        found.append(f"ARCHITECTURE.md: layer '{name}' of src/layers.json is not in its table")
    for header in sorted({Path(h).stem for h in table.header_owner} - headers_named):
        found.append(f"ARCHITECTURE.md: public header '{header}' is not in its layer table")
    return found


def repository_root(doc: str) -> Path:
    """The repository a check reads: --root, else the one this script is in."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent,
                        help="the repository root (default: this script's repository)")
    return parser.parse_args().root.resolve()


def main() -> int:
    root = repository_root(__doc__)
    table = Table(root, json.loads((root / "src/layers.json").read_text(encoding="utf-8")))
    problems = table.problems()
    problems += architecture_problems(table)
    checked = 0
    for top in ("src", "tools", "python/src"):
        for path in sorted((root / top).rglob("*")):
            if path.suffix in SOURCE_SUFFIXES and path.is_file():
                problems += check_file(table, path)
                checked += 1
    return verdict("check_layers", "src/layers.json", problems,
                   f"{checked} files, {len(table.layers)} layers: every include follows")


def verdict(check: str, table: str, problems: list[str], passed: str) -> int:
    """Prints each problem, then a count (exit status 1), or the line saying what passed (0)."""
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"{check}: {len(problems)} break(s) of {table}", file=sys.stderr)
        return 1
    print(f"{check}: {passed} {table}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
