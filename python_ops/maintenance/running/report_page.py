"""The maintenance report as one self-contained HTML page: no server, nothing fetched.

The page carries everything it shows: the words and numbers of each model (written here, in the
same wording as the text report: ``size_text``), the series its charts draw (``report_series``)
as JSON, the charting library (uPlot 1.6.32, MIT, vendored in ``report_assets/`` from the npm
package ``uplot``; its license beside it) and the page's own script and style, inline. A model's
charts are drawn when its section comes near the viewport, so a 1,000-model page opens at once.
"""

from __future__ import annotations

import datetime as dt
import html
import json
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from python_ops.errors import ConfigError
from python_ops.maintenance.records.history import HistoryRecord
from python_ops.maintenance.rules.wording import files_text, size_text
from python_ops.maintenance.running.report_series import estate_totals, model_entry

ASSETS = Path(__file__).with_name("report_assets")

#: The charts each model's section holds (``report.js`` draws them by these names).
MODEL_CHARTS = ("files", "bytes", "time", "reclaimed")
ESTATE_CHARTS = ("estate-time", "estate-reclaimed")


@cache
def _asset(name: str) -> str:
    return (ASSETS / name).read_text(encoding="utf-8")


def _script_safe(text: str) -> str:
    """Text that cannot end the ``<script>`` element it is put in."""
    return text.replace("</", "<\\/").replace("<!--", "<\\!--")


def page_data(
    rows: Sequence[Mapping[str, Any]],
    records: Sequence[HistoryRecord],
    locations: Mapping[str, str],
) -> dict[str, Any]:
    """What the page shows, as plain data: ``models`` (``model_entry``) and ``totals``.

    Args:
        rows: The ``report_rows`` rows, one per model.
        records: The whole maintenance history, oldest first.
        locations: Model name to its table's location.

    Returns:
        ``models`` in the rows' order and the estate's ``totals`` (``estate_totals``).
    """
    by_model: dict[str, list[HistoryRecord]] = {}
    for r in records:
        by_model.setdefault(r.model, []).append(r)
    models = [
        model_entry(row, by_model.get(row["model"], []), locations.get(row["model"], ""))
        for row in rows
    ]
    return {"models": models, "totals": estate_totals(models)}


def _tiles(totals: Mapping[str, Any]) -> str:
    """The estate's totals as labelled tiles."""
    tiles = [
        ("models", f"{totals['models']:,}"),
        ("with work due now", f"{totals['due_now']:,}"),
        ("live files", f"{totals['files']:,}"),
        ("small files", f"{totals['small_files']:,}"),
        ("live size", size_text(totals["bytes"])),
        ("log files", f"{totals['log_files']:,}"),
        ("VACUUM could free now", size_text(totals["reclaimable_bytes"])),
        ("maintenance time (builds drawn)", f"{totals['maintenance_s']:,.2f} s"),
        ("VACUUM freed", size_text(totals["vacuum_bytes"])),
        ("files VACUUM deleted", f"{int(totals['vacuum_files']):,}"),
        ("files OPTIMIZE compacted", f"{int(totals['optimize_files']):,}"),
        ("log files deleted", f"{int(totals['cleanup_logs_files']):,}"),
    ]
    return "".join(
        f'<div class="tile" data-total="{html.escape(label)}"><b>{html.escape(value)}</b>'
        f"<span>{html.escape(label)}</span></div>"
        for label, value in tiles
    )


#: Models due now listed by name at the top (the rest counted).
DUE_LISTED = 50


def _due_list(models: Sequence[Mapping[str, Any]]) -> str:
    """The models with work due now, each a link to its section (``DUE_LISTED`` at most)."""
    due = [(i, m) for i, m in enumerate(models) if str(m["next"]).endswith(" now")]
    if not due:
        return '<p class="due-list">nothing due now</p>'
    links = ", ".join(
        f'<a href="#model-{i}">{html.escape(m["model"])}</a> ({html.escape(m["next"])})'
        for i, m in due[:DUE_LISTED]
    )
    more = f" and {len(due) - DUE_LISTED:,} more" if len(due) > DUE_LISTED else ""
    return f'<p class="due-list">due now: {links}{more}</p>'


def _now_text(now: Mapping[str, Any]) -> str:
    """A model's layout now, in the text report's words."""
    if now.get("files") is None:
        return ""
    reclaim = now.get("reclaimable_bytes")
    logs = now["log_files"]
    return (
        f"now: {files_text(now['files'], now['bytes'])}, {now['small_files']} small; "
        f"{logs} log file{'' if logs == 1 else 's'}"
        + (f"; VACUUM could free {size_text(reclaim)}" if reclaim else "")
    )


def _section(index: int, model: Mapping[str, Any]) -> str:
    """One model's section: its name, what is due next, its layout now, its charts' holders."""
    name = html.escape(model["model"])
    due = "due" if str(model["next"]).endswith(" now") else "wait"
    notes = "".join(f"<li>{html.escape(n)}</li>" for n in model["notes"])
    charts = "".join(f'<div class="chart" data-chart="{c}"></div>' for c in MODEL_CHARTS)
    return (
        f'<section class="model" id="model-{index}" data-index="{index}" data-model="{name}">'
        f'<h2>{name} <span class="next {due}">{html.escape(model["next"])}</span></h2>'
        f'<p class="now">{html.escape(_now_text(model["now"]))}</p>'
        + (f'<ul class="notes">{notes}</ul>' if notes else "")
        + f'<div class="charts">{charts}</div></section>'
    )


def render_page(data: Mapping[str, Any], *, title: str = "Delta maintenance report") -> str:
    """The page for ``page_data``'s result: one HTML document with everything inline.

    Args:
        data: ``page_data``'s result.
        title: The page's title.

    Returns:
        The document.
    """
    totals = data["totals"]
    generated = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    estate = "".join(f'<div class="chart" data-chart="{c}"></div>' for c in ESTATE_CHARTS)
    sections = "".join(_section(i, m) for i, m in enumerate(data["models"]))
    payload = _script_safe(json.dumps(data, separators=(",", ":"), allow_nan=False))
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<link rel="icon" href="data:,"><title>{html.escape(title)}</title>'
        f"<style>{_asset('uPlot.min.css')}\n{_asset('report.css')}</style></head><body>"
        f"<header><h1>{html.escape(title)}</h1><p>{totals['models']} models, written "
        f"{generated}; each point is one run of maintenance (a build's post-hook, a "
        "run-operation or a command line run) from the maintenance history.</p></header>"
        f'<section id="estate"><div class="tiles">{_tiles(totals)}</div>'
        f"{_due_list(data['models'])}"
        f'<div class="charts">{estate}</div></section>'
        '<nav><input id="filter" type="search" placeholder="filter models by name"></nav>'
        f"<main>{sections}</main>"
        f'<script type="application/json" id="report-data">{payload}</script>'
        f"<script>{_script_safe(_asset('uPlot.iife.min.js'))}</script>"
        f"<script>{_script_safe(_asset('report.js'))}</script></body></html>"
    )


def write_page(path: str | Path, data: Mapping[str, Any]) -> Path:
    """Write ``render_page``'s document to ``path`` (its folder made when missing).

    Args:
        path: The file to write.
        data: ``page_data``'s result.

    Returns:
        The file written.

    Raises:
        ConfigError: When the file cannot be written there (a folder, no permission).
    """
    target = Path(path)
    page = render_page(data)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(page, encoding="utf-8")
    except OSError as err:
        raise ConfigError(
            setting="html",
            value=str(path),
            fix=f"The page could not be written there ({err.strerror or err}); name a file "
            "in a folder this process can write.",
        ) from err
    return target
