"""The maintenance report: per model, health, reclaimable bytes, what is due next, last runs."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import time
from collections.abc import Sequence
from typing import Any

from python_ops.delta.state.snapshot import Snapshot, read_snapshot
from python_ops.errors import MaintenanceError, TableNotFoundError
from python_ops.invocation import Invocation
from python_ops.maintenance.configuration.op_keys import as_model_setting, model_words
from python_ops.maintenance.configuration.policy import effective_snapshot
from python_ops.maintenance.decisions.due import Decision, decide
from python_ops.maintenance.facts.layout import Replacement, layout_replaced
from python_ops.maintenance.records.history import HistoryRecord, HistoryStore
from python_ops.maintenance.records.outcomes import Reason, Status
from python_ops.maintenance.rules.reclaim import hours_to_expiry
from python_ops.maintenance.rules.wording import size_text
from python_ops.maintenance.runs.auto_columns import admitted_per_column
from python_ops.maintenance.runs.registry import OPS
from python_ops.maintenance.selection.targets import ModelTarget
from python_ops.ops.audit import Audit
from python_ops.ops.health import table_health
from python_ops.ops.vacuum import vacuum
from python_ops.ops.vacuum_modes import VacuumEngine
from python_ops.storage import open_storage


def hours_text(hours: float) -> str:
    """A wait in hours as ``40 min``, ``5 h`` or ``3 d``, rounded up (never "in 0 h")."""
    if hours < 1:
        return f"{max(1, -int(-hours * 60 // 1))} min"
    if hours < 48:
        return f"{-int(-hours // 1)} h"
    return f"{-int(-hours // 24)} d"


def next_action(decisions: Sequence[Decision], vacuum_in_h: float | None) -> str:
    """What maintenance will do next for a model, in words.

    Args:
        decisions: Its ops' decisions now.
        vacuum_in_h: Hours until a removed file passes VACUUM's retention (None: unknown).

    Returns:
        ``optimize now`` (every op due now), else the soonest wait (``vacuum in 5 h``: an op's
        minimum interval, or removed files reaching the retention), else ``nothing due``.
    """
    now = [d.op for d in decisions if d.due]
    if now:
        return f"{', '.join(now)} now"
    waits = [(d.due_in_h, d.op) for d in decisions if d.due_in_h is not None]
    if vacuum_in_h is not None and any(
        d.op == "vacuum" and d.reason is Reason.NOT_DUE for d in decisions
    ):
        waits.append((vacuum_in_h, "vacuum"))
    if waits:
        hours, op = min(waits)
        return f"{op} in {hours_text(hours)}"
    return "nothing due"


def _next(
    target: ModelTarget,
    snapshot: Snapshot,
    history: HistoryStore | None,
    now_s: float,
    invocation: Invocation | None,
) -> str:
    if not target.config.enabled:
        return "disabled (maintenance_enabled)"
    if not any(target.config.op_enabled(op) for op in OPS):
        return "disabled (every op)"
    decisions = []
    for op in OPS:  # one op's bad setting (a Z-order column) leaves the others' answers
        try:
            decisions += decide(
                target, snapshot, ops=(op,), history=history, now_s=now_s, invocation=invocation
            )
        except MaintenanceError:
            decisions.append(Decision(op, Reason.ERROR, "error"))
    if any(d.reason is Reason.ERROR for d in decisions):
        failed = ", ".join(d.op for d in decisions if d.reason is Reason.ERROR)
        return f"fix config ({failed})"
    expiry = hours_to_expiry(target, snapshot, int(now_s * 1000), invocation=invocation)
    return next_action(decisions, expiry)


def recorded_choice(t: ModelTarget, record: HistoryRecord | None) -> ModelTarget:
    """``t`` with ``auto`` Z-order columns as its last ``auto`` clustering recorded them.

    The report runs no advisor: what is due next is decided on the last choice (a rebuilt
    table's re-clustering is due on those columns, ``rebuilt_layout``).
    """
    c = t.config
    if not c.zorder_auto or c.zorder_by or record is None or not record.clustering_columns:
        return t
    columns = tuple(x for x in record.clustering_columns.split(",") if x)
    return dataclasses.replace(t, config=dataclasses.replace(c, zorder_by=columns))


def files_per_lookup_text(record: HistoryRecord | None) -> str:
    """Files admitted per lookup before and after the last ``auto`` clustering, in words.

    Args:
        record: The model's last successful OPTIMIZE that recorded an ``auto`` choice.

    Returns:
        E.g. ``user_id 12 -> 3.1, region 12 -> 4 (clustered 2026-11-26 22:40)``; '' for none.
    """
    if record is None or not record.clustering_columns:
        return ""
    try:
        before = json.loads(record.files_per_lookup_before or "{}")
        after = json.loads(record.files_per_lookup_after or "{}")
    except ValueError:
        return ""
    parts = [
        f"{c} {before.get(c, '-')} -> {after.get(c, '-')}"
        for c in record.clustering_columns.split(",")
    ]
    return f"{', '.join(parts)} (clustered {record.started_at:%Y-%m-%d %H:%M})"


def replaced_text(
    columns: Sequence[str], gone: Replacement, now: dict[str, float], files: int
) -> str:
    """Files admitted per lookup now, for a table whose clustering's files were all replaced.

    Args:
        columns: The clustering's columns.
        gone: The commit that replaced the last of its files (``layout_replaced``).
        now: Files admitted per lookup measured on the table now, per column.
        files: The table's live files now.

    Returns:
        E.g. ``not clustered since version 7 replaced its files (CREATE OR REPLACE TABLE AS
        SELECT, 2026-12-05 03:10): user_id 8 of 8 files now``.
    """
    what = [gone.operation] if gone.operation else []
    if gone.timestamp_ms is not None:
        stamp = dt.datetime.fromtimestamp(gone.timestamp_ms / 1000, tz=dt.UTC)
        what.append(f"{stamp:%Y-%m-%d %H:%M}")
    how = f" ({', '.join(what)})" if what else ""
    when = f"version {gone.version}" if gone.version is not None else "a later version"
    measured = [f"{c} {now[c]:g} of {files} files now" for c in columns if c in now]
    return f"not clustered since {when} replaced its files{how}: " + (
        ", ".join(measured) or "not measured"
    )


def lookup_text(t: ModelTarget, snapshot: Snapshot | None, record: HistoryRecord | None) -> str:
    """What the model's last ``auto`` clustering left, if its files are still the table's.

    Its figures (``files_per_lookup_text``) while one of the files it wrote is live; once a
    build replaced them all, the files per lookup measured now (``replaced_text``).

    Args:
        t: The model.
        snapshot: Its table's snapshot now (None: not read).
        record: The model's last successful OPTIMIZE that recorded an ``auto`` choice.

    Returns:
        The words; '' for none.
    """
    text = files_per_lookup_text(record)
    if not text or record is None or snapshot is None:
        return text
    if record.version_before is None or record.version_after is None:
        return text
    live = [f.path for f in snapshot.files]
    written = (record.version_before, record.version_after)
    gone = layout_replaced(open_storage(t.location), written, snapshot.version, live)
    if gone is None:
        return text
    columns = [c for c in (record.clustering_columns or "").split(",") if c]
    now = admitted_per_column(t.location, tuple(columns))
    return replaced_text(columns, gone, now, len(snapshot.files))


def report_rows(
    targets: Sequence[ModelTarget],
    *,
    spark: Any,
    history: HistoryStore | None,
    vacuum_engine: VacuumEngine = VacuumEngine.AUTO,
    now_s: float | None = None,
    invocation: Invocation | None = None,
) -> list[dict[str, Any]]:
    """One row per model: health, reclaimable bytes (a VACUUM dry run), next action, last runs.

    Args:
        targets: The models.
        spark: A Spark session (for the VACUUM dry run).
        history: The maintenance history.
        vacuum_engine: Where the dry run's selection runs (``vacuum``'s ``engine``).
        now_s: The current time (None = now).
        invocation: The command it runs in (a check's warnings once per command).

    Returns:
        Rows as plain data (sizes in bytes).
    """
    now = time.time() if now_s is None else now_s
    last: dict[tuple[str, str], HistoryRecord] = {}
    # the last OPTIMIZE with auto clustering that rewrote files (else the last one)
    clustered: dict[str, HistoryRecord] = {}
    records = history.records() if history is not None else []
    for r in records:
        if not r.dry_run:
            last[(r.model, r.op)] = r  # records are oldest first
            auto = r.op == "optimize" and r.status == "succeeded" and r.clustering_columns
            if auto and (r.files_added or r.model not in clustered):
                clustered[r.model] = r
    shares = build_shares(records)
    rows = []
    for t in targets:
        row: dict[str, Any] = {"model": t.name}
        snapshot: Snapshot | None = None
        try:
            snapshot = read_snapshot(t.location)  # read once: health, VACUUM, what is next
            h = table_health(t.location, snapshot=snapshot)
        except MaintenanceError as err:  # no table, an unreadable log: nothing to show
            row["error"] = str(err)
            # a located table whose log is gone is missing (its files were deleted), not an
            # error of reading it
            row["status"] = "missing" if isinstance(err, TableNotFoundError) else "error"
        else:
            row.update(
                files=h.num_files,
                small_files=h.num_small_files,
                bytes=h.total_bytes,
                log_files=h.num_log_files,
                deleted_row_share=h.deleted_row_share,
                purge_reclaimable_bytes=h.purge_reclaimable_bytes,
                tombstones=None,
                reclaimable_bytes=None,
            )
            row.update(_vacuum_columns(t, snapshot, spark, vacuum_engine, invocation))
            chosen = recorded_choice(t, clustered.get(t.name))
            row["next"] = _next(chosen, snapshot, history, now, invocation)
        row.update(_last_runs(t.name, last))
        row["files_per_lookup"] = lookup_text(t, snapshot, clustered.get(t.name))
        row.update(shares.get(t.name, {}))
        rows.append(row)
    return rows


def _vacuum_columns(
    t: ModelTarget,
    snapshot: Snapshot,
    spark: Any,
    vacuum_engine: VacuumEngine,
    invocation: Invocation | None,
) -> dict[str, Any]:
    """Tombstones within the model's retention and what VACUUM would reclaim (a dry run).

    A bad setting loses only what it decides (``config_error``), never the model's row.
    """
    try:
        with as_model_setting(t.name, "vacuum"):
            v = vacuum(
                t.location,
                spark=spark,
                dry_run=True,
                retention_hours=t.config.vacuum_retention_hours,
                allow_short_retention=t.config.vacuum_allow_short_retention,
                # an estimate for the report, not a VACUUM run: unaudited (as the due check's),
                # not a line per table in dbt's log
                audit=Audit(enabled=False),
                engine=vacuum_engine,
                # a retention the package recorded follows the config (``policy``)
                snapshot=effective_snapshot(snapshot),
                invocation=invocation,
                words=model_words(t.name),
            )
    except MaintenanceError as err:
        return {"config_error": str(err)}
    # removed files not yet past the model's retention (the one VACUUM uses)
    tombstones = sum(1 for f in snapshot.tombstones if f.deletion_timestamp_ms >= v.cutoff_ms)
    return {"tombstones": tombstones, "reclaimable_bytes": v.bytes_found}


def _last_runs(model: str, last: dict[tuple[str, str], HistoryRecord]) -> dict[str, Any]:
    """Each op's last run (time and status), and why the deferred ones were deferred."""
    out: dict[str, Any] = {}
    for op in OPS:
        rec = last.get((model, op))
        out[op] = f"{rec.started_at:%Y-%m-%d %H:%M} {rec.status}" if rec is not None else "never"
        if rec is not None and rec.status == Status.DEFERRED:  # why, and that it is still due
            out.setdefault("deferred", []).append(f"{op} deferred: {rec.reason}")
    return out


def build_shares(records: Sequence[HistoryRecord]) -> dict[str, dict[str, Any]]:
    """Per model, the post-hook's maintenance seconds beside its builds' seconds.

    From the history rows the post-hook wrote (those with ``build_s``): each build (one per
    invocation) counts its seconds once; the ops' seconds add up.

    Returns:
        Model to ``builds``, ``build_s``, ``maintenance_s`` and ``maintenance_share``.
    """
    builds: dict[str, dict[str, float]] = {}
    ops: dict[str, float] = {}
    for r in records:
        if r.build_s is None or r.dry_run:
            continue
        per_model = builds.setdefault(r.model, {})
        per_model[r.invocation_id] = max(per_model.get(r.invocation_id, 0.0), r.build_s)
        if r.status != "skipped":
            ops[r.model] = ops.get(r.model, 0.0) + r.duration_s
    out = {}
    for model, per_build in builds.items():
        build_s, maintenance_s = sum(per_build.values()), ops.get(model, 0.0)
        out[model] = {
            "builds": len(per_build),
            "build_s": build_s,
            "maintenance_s": maintenance_s,
            "maintenance_share": maintenance_s / build_s if build_s > 0 else None,
        }
    return out


def _share_lines(rows: list[dict[str, Any]]) -> list[str]:
    """The "maintenance share of build" section: one line per model the post-hook recorded."""
    shared = [r for r in rows if r.get("builds")]
    if not shared:
        return []
    lines = ["maintenance share of build (post-hook: its ops' seconds / the builds' seconds)"]
    for r in shared:
        share = r["maintenance_share"]
        words = "-" if share is None else f"{share:.1%}"
        lines.append(
            f"{r['model']:<26} {words:>7}  {r['maintenance_s']:.2f} s of maintenance after "
            f"{r['builds']} build(s) of {r['build_s']:.2f} s"
        )
    return lines


def render_report(rows: list[dict[str, Any]]) -> str:
    """The rows as a fixed-width table, sizes in scaled units, with a labelled totals row."""
    head = (
        f"{'model':<26} {'files':>6} {'small':>6} {'size':>9} {'log':>5} {'tombs':>6} "
        f"{'reclaim':>9}  {'next action':<22} {'last vacuum':<27} {'last optimize':<27} "
        "last cleanup_logs"
    )
    lines = [head]
    for r in rows:
        if "error" in r:
            lines.append(f"{r['model']:<26} {r.get('status', 'error')}: {r['error']}")
            continue
        tombs = "-" if r["tombstones"] is None else str(r["tombstones"])
        reclaim = "-" if r["reclaimable_bytes"] is None else size_text(r["reclaimable_bytes"])
        lines.append(
            f"{r['model']:<26} {r['files']:>6} {r['small_files']:>6} "
            f"{size_text(r['bytes']):>9} {r['log_files']:>5} {tombs:>6} "
            f"{reclaim:>9}  {r['next']:<22} "
            f"{r['vacuum']:<27} {r['optimize']:<27} {r['cleanup_logs']}"
        )
    ok = [r for r in rows if "error" not in r]
    due = sum(1 for r in ok if r["next"].endswith(" now"))
    label = f"total ({len(rows)} model{'s' if len(rows) != 1 else ''})"
    lines.append(
        f"{label:<26} {sum(r['files'] for r in ok):>6} "
        f"{sum(r['small_files'] for r in ok):>6} {size_text(sum(r['bytes'] for r in ok)):>9} "
        f"{sum(r['log_files'] for r in ok):>5} {sum(r['tombstones'] or 0 for r in ok):>6} "
        f"{size_text(sum(r['reclaimable_bytes'] or 0 for r in ok)):>9}  "
        f"{str(due) + ' with work due now':<22}"
    )
    lines.extend(
        f"{r['model']:<26} fix config: {r['config_error']}" for r in ok if "config_error" in r
    )
    lines.extend(f"{r['model']:<26} {why}" for r in rows for why in r.get("deferred", ()))
    lines.extend(
        f"{r['model']:<26} files admitted per lookup: {r['files_per_lookup']}"
        for r in rows
        if r.get("files_per_lookup")
    )
    # deletion-vector tables only: soft-deleted rows and what a purge would free
    deleted = [r for r in ok if r.get("deleted_row_share")]
    lines.extend(
        f"{r['model']:<26} deleted rows {r['deleted_row_share']:.1%}, a purge would free "
        f"{size_text(r['purge_reclaimable_bytes'])}"
        for r in deleted
    )
    lines.extend(_share_lines(rows))
    return "\n".join(lines)
