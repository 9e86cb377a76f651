"""The disk cache seen by the command line: its function directories and record files,
each read through the engine's read-only record reader (never a second validator)."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Optional

from disttune import _core

# Names `clear` removes: records, kept previous records, bad records set aside, tuning logs.
_CACHE_FILE = re.compile(r"[0-9a-f]{64}\.(json(\..+)?|bad-.+|log-.+)")
_ID_PREFIX = re.compile(r"[0-9a-f]{1,64}")
# A function directory name the store accepts (DiskStore::function_dir).
_FUNCTION_NAME = re.compile(r"[A-Za-z0-9_\-][A-Za-z0-9_.\-]*")


class CliError(Exception):
    """A problem with the command's input or the cache: one line, exit status 1."""


@dataclass(frozen=True)
class RecordFile:
    """One `*.json` file in a function directory."""

    function: str
    path: Path


@dataclass(frozen=True)
class StoredRecord:
    """A record file that the engine's reader accepted, as the engine's JSON."""

    path: Path
    json: dict[str, Any]

    @property
    def function(self) -> str:
        return str(self.json["function"]["name"])

    @property
    def key(self) -> str:
        return str(self.json["key"])

    @property
    def hardware_digest(self) -> str:
        return str(self.json["hardware_digest"])

    @property
    def created_utc(self) -> str:
        return str(self.json["created_utc"])

    def best_config_text(self) -> str:
        return str(_core.canonical_json(json.dumps(self.json["best"]["config"])))


def read(path: Path) -> tuple[Optional[StoredRecord], str]:
    """The record at `path`, or (None, why it is bad). Read-only; never follows a link."""
    text, error = _core.read_record(str(path))
    if text is None:
        return None, str(error)
    return StoredRecord(path, json.loads(text)), ""


def _is_real_directory(path: Path) -> bool:
    try:
        return stat.S_ISDIR(path.lstat().st_mode)
    except OSError:
        return False


class Cache:
    """The record files under one root (`--root`, else the engine's default_cache_root():
    TRITON_DIST_AUTOTUNE_CACHE_DIR or DEFAULT_CACHE_ROOT)."""

    def __init__(self, root: Optional[str]) -> None:
        self.root = Path(root) if root else Path(_core.default_cache_root())

    def checked_root(self) -> Path:
        if not os.path.lexists(self.root):
            raise CliError(f"cache root {self.root} does not exist")
        if not _is_real_directory(self.root):
            raise CliError(f"cache root {self.root} is not a directory")
        return self.root

    def function_dirs(self, function: Optional[str]) -> list[tuple[str, Path]]:
        """The function directories: the one named (which must exist) or all of them."""
        root = self.checked_root()
        if function:
            if not _FUNCTION_NAME.fullmatch(function):
                raise CliError(f"'{function}' is not a function directory name")
            directory = root / function
            if not _is_real_directory(directory):
                raise CliError(f"unknown function '{function}': no directory {directory}")
            return [(function, directory)]
        return sorted(
            (entry.name, Path(entry.path))
            for entry in os.scandir(root)
            if not entry.name.startswith(".") and _is_real_directory(Path(entry.path))
        )

    def record_files(self, function: Optional[str] = None) -> list[RecordFile]:
        """Every `*.json` file of the chosen function directories, by function, then name."""
        files = []
        for name, directory in self.function_dirs(function):
            paths = sorted(Path(e.path) for e in os.scandir(directory) if e.name.endswith(".json"))
            files.extend(RecordFile(name, path) for path in paths)
        return files

    def records(self, function: Optional[str] = None) -> Iterator[tuple[RecordFile, Optional[StoredRecord], str]]:
        for file in self.record_files(function):
            record, error = read(file.path)
            yield file, record, error

    def resolve(self, file_or_id: str) -> Path:
        """The record file that FILE_OR_ID names: a path, or a unique prefix of a file id."""
        if not _ID_PREFIX.fullmatch(file_or_id):
            if not os.path.lexists(file_or_id):
                raise CliError(f"'{file_or_id}' is neither a file nor a record id prefix")
            return Path(file_or_id)
        matches = [f.path for f in self.record_files() if f.path.name.startswith(file_or_id)]
        if not matches:
            raise CliError(f"no record id starts with '{file_or_id}'")
        if len(matches) > 1:
            listed = "".join(f"\n  {path}" for path in matches)
            raise CliError(f"record id prefix '{file_or_id}' is ambiguous; it matches:{listed}")
        return matches[0]

    def clear(self, function: Optional[str], older_than_s: int = 0) -> Iterator[tuple[str, int]]:
        """Removes the cache files of one function or all (with `older_than_s` > 0, only those
        last modified longer ago); yields (function, files removed)."""
        now = time.time()
        for name, directory in self.function_dirs(function):
            removed = 0
            for entry in os.scandir(directory):
                if not _CACHE_FILE.fullmatch(entry.name):
                    continue
                try:
                    status = entry.stat(follow_symlinks=False)
                    if older_than_s > 0 and now - status.st_mtime < older_than_s:
                        continue
                    if stat.S_ISDIR(status.st_mode):
                        shutil.rmtree(entry.path)  # something moved aside as <id>.bad-<UTC>
                    else:
                        os.remove(entry.path)  # a link goes, never what it names
                except OSError as error:
                    raise CliError(f"cannot remove {entry.path}: {error.strerror}") from None
                removed += 1
            try:
                directory.rmdir()  # other files stay, and so does their directory
            except OSError:
                pass
            yield name, removed
