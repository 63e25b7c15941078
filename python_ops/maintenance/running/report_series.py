"""The HTML report's numbers: per model, its builds as series, from the history and the log.

Each point is one invocation that ran ops on the model (a dbt build's post-hook, a
run-operation, a command line run), oldest first: the table's live files, small files, bytes and
log files after it (``report_states``, at the newest version its rows name), the seconds its ops
took, and what each op reclaimed: VACUUM's deleted files and bytes, OPTIMIZE's files compacted
away (removed less written), log cleanup's deleted log files. Dry runs are not points.

A point whose rows name no table version (a proof that a build created an empty table, a skip)
shows the newest commit written before the next point started (the last point: the newest).
Log files at a point count those still in the log now plus those a later log cleanup recorded
deleting (the history says how many, not which; a cleanup deletes the oldest files first).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from python_ops.maintenance.records.history import HistoryRecord
from python_ops.maintenance.records.outcomes import Status
from python_ops.maintenance.running.report_states import table_states

#: The newest points kept per model (older builds are summed into the totals only).
MAX_POINTS = 60

#: The per-point series, in the order the page's charts read them.
SERIES = (
    "t",
    "files",
    "small_files",
    "bytes",
    "log_files",
    "maintenance_s",
    "build_s",
    "vacuum_files",
    "vacuum_bytes",
    "optimize_files",
    "cleanup_logs_files",
)


#: The series the estate sums per day.
SUMMED = ("maintenance_s", "vacuum_files", "vacuum_bytes", "optimize_files", "cleanup_logs_files")


def _version(records: Sequence[HistoryRecord]) -> int | None:
    """The newest table version an invocation's rows name (after its ops, else its build)."""
    found = [v for r in records for v in (r.version_after, r.version_before) if v is not None]
    for r in records:
        if not r.build_versions or r.build_versions == "[]":
            continue
        try:
            found += [int(v) for v in json.loads(r.build_versions)]
        except (TypeError, ValueError):
            continue
    return max(found) if found else None


def _point(records: Sequence[HistoryRecord]) -> dict[str, Any]:
    """One invocation's rows as a point (its state columns filled in later)."""
    done = [r for r in records if r.status == Status.SUCCEEDED]

    def moved(op: str, column: str) -> int:
        return sum(int(getattr(r, column) or 0) for r in done if r.op == op)

    builds = [r.build_s for r in records if r.build_s is not None]
    return {
        "t": min(r.started_at for r in records).timestamp(),
        "maintenance_s": round(sum(r.duration_s for r in records if r.status != "skipped"), 6),
        "build_s": max(builds) if builds else None,
        "vacuum_files": moved("vacuum", "files_removed"),
        "vacuum_bytes": moved("vacuum", "bytes_removed"),
        "optimize_files": moved("optimize", "files_removed") - moved("optimize", "files_added"),
        "cleanup_logs_files": moved("cleanup_logs", "files_removed"),
        "version": _version(records),
    }


def model_points(records: Sequence[HistoryRecord], location: str) -> dict[str, list[Any]]:
    """One model's history rows as columnar series (``SERIES``), oldest point first.

    Args:
        records: The model's history rows, oldest first (dry runs are left out here).
        location: Its table's location (whose log gives the layout at each point).

    Returns:
        Series name to one value per point (None where the log cannot say).
    """
    by_invocation: dict[str, list[HistoryRecord]] = {}
    for r in records:
        if not r.dry_run:
            by_invocation.setdefault(r.invocation_id, []).append(r)
    points = sorted((_point(rs) for rs in by_invocation.values()), key=lambda p: p["t"])
    points = points[-MAX_POINTS:]
    # a point naming no version (a proof, a skip) shows the table as the next point found it
    until = [int(p["t"] * 1000) - 1 for p in points[1:]] + [2**62]
    states = table_states(location, [(p["version"], u) for p, u in zip(points, until, strict=True)])
    cleaned_later = 0
    for p, state in zip(reversed(points), reversed(states), strict=True):
        p["files"] = state.files if state else None
        p["small_files"] = state.small_files if state else None
        p["bytes"] = state.bytes if state else None
        p["log_files"] = state.log_files + cleaned_later if state else None
        cleaned_later += p["cleanup_logs_files"]
    return {name: [p[name] for p in points] for name in SERIES}


def model_entry(
    row: Mapping[str, Any], records: Sequence[HistoryRecord], location: str
) -> dict[str, Any]:
    """A model's part of the page: its report row's words and numbers, and its series.

    Args:
        row: Its ``report_rows`` row.
        records: Its history rows, oldest first.
        location: Its table's location.

    Returns:
        ``model``, ``next`` (what is due next, or why the row could not be read), ``now``
        (the report row's numbers) and ``series`` (``model_points``).
    """
    now_keys = ("files", "small_files", "bytes", "log_files", "tombstones", "reclaimable_bytes")
    next_words = row.get("next") or f"{row.get('status', 'error')}: {row.get('error', '')}"
    return {
        "model": row["model"],
        "next": next_words,
        "notes": [*row.get("deferred", ()), *filter(None, [row.get("config_error")])],
        "now": {k: row.get(k) for k in now_keys},
        "series": model_points(records, location),
    }


def estate_totals(models: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The estate's totals over ``model_entry`` results: now, and over every point drawn.

    Returns:
        Counts and sums by name, and ``days``: per UTC day (``t``, its midnight in seconds),
        maintenance seconds and what each op reclaimed (the estate's charts).
    """
    now = [m["now"] for m in models]
    totals: dict[str, Any] = {
        "models": len(models),
        "due_now": sum(1 for m in models if str(m["next"]).endswith(" now")),
    }
    for key in ("files", "small_files", "bytes", "log_files", "reclaimable_bytes"):
        totals[key] = sum(int(n.get(key) or 0) for n in now)
    days: dict[int, dict[str, float]] = {}
    for m in models:
        s = m["series"]
        for i, t in enumerate(s["t"]):
            into = days.setdefault(int(t // 86400 * 86400), dict.fromkeys(SUMMED, 0.0))
            for key in SUMMED:
                into[key] += s[key][i] or 0
    order = sorted(days)
    for key in SUMMED:
        totals[key] = sum(days[d][key] for d in order)
    totals["maintenance_s"] = round(totals["maintenance_s"], 6)
    totals["days"] = {"t": order, **{k: [days[d][k] for d in order] for k in SUMMED}}
    return totals
