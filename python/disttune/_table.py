"""The portable table of tuning records (`disttune export` / `disttune import`).

A table is one JSON object, versioned like a record:

    {"schema": "disttune.table", "schema_version": 1, "library_version": "0.1.0",
     "exported_utc": "YYYY-MM-DDTHH:MM:SSZ",
     "functions": {<function name>: {<canonical key text>: {<hardware digest>: <record>}}}}

Each <record> is a schema-1 record exactly as the disk store holds it (docs/cache.md).
Import checks every record with the engine's record reader before writing any, checks that
it sits under its own function, key and hardware, and writes each atomically through the
store; a record already on disk that is newer is kept unless forced.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from disttune import _core
from disttune._cache_files import Cache, CliError, read

TABLE_SCHEMA = "disttune.table"
TABLE_SCHEMA_VERSION = 1


def _utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def write_atomically(path: Path, text: str) -> None:
    """Writes `text` to `path` through a temporary file in the same directory and a rename."""
    directory = path.resolve().parent
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=directory)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def export_table(cache: Cache, path: Path) -> tuple[int, list[str]]:
    """Writes every valid record under the cache root to `path`; returns (records, bad files)."""
    functions: dict[str, dict[str, dict[str, Any]]] = {}
    count = 0
    bad = []
    for file, record, error in cache.records():
        if record is None:
            bad.append(f"{file.function}/{file.path.name}: {error}")
            continue
        keys = functions.setdefault(record.function, {})
        keys.setdefault(record.key, {})[record.hardware_digest] = record.json
        count += 1
    table = {
        "schema": TABLE_SCHEMA,
        "schema_version": TABLE_SCHEMA_VERSION,
        "library_version": _core.__version__,
        "exported_utc": _utc_now(),
        "functions": functions,
    }
    write_atomically(path, json.dumps(table, indent=1, sort_keys=True) + "\n")
    return count, bad


@dataclass(frozen=True)
class ImportedRecord:
    """One record of a table, checked by the engine's reader."""

    function: str
    key: str
    created_utc: str
    text: str  # the record's JSON as the engine writes it


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise CliError(f"{where} must be a JSON object, not {type(value).__name__}")
    return value


def read_table(path: Path) -> list[ImportedRecord]:
    """Every record of the table at `path`, all checked; CliError naming the first problem."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise CliError(f"cannot read {path}: {error.strerror}") from None
    except UnicodeDecodeError:
        raise CliError(f"{path} is not a disttune table: it is not UTF-8 text") from None
    try:
        table = _object(json.loads(text), f"{path}")
    except (ValueError, RecursionError) as error:  # JSONDecodeError, too many digits, too deep
        raise CliError(f"{path} is not a disttune table: it is not valid JSON: {error}") from None
    if table.get("schema") != TABLE_SCHEMA:
        raise CliError(f"{path} is not a disttune table: its schema is {table.get('schema')!r}, "
                       f"expected {TABLE_SCHEMA!r}")
    if table.get("schema_version") != TABLE_SCHEMA_VERSION:
        raise CliError(f"{path}: table schema_version {table.get('schema_version')!r} is not "
                       f"supported (this disttune reads version {TABLE_SCHEMA_VERSION})")
    records = []
    functions = _object(table.get("functions"), f"{path}: 'functions'")
    for function, keys in functions.items():
        for key, hardware in _object(keys, f"{path}: functions[{function!r}]").items():
            where_key = f"functions[{function!r}][{key!r}]"
            for hardware_digest, record in _object(hardware, f"{path}: {where_key}").items():
                where = f"{path}: {where_key}[{hardware_digest!r}]"
                try:
                    checked, _ = _core.validate_record(json.dumps(record))
                except ValueError as error:
                    raise CliError(f"{where} is not a valid record: {error}") from None
                fields = json.loads(checked)
                identity = (fields["function"]["name"], fields["key"], fields["hardware_digest"])
                if identity != (function, key, hardware_digest):
                    raise CliError(f"{where} is the record of function {identity[0]!r}, key "
                                   f"{identity[1]!r}, hardware {identity[2]!r}: it is filed under "
                                   "another identity")
                records.append(ImportedRecord(function, key, fields["created_utc"], checked))
    return records


def import_table(cache: Cache, path: Path, force: bool) -> list[str]:
    """Writes the table's records under the cache root; returns one line per record."""
    records = read_table(path)
    root = str(cache.root)
    lines = []
    for record in records:
        target = Path(_core.record_path(root, record.text))
        existing: Optional[str] = None
        if os.path.lexists(target):
            stored, _ = read(target)
            existing = stored.created_utc if stored is not None else None
        if existing is not None and existing > record.created_utc and not force:
            lines.append(f"kept  {record.function}  key {record.key}: the record on disk "
                         f"({existing}) is newer than the table's ({record.created_utc}); "
                         "--force replaces it")
            continue
        if existing == record.created_utc and not force:
            lines.append(f"same  {record.function}  key {record.key}: already on disk")
            continue
        try:
            written = _core.store_record(root, record.text)
        except RuntimeError as error:
            raise CliError(str(error)) from None
        lines.append(f"wrote {record.function}  key {record.key}: {written}")
    return lines
