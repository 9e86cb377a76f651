"""`disttune report`: one self-contained HTML page of the records under a cache root, per
function and key, with each config's timing samples plotted as inline SVG (no scripts, no
network fetches), failed configs and the choice marked."""

from __future__ import annotations

import html
import json
from typing import Any, Iterable

from disttune import _core
from disttune._cache_files import StoredRecord

_ROW_HEIGHT = 22
_LABEL_WIDTH = 360
_PLOT_WIDTH = 520
_STYLE = """
body { font-family: sans-serif; margin: 24px; color: #1b1b1b; background: #ffffff; }
h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 32px; } h3 { font-size: 15px; }
table { border-collapse: collapse; margin: 8px 0 16px; font-size: 13px; }
td, th { border: 1px solid #c8c8c8; padding: 3px 8px; text-align: left; }
tr.best td { background: #dff3df; font-weight: bold; }
tr.failed td { background: #fbe1e1; }
code { font-size: 12px; } pre { font-size: 11px; white-space: pre-wrap; }
.meta { color: #555555; font-size: 12px; }
.bad { color: #a00000; }
"""


def _config_text(candidate: dict[str, Any]) -> str:
    return str(_core.canonical_json(json.dumps(candidate["config"])))


def _error_summary(error: str) -> str:
    """The last line of a failure (a traceback ends with the exception)."""
    lines = [line for line in error.strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else ""


def _error_cell(error: str) -> str:
    if not error:
        return ""
    summary = html.escape(_error_summary(error))
    if "\n" not in error.strip():
        return summary
    return f"<details><summary>{summary}</summary><pre>{html.escape(error)}</pre></details>"


def _svg(record: dict[str, Any]) -> str:
    """One row per config: its samples as dots, its agreed time as a bar; failed ones say so."""
    candidates = record["candidates"]
    best = record["best"]["index"]
    samples = [s for c in candidates for s in c["samples_ms"]]
    samples += [c["agreed_ms"] for c in candidates if c["agreed_ms"] is not None]
    top = max(samples, default=1.0) * 1.05 or 1.0
    height = _ROW_HEIGHT * len(candidates) + 30
    width = _LABEL_WIDTH + _PLOT_WIDTH + 20
    scale = _PLOT_WIDTH / top
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'role="img" aria-label="timing samples per config">',
        f'<rect x="{_LABEL_WIDTH}" y="0" width="{_PLOT_WIDTH}" '
        f'height="{_ROW_HEIGHT * len(candidates)}" fill="#f6f6f6"/>',
    ]
    for index, candidate in enumerate(candidates):
        y = index * _ROW_HEIGHT + _ROW_HEIGHT / 2
        chosen = index == best
        label = ("* " if chosen else "") + _config_text(candidate)
        if len(label) > 52:
            label = label[:49] + "..."
        parts.append(
            f'<text x="{_LABEL_WIDTH - 6}" y="{y + 4}" text-anchor="end" font-size="11" '
            f'font-family="monospace" font-weight="{"bold" if chosen else "normal"}">'
            f"{html.escape(label)}</text>"
        )
        if candidate["status"] == "failed":
            parts.append(
                f'<text x="{_LABEL_WIDTH + 6}" y="{y + 4}" font-size="11" fill="#b00000">'
                f'failed: {html.escape(_error_summary(candidate["error"])[:90])}</text>'
            )
            continue
        if candidate["agreed_ms"] is not None:
            bar = candidate["agreed_ms"] * scale
            colour = "#2e8b57" if chosen else "#9ab0c8"
            parts.append(
                f'<rect x="{_LABEL_WIDTH}" y="{y - 6}" width="{bar:.1f}" height="12" '
                f'fill="{colour}" opacity="0.55"/>'
            )
        for sample in candidate["samples_ms"]:
            parts.append(
                f'<circle cx="{_LABEL_WIDTH + sample * scale:.1f}" cy="{y:.1f}" r="3" '
                f'fill="{"#0b5d1e" if chosen else "#1f4e79"}"/>'
            )
        if not candidate["samples_ms"]:
            parts.append(
                f'<text x="{_LABEL_WIDTH + 6}" y="{y + 4}" font-size="11" fill="#666666">'
                f'{html.escape(candidate["status"])}: no samples</text>'
            )
    axis_y = _ROW_HEIGHT * len(candidates) + 16
    for tick in range(5):
        value = top * tick / 4
        x = _LABEL_WIDTH + value * scale
        parts.append(f'<text x="{x:.1f}" y="{axis_y}" font-size="10" text-anchor="middle">'
                     f"{value:.4g} ms</text>")
    parts.append("</svg>")
    return "".join(parts)


def _table(record: dict[str, Any]) -> str:
    best = record["best"]["index"]
    rows = ["<tr><th></th><th>#</th><th>config</th><th>status</th><th>agreed ms</th>"
            "<th>samples</th><th>noise</th><th>error</th></tr>"]
    for index, candidate in enumerate(record["candidates"]):
        css = "best" if index == best else ("failed" if candidate["status"] == "failed" else "")
        agreed = candidate["agreed_ms"]
        rows.append(
            f'<tr class="{css}"><td>{"chosen" if index == best else ""}</td><td>{index}</td>'
            f"<td><code>{html.escape(_config_text(candidate))}</code></td>"
            f'<td>{html.escape(candidate["status"])}</td>'
            f'<td>{"-" if agreed is None else f"{agreed:.4f}"}</td>'
            f'<td>{len(candidate["samples_ms"])}</td><td>{candidate["noise"]:.3f}</td>'
            f'<td>{_error_cell(candidate["error"])}</td></tr>'
        )
    return "<table>" + "".join(rows) + "</table>"


def render(root: str, records: Iterable[StoredRecord], bad: list[str]) -> str:
    """The page: a section per function, a part per key (and hardware) with plot and table."""
    by_function: dict[str, list[StoredRecord]] = {}
    for record in records:
        by_function.setdefault(record.function, []).append(record)
    body = [f"<h1>disttune tuning report</h1><p class=\"meta\">cache root {html.escape(root)}; "
            f"{sum(len(r) for r in by_function.values())} records; disttune {_core.__version__}</p>"]
    for function in sorted(by_function):
        body.append(f"<h2>{html.escape(function)}</h2>")
        for record in sorted(by_function[function], key=lambda r: (r.key, r.hardware_digest)):
            fields = record.json
            measurement = fields["measurement"]
            best = fields["best"]["index"]
            body.append(
                f"<h3>key <code>{html.escape(record.key)}</code></h3>"
                f'<p class="meta">chosen: [{best}] <code>{html.escape(record.best_config_text())}'
                f"</code>; hardware {html.escape(json.dumps(fields['hardware'], sort_keys=True))}; "
                f"{measurement['warmup_runs']} warm-up + {measurement['timed_runs']} timed runs, "
                f"{html.escape(measurement['statistic'])}, {html.escape(measurement['strategy'])}; "
                f"ranks {fields['ranks']}; created {html.escape(fields['created_utc'])}; "
                f"file {html.escape(str(record.path))}</p>"
            )
            body.append(_svg(fields))
            body.append(_table(fields))
    if bad:
        body.append("<h2>Files that are not valid records</h2><ul>")
        body.extend(f'<li class="bad">{html.escape(line)}</li>' for line in bad)
        body.append("</ul>")
    return (
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>disttune report</title><style>{_STYLE}</style></head><body>"
        + "".join(body)
        + "</body></html>\n"
    )
