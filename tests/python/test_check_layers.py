"""scripts/check_layers.py: the include check of the layer table src/layers.json, on the
repository and on small trees that break one rule each."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "check_layers.py"

TABLE = {
    "layers": [
        {"name": "util", "library": "core", "dirs": ["src/util"], "headers": ["config.hpp"], "uses": []},
        {"name": "store", "library": "core", "dirs": ["src/store"], "headers": ["store.hpp"], "uses": ["util"]},
        {"name": "engine", "library": "core", "dirs": ["src/engine"], "headers": ["tuning.hpp"], "uses": ["store"]},
        {"name": "tools", "library": "cli", "dirs": ["tools"], "headers": [], "uses": ["engine"]},
    ]
}


def check(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), "--root", str(root)], capture_output=True, text=True)


def architecture(table: dict) -> str:
    """An ARCHITECTURE.md whose layer table says what `table` says, one row per layer."""
    rows = [
        f"| {layer['name']} | {', '.join(layer['uses']) or '-'} | "
        f"{', '.join(Path(h).stem for h in layer['headers']) or '-'} |"
        for layer in table["layers"]
    ]
    return "\n".join(["# Layers", "", "| layer | may use | public headers it owns |", "|---|---|---|", *rows, ""])


def house(tmp_path: Path, table: dict = TABLE, **files: str) -> Path:
    """A tree with the table (and ARCHITECTURE.md saying it), a public header per owned name,
    and `files` (path with / as __)."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "layers.json").write_text(json.dumps(table))
    (tmp_path / "ARCHITECTURE.md").write_text(architecture(table))
    (tmp_path / "include" / "disttune").mkdir(parents=True)
    for layer in table["layers"]:
        for header in layer["headers"]:
            (tmp_path / "include" / "disttune" / header).write_text("#pragma once\n")
        for folder in layer["dirs"]:
            (tmp_path / folder).mkdir(parents=True, exist_ok=True)
    (tmp_path / "python" / "src").mkdir(parents=True)
    base = {
        "src/util/atomic_file.hpp": "#pragma once\n",
        "src/util/atomic_file.cpp": '#include "util/atomic_file.hpp"\n#include "disttune/config.hpp"\n',
        "src/store/stored.hpp": '#pragma once\n#include "util/atomic_file.hpp"\n',
        "src/store/stored.cpp": '#include "store/stored.hpp"\n#include <string>\n',
        "src/engine/driver.cpp": '#include "store/stored.hpp"\n#include "disttune/tuning.hpp"\n',
        "tools/cli.cpp": '#include "disttune/tuning.hpp"\n#include "cli_options.hpp"\n',
        "tools/cli_options.hpp": "#pragma once\n",
    }
    base.update({name.replace("__", "/"): text for name, text in files.items()})
    for name, text in base.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def test_the_repository_follows_its_table():
    result = check(ROOT)
    assert result.returncode == 0, result.stderr
    assert "every include follows src/layers.json" in result.stdout


def test_a_tree_that_follows_the_table_passes(tmp_path):
    result = check(house(tmp_path))
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(
    "files, message",
    [
        pytest.param(
            {"src__store__stored.cpp": '#include "engine/driver.hpp"\n', "src__engine__driver.hpp": ""},
            "src/store/stored.cpp:1: store includes engine/driver.hpp, a private header of layer "
            "'engine', which store may not use",
            id="private-header-up",
        ),
        pytest.param(
            {"src__util__atomic_file.cpp": '#include "disttune/store.hpp"\n'},
            "src/util/atomic_file.cpp:1: util includes disttune/store.hpp, owned by layer 'store', "
            "which util may not use",
            id="public-header-up",
        ),
        pytest.param(
            {"src__store__stored.cpp": '#include "stored.hpp"\n'},
            'a bare name; include it by its layer path "store/stored.hpp"',
            id="bare-name",
        ),
        pytest.param(
            {"src__engine__driver.cpp": '#include "disttune/missing.hpp"\n'},
            "no such public header",
            id="unknown-public-header",
        ),
        pytest.param(
            {"src__cache__orphan.cpp": "int x;\n"},
            "src/cache/: a source folder that is no layer",
            id="folder-outside-the-table",
        ),
    ],
)
def test_each_break_is_named(tmp_path, files, message):
    result = check(house(tmp_path, **files))
    assert result.returncode == 1
    assert message in result.stderr


def test_a_layer_may_only_use_layers_listed_below_it(tmp_path):
    table = json.loads(json.dumps(TABLE))
    table["layers"][0]["uses"] = ["engine"]  # util above engine: a cycle
    result = check(house(tmp_path, table))
    assert result.returncode == 1
    assert "layer 'util' uses 'engine', which is not a layer listed below it" in result.stderr


def test_every_public_header_has_an_owner(tmp_path):
    root = house(tmp_path)
    (root / "include" / "disttune" / "stray.hpp").write_text("#pragma once\n")
    result = check(root)
    assert result.returncode == 1
    assert "include/disttune/stray.hpp: no layer owns it" in result.stderr


@pytest.mark.parametrize(
    "row, message",
    [
        pytest.param("| store | util, engine | store |", "layer 'store' may use util, engine; src/layers.json says util",
                     id="uses"),
        pytest.param("| store | util | - |", "layer 'store' owns -; src/layers.json says store", id="headers"),
        pytest.param("| cache | util | store |", "layer 'cache' is not in src/layers.json", id="unknown-layer"),
    ],
)
def test_architecture_md_must_say_what_the_table_says(tmp_path, row, message):
    root = house(tmp_path)
    text = (root / "ARCHITECTURE.md").read_text().replace("| store | util | store |", row)
    (root / "ARCHITECTURE.md").write_text(text)
    result = check(root)
    assert result.returncode == 1
    assert message in result.stderr


def test_a_layer_missing_from_architecture_md_is_named(tmp_path):
    root = house(tmp_path)
    text = (root / "ARCHITECTURE.md").read_text().replace("| engine | store | tuning |\n", "")
    (root / "ARCHITECTURE.md").write_text(text)
    result = check(root)
    assert result.returncode == 1
    assert "layer 'engine' of src/layers.json is not in its table" in result.stderr
    assert "public header 'tuning' is not in its layer table" in result.stderr
