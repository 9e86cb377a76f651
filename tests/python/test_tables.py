"""Tables that ship (disttune.load_table) and the hardening of import and of paths that are
not UTF-8, through python -m disttune: the engine's one command line."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

import disttune

from test_cli import key_text, run_cli, tune_into


def exported_table(tmp_path, *keys):
    root = tmp_path / "made"
    tune_into(root, *keys)
    table = tmp_path / "table.json"
    status, out, err = run_cli("export", str(table), root=root)
    assert status == 0, err
    return table


def test_a_loaded_table_makes_the_first_call_of_each_key_a_hit_with_no_run(tmp_path):
    table = exported_table(tmp_path, 3, 4)
    data = json.loads(table.read_text())
    assert data["devices"] and data["software"]  # the fingerprints ride with the records
    cache = tmp_path / "user-cache"
    code = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {os.path.dirname(__file__)!r})
        import disttune
        from launchers import CountingLauncher
        from test_cli import tune_into
        lines = disttune.load_table({str(table)!r}, cache_dir={str(cache)!r})
        assert sum(line.startswith("wrote launch") for line in lines) == 2, lines
        counter = CountingLauncher()
        launch = tune_into({str(cache)!r}, 3, 4, counter=counter)
        assert launch.last_report.source == "table", launch.last_report.source
        assert counter.runs == {{"fast": 2}}, counter.runs  # the two calls themselves, no tuning
        print("hits")
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "hits" in done.stdout


def test_load_table_reads_a_package_resource(tmp_path, monkeypatch):
    table = exported_table(tmp_path, 5)
    package = tmp_path / "pkg" / "shipped"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "h200.json").write_bytes(table.read_bytes())
    monkeypatch.syspath_prepend(str(tmp_path / "pkg"))
    import importlib.resources

    lines = disttune.load_table(importlib.resources.files("shipped") / "h200.json",
                                cache_dir=str(tmp_path / "cache"))
    assert lines and lines[0].startswith("wrote launch  key " + key_text(5))
    again = disttune.load_table(importlib.resources.files("shipped") / "h200.json",
                                cache_dir=str(tmp_path / "cache"))
    assert again[0].startswith("same  launch")


def test_load_table_with_an_empty_cache_dir_uses_the_default_root(tmp_path, monkeypatch):
    table = exported_table(tmp_path, 8)
    default_root = tmp_path / "default-root"
    monkeypatch.setenv("TRITON_DIST_AUTOTUNE_CACHE_DIR", str(default_root))
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    lines = disttune.load_table(str(table), cache_dir="")  # "" is the default, as `import --root ""`
    assert lines and lines[0].startswith("wrote launch")
    assert list((default_root / "launch").glob("*.json"))
    assert list(elsewhere.iterdir()) == []


def test_load_table_of_a_broken_table_raises_and_writes_nothing(tmp_path):
    table = exported_table(tmp_path, 6)
    data = json.loads(table.read_text())
    data["functions"]["zz/evil"] = data["functions"]["launch"]
    table.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"functions\['zz/evil'\]"):
        disttune.load_table(str(table), cache_dir=str(tmp_path / "cache"))
    assert not (tmp_path / "cache").exists()


def test_import_with_an_unsafe_function_name_is_one_line_and_writes_nothing(tmp_path):
    table = exported_table(tmp_path, 1, 2)
    data = json.loads(table.read_text())
    data["functions"]["zz/evil"] = data["functions"]["launch"]  # after the good records
    table.write_text(json.dumps(data))
    status, out, err = run_cli("import", str(table), root=tmp_path / "cache")
    assert status == 1 and out == ""
    assert err.startswith("disttune: error: ") and len(err.splitlines()) == 1, err
    assert not (tmp_path / "cache").exists()


@pytest.mark.parametrize("special", ["fifo", "/dev/zero", "directory"])
def test_import_refuses_a_file_that_is_not_regular(tmp_path, special):
    if special == "fifo":
        path = tmp_path / "fifo"
        os.mkfifo(path)
    elif special == "directory":
        path = tmp_path
    else:
        path = special
    status, _, err = run_cli("import", str(path), root=tmp_path / "cache")  # a FIFO would block
    assert status == 1 and "import reads a table from a regular file only" in err, err
    assert not (tmp_path / "cache").exists()


def test_a_path_that_is_not_utf8_is_a_bad_line_everywhere(tmp_path):
    root = tmp_path / "cache"
    tune_into(root, 1)
    odd = os.fsdecode(b"bad\xff")
    (root / "launch" / (odd + ".json")).write_text("{}")
    status, out, err = run_cli("list", root=root)
    assert status == 0, err
    assert "BAD launch/bad\\xff.json: " in out
    status, out, _ = run_cli("verify", root=root)
    assert status == 1 and "2 record files checked, 1 good, 1 bad" in out
    status, out, err = run_cli("export", str(tmp_path / "t.json"), root=root)
    assert status == 0 and "skipped BAD launch/bad\\xff.json" in err
    status, out, err = run_cli("report", str(tmp_path / "r.html"), root=root)
    assert status == 0 and "1 records, 1 bad files" in out, err
    assert "bad\\xff.json" in (tmp_path / "r.html").read_text(encoding="utf-8")


def test_the_record_is_typed_in_python(tmp_path):
    root = tmp_path / "cache"
    tune_into(root, 7)
    (path,) = (root / "launch").glob("*.json")
    read = disttune._core.read_record(path)
    assert read.error == "" and read.record is not None
    record = read.record
    assert record.function_name == "launch" and record.key == key_text(7)
    assert record.best_config == '{"speed":0.2,"tag":"fast"}'
    assert [disttune._core.candidate_status(c) for c in record.candidates] == ["ok"] * 3
    assert record.file_id == path.name[: -len(".json")]
    assert json.loads(record.to_json())["created_utc"] == record.created_utc
    bad = disttune._core.parse_record(b"{no")
    assert bad.record is None and "not valid JSON" in bad.error
