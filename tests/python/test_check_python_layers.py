"""scripts/check_python_layers.py: the import check of the Python package's layer table
python/layers.json, on the repository and on small packages that break one rule each."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "check_python_layers.py"

TABLE = {
    "layers": [
        {"name": "pieces", "uses": [], "modules": ["_encoding", "_ranks"]},
        {"name": "cores", "uses": ["pieces"], "modules": ["_function_tuning"]},
        {"name": "front ends", "uses": ["cores"], "modules": ["tune", "_sweep", "triton", "triton._switch"]},
        {"name": "package", "uses": ["front ends"], "modules": ["disttune"]},
    ]
}

BASE = {
    "__init__.py": "from disttune import tune, _sweep\n",
    "_encoding.py": "from disttune import _core\n\ndef key_text(key):\n    return str(key)\n",
    "_ranks.py": "def torch_distributed():\n    return None\n\ndef _private():\n    return 1\n",
    "_function_tuning.py": "from disttune import _encoding, _ranks\n\nclass FunctionTuning:\n    pass\n",
    "tune.py": "from disttune._function_tuning import FunctionTuning\n",
    "_sweep.py": "from disttune import _ranks\nfrom . import _encoding\n\nworld = _ranks.torch_distributed()\n",
    "triton/__init__.py": "from disttune.triton import _switch\n",
    "triton/_switch.py": "from .. import _function_tuning\n",
}


def check(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), "--root", str(root)], capture_output=True, text=True)


def package(tmp_path: Path, table: dict = TABLE, **changed: str) -> Path:
    """A package with the table and BASE's modules, `changed` (path with / as __) replacing or
    adding modules."""
    (tmp_path / "python").mkdir()
    (tmp_path / "python" / "layers.json").write_text(json.dumps(table))
    files = dict(BASE)
    files.update({name.replace("__", "/"): text for name, text in changed.items()})
    for name, text in files.items():
        path = tmp_path / "python" / "disttune" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def test_the_repository_follows_its_table():
    result = check(ROOT)
    assert result.returncode == 0, result.stderr
    assert "every import follows python/layers.json" in result.stdout


def test_a_package_that_follows_the_table_passes(tmp_path):
    result = check(package(tmp_path))
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(
    "changed, expected",
    [
        ({"_encoding.py": "from disttune import tune\n"},
         "_encoding.py:1: _encoding (pieces) imports tune (front ends), a layer 'pieces' may not use"),
        ({"_function_tuning.py": "def later():\n    from disttune import _sweep\n"},
         "_function_tuning.py:2: _function_tuning (cores) imports _sweep (front ends)"),
        ({"tune.py": "from disttune._ranks import _private\n"},
         "tune.py:1: imports '_private' from disttune._ranks, another module's underscore name"),
        ({"_sweep.py": "from disttune import _ranks\n\nx = _ranks._private()\n"},
         "_sweep.py:3: uses _ranks._private, an underscore name of _ranks"),
        ({"_sweep.py": "import disttune._ranks as ranks\n\nx = ranks._private()\n"},
         "_sweep.py:3: uses ranks._private, an underscore name of _ranks"),
        ({"_sweep.py": "from disttune import _encoding as encoding, _ranks\n\nx = _ranks._private()\n"},
         "_sweep.py:3: uses _ranks._private, an underscore name of _ranks"),
        ({"_extra.py": "x = 1\n"}, "module '_extra' is in no layer of python/layers.json"),
    ],
)
def test_each_break_is_named(tmp_path, changed, expected):
    result = check(package(tmp_path, **changed))
    assert result.returncode == 1
    assert expected in result.stderr


def test_the_table_goes_lowest_first(tmp_path):
    table = {"layers": [dict(TABLE["layers"][1], uses=["pieces"]), TABLE["layers"][0], *TABLE["layers"][2:]]}
    result = check(package(tmp_path, table=table))
    assert result.returncode == 1
    assert "layer 'cores' uses 'pieces', which is not a layer listed below it" in result.stderr


def test_the_engine_binding_is_open_to_every_layer(tmp_path):
    result = check(package(tmp_path, **{"_ranks.py": "from disttune import _core\n\nx = _core._hidden\n"}))
    assert result.returncode == 0, result.stderr
