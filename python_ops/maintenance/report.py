"""The maintenance report: per model, health, reclaimable bytes and the last run of each op."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from python_ops.errors import MaintenanceError
from python_ops.maintenance.history import HistoryRecord, HistoryStore
from python_ops.maintenance.registry import OPS
from python_ops.maintenance.targets import ModelTarget
from python_ops.ops.health import table_health
from python_ops.ops.vacuum import vacuum


def report_rows(
    targets: Sequence[ModelTarget],
    *,
    spark: Any,
    history: HistoryStore | None,
    vacuum_engine: str = "auto",
) -> list[dict[str, Any]]:
    """One row per model: health from the log, reclaimable bytes (a VACUUM dry run), last runs.

    Args:
        targets: The models.
        spark: A Spark session (for the VACUUM dry run).
        vacuum_engine: Where the dry run's selection runs (``vacuum``'s ``engine``).
        history: The maintenance history.

    Returns:
        Rows as plain data.
    """
    last: dict[tuple[str, str], HistoryRecord] = {}
    for r in history.records() if history is not None else []:
        if not r.dry_run:
            last[(r.model, r.op)] = r  # records are oldest first
    rows = []
    for t in targets:
        row: dict[str, Any] = {"model": t.name}
        try:
            h = table_health(t.location)
            row.update(
                files=h.num_files,
                small_files=h.num_small_files,
                mb=h.total_bytes / 1e6,
                log_files=h.num_log_files,
                tombstones=h.num_tombstones,
            )
            v = vacuum(
                t.location,
                spark=spark,
                dry_run=True,
                retention_hours=t.config.vacuum_retention_hours,
                allow_short_retention=t.config.vacuum_allow_short_retention,
                model=t.name,
                engine=vacuum_engine,
            )
            row["reclaimable_mb"] = v.bytes_found / 1e6
        except MaintenanceError as err:
            row["error"] = str(err)
        for op in OPS:
            rec = last.get((t.name, op))
            row[op] = (
                f"{rec.started_at:%Y-%m-%d %H:%M} {rec.status}" if rec is not None else "never"
            )
        rows.append(row)
    return rows


def render_report(rows: list[dict[str, Any]]) -> str:
    """The rows as a fixed-width table with totals."""
    head = (
        f"{'model':<26} {'files':>6} {'small':>6} {'MB':>8} {'log':>5} {'tombs':>6} "
        f"{'reclaim MB':>10}  {'last vacuum':<27} {'last optimize':<27} last cleanup_logs"
    )
    lines = [head]
    for r in rows:
        if "error" in r:
            lines.append(f"{r['model']:<26} error: {r['error']}")
            continue
        lines.append(
            f"{r['model']:<26} {r['files']:>6} {r['small_files']:>6} {r['mb']:>8.2f} "
            f"{r['log_files']:>5} {r['tombstones']:>6} {r['reclaimable_mb']:>10.2f}  "
            f"{r['vacuum']:<27} {r['optimize']:<27} {r['cleanup_logs']}"
        )
    ok = [r for r in rows if "error" not in r]
    lines.append(
        f"{'total (' + str(len(rows)) + ' models)':<26} {sum(r['files'] for r in ok):>6} "
        f"{sum(r['small_files'] for r in ok):>6} {sum(r['mb'] for r in ok):>8.2f} "
        f"{sum(r['log_files'] for r in ok):>5} {sum(r['tombstones'] for r in ok):>6} "
        f"{sum(r['reclaimable_mb'] for r in ok):>10.2f}"
    )
    return "\n".join(lines)
