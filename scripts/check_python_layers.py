#!/usr/bin/env python3
"""Checks every import of the Python package (python/disttune/) against its layer table python/layers.json.

A module may import the modules of its own layer and of the layers its layer may use (and
what those may use), never a layer above or beside it; disttune._core (the engine's
binding) is open to all. No module imports another module's underscore names, whether by
`from disttune.x import _name` or as `x._name` of an imported module. The table itself is
checked too: layers lowest first, each using only layers below it, every module of the
package in exactly one layer. Exits 1 naming each break (file:line, what, which rule); 0
when all hold.
"""
from __future__ import annotations

import ast
import json
import sys
from pathlib import Path
from typing import Optional

from check_layers import repository_root, verdict  # beside this script

PACKAGE = "disttune"
ENGINE = "disttune._core"


def module_names(package_dir: Path) -> dict[str, Path]:
    """Dotted names under the package ("tune", "triton._switch"; the package itself
    "disttune", a subpackage by its folder, "triton") and their files."""
    found = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = list(path.relative_to(package_dir).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts) or PACKAGE] = path
    return found


class Table:
    """The layers of python/layers.json, with what each may reach."""

    def __init__(self, data: dict, modules: dict[str, Path]) -> None:
        self.layers: list[dict] = data["layers"]
        self.modules = modules
        self.layer_of: dict[str, str] = {}
        self.reach: dict[str, set[str]] = {}

    def problems(self) -> list[str]:
        found: list[str] = []
        for layer in self.layers:
            name = layer["name"]
            reach = {name}
            for used in layer["uses"]:
                if used not in self.reach:
                    found.append(f"python/layers.json: layer '{name}' uses '{used}', which is not a "
                                 "layer listed below it (layers go lowest first; no cycles)")
                    continue
                reach |= self.reach[used]
            self.reach[name] = reach
            for module in layer["modules"]:
                if module in self.layer_of:
                    found.append(f"python/layers.json: module '{module}' is in both "
                                 f"'{self.layer_of[module]}' and '{name}'")
                if module not in self.modules:
                    found.append(f"python/layers.json: layer '{name}' names module '{module}', which "
                                 "does not exist")
                self.layer_of[module] = name
        for module in sorted(set(self.modules) - set(self.layer_of)):
            found.append(f"python/disttune: module '{module}' is in no layer of python/layers.json")
        return found


def imported(
    module: str, is_package: bool, node: ast.AST, modules: dict[str, Path]
) -> list[tuple[str, str, Optional[str]]]:
    """(module imported, name taken from it or "", the alias it is bound to or None) for the
    package's modules an import names."""
    if isinstance(node, ast.Import):
        return [(alias.name, "", alias.asname) for alias in node.names if alias.name.split(".")[0] == PACKAGE]
    assert isinstance(node, ast.ImportFrom)
    base = node.module or ""
    if node.level:
        here = [PACKAGE] + ([] if module == PACKAGE else module.split("."))
        keep = len(here) - node.level + (1 if is_package else 0)
        base = ".".join(here[:keep] + ([base] if base else []))
    if base.split(".")[0] != PACKAGE:
        return []
    found = []
    for alias in node.names:
        whole = f"{base}.{alias.name}"
        inner = whole[len(PACKAGE) + 1:]
        if inner in modules or whole == ENGINE:
            found.append((whole, "", alias.asname))
        else:
            found.append((base, alias.name, alias.asname))
    return found


def inner_name(dotted: str) -> str:
    return PACKAGE if dotted == PACKAGE else dotted[len(PACKAGE) + 1:]


def check_module(table: Table, module: str, path: Path, root: Path) -> list[str]:
    relative = path.relative_to(root).as_posix()
    layer = table.layer_of.get(module)
    if layer is None:
        return []  # reported by the table check
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=relative)
    found: list[str] = []
    bound: dict[str, str] = {}  # local name -> the package module it is bound to
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        for dotted, name, alias in imported(module, path.name == "__init__.py", node, table.modules):
            where = f"{relative}:{node.lineno}"
            target = inner_name(dotted)
            if dotted == ENGINE:
                bound[dotted.rsplit(".", 1)[1]] = target
                continue
            if name.startswith("_"):
                found.append(f"{where}: imports '{name}' from {dotted}, another module's underscore name")
            owner = table.layer_of.get(target)
            if owner is not None and target != module and owner not in table.reach[layer]:
                found.append(f"{where}: {module} ({layer}) imports {target} ({owner}), a layer "
                             f"'{layer}' may not use")
            if not name:
                bound[alias or dotted.rsplit(".", 1)[-1]] = target
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.attr.startswith("_"):
            target = bound.get(node.value.id)
            if target is not None and target != "_core" and not node.attr.startswith("__"):
                found.append(f"{relative}:{node.lineno}: uses {node.value.id}.{node.attr}, "
                             f"an underscore name of {target}")
    return found


def main() -> int:
    root = repository_root(__doc__)
    modules = module_names(root / "python" / PACKAGE)
    table = Table(json.loads((root / "python/layers.json").read_text(encoding="utf-8")), modules)
    problems = table.problems()
    for module, path in modules.items():
        problems += check_module(table, module, path, root)
    return verdict("check_python_layers", "python/layers.json", problems,
                   f"{len(modules)} modules, {len(table.layers)} layers: every import follows")


if __name__ == "__main__":
    sys.exit(main())
