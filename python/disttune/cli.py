"""The `disttune` command (also `python -m disttune`): list, show, verify, clear, export,
import and report the disk cache of tuning records. Errors print one line
`disttune: error: ...` and exit with status 1, never a traceback."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Optional, Sequence

from disttune import _core
from disttune._cache_files import Cache, CliError, read
from disttune._report_html import render
from disttune._table import export_table, import_table, write_atomically


def _list(cache: Cache, args: argparse.Namespace) -> int:
    for file, record, error in cache.records(args.function):
        if record is None:
            print(f"BAD {file.function}/{file.path.name}: {error}")
            continue
        print(f"{record.function}  {file.path.name[:12]}  key {record.key}  "
              f"best {record.best_config_text()}  ranks {record.json['ranks']}  "
              f"{record.created_utc}")
    return 0


def _show(cache: Cache, args: argparse.Namespace) -> int:
    path = cache.resolve(args.file_or_id)
    record, error = read(path)
    if record is None:
        raise CliError(f"bad record {path}: {error}")
    fields = record.json
    measurement = fields["measurement"]
    sys.stdout.write(_core.format_record(json.dumps(fields), str(path)))
    hardware = _core.canonical_json(json.dumps(fields["hardware"]))
    print(f"  hardware: {hardware} (digest {record.hardware_digest})")
    print(f"  deps: {_core.canonical_json(json.dumps(fields['deps']))}")
    print(f"  function digest: {fields['function']['digest']}")
    print(f"  measurement: warmup_runs {measurement['warmup_runs']}, timed_runs "
          f"{measurement['timed_runs']}, statistic {measurement['statistic']}, strategy "
          f"{measurement['strategy']}, flush_l2 {'true' if measurement['flush_l2'] else 'false'}")
    print(f"  ranks {fields['ranks']}, created {record.created_utc}, library "
          f"{fields['library_version']}")
    return 0


def _verify(cache: Cache, args: argparse.Namespace) -> int:
    checked = bad = 0
    for file, record, error in cache.records():
        checked += 1
        if record is None:
            bad += 1
            print(f"BAD {file.path}: {error}")
    print(f"{checked} record files checked, {checked - bad} good, {bad} bad")
    return 0 if bad == 0 else 1


# An age for `clear --older-than`: a number and a unit, as the C++ command reads it.
_AGE = re.compile(r"([0-9]{1,9})([smhd])")
_SECONDS_PER_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def _age_seconds(text: str) -> int:
    age = _AGE.fullmatch(text)
    if age is None:
        raise CliError(f"--older-than takes a number and a unit (s, m, h or d), e.g. 30d; got '{text}'")
    return int(age.group(1)) * _SECONDS_PER_UNIT[age.group(2)]


def _clear(cache: Cache, args: argparse.Namespace) -> int:
    if not args.yes:
        raise CliError("clear removes records; refusing without --yes")
    older_than_s = _age_seconds(args.older_than) if args.older_than is not None else 0
    total = 0
    for function, removed in cache.clear(args.function, older_than_s):
        print(f"removed {removed} files of {function}")
        total += removed
    print(f"removed {total} files in all")
    return 0


def _export(cache: Cache, args: argparse.Namespace) -> int:
    count, bad = export_table(cache, Path(args.file))
    for line in bad:
        print(f"skipped BAD {line}", file=sys.stderr)
    print(f"exported {count} records to {args.file}")
    return 0


def _import(cache: Cache, args: argparse.Namespace) -> int:
    for line in import_table(cache, Path(args.file), args.force):
        print(line)
    return 0


def _report(cache: Cache, args: argparse.Namespace) -> int:
    records = []
    bad = []
    for file, record, error in cache.records(args.function):
        if record is None:
            bad.append(f"{file.function}/{file.path.name}: {error}")
        else:
            records.append(record)
    write_atomically(Path(args.file), render(str(cache.root), records, bad))
    print(f"wrote {args.file}: {len(records)} records, {len(bad)} bad files")
    return 0


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(add_help=False)
    root.add_argument("--root", default=argparse.SUPPRESS,
                      help="cache root (default: TRITON_DIST_AUTOTUNE_CACHE_DIR or "
                           f"{_core.DEFAULT_CACHE_ROOT})")
    main = argparse.ArgumentParser(prog="disttune", parents=[root],
                                   description="Inspect, move and clear the disk cache of "
                                               "disttune tuning records.")
    main.add_argument("--version", action="version", version=f"disttune {_core.__version__}")
    commands = main.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, help: str) -> argparse.ArgumentParser:
        return commands.add_parser(name, parents=[root], help=help, description=help)

    sub = command("list", "one line per record (bad ones as BAD)")
    sub.add_argument("function", nargs="?", help="only this function's records")
    sub.set_defaults(run=_list)
    sub = command("show", "one record as a table, with its fingerprints")
    sub.add_argument("file_or_id", help="a record file or a unique prefix of its id")
    sub.set_defaults(run=_show)
    sub = command("verify", "check that every record file is a valid schema-1 record")
    sub.set_defaults(run=_verify)
    sub = command("clear", "remove the records and logs of one function or all")
    sub.add_argument("function", nargs="?", help="only this function's files")
    sub.add_argument("--yes", action="store_true", help="really remove them")
    sub.add_argument("--older-than", metavar="AGE",
                     help="only entries last modified longer ago than this, e.g. 30d, 12h, 90m, 45s")
    sub.set_defaults(run=_clear)
    sub = command("export", "write every record under the root into one portable JSON table")
    sub.add_argument("file", help="the table to write (JSON)")
    sub.set_defaults(run=_export)
    sub = command("import", "write a table's records under the root (checked first)")
    sub.add_argument("file", help="a table written by `disttune export`")
    sub.add_argument("--force", action="store_true",
                     help="replace records on disk even when they are newer")
    sub.set_defaults(run=_import)
    sub = command("report", "write an HTML page with each config's timing samples plotted")
    sub.add_argument("file", help="the page to write, e.g. report.html")
    sub.add_argument("--function", help="only this function's records")
    sub.set_defaults(run=_report)
    return main


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parser().parse_args(argv)
    cache = Cache(getattr(args, "root", None))
    try:
        return int(args.run(cache, args))
    except CliError as error:
        print(f"disttune: error: {error}", file=sys.stderr)
    except OSError as error:
        print(f"disttune: error: {error}", file=sys.stderr)
    return 1
