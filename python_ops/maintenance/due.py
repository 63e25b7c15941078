"""What maintenance is due for a table: its config, its Delta log and the maintenance history.

Only the Delta log is read (no data file is listed), so deciding costs a few milliseconds and
the post-hook is nearly free when nothing is due.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from python_ops.delta.log_files import LogFileKind
from python_ops.delta.snapshot import Snapshot, read_snapshot
from python_ops.maintenance.config import OPS, MaintenanceConfig
from python_ops.maintenance.history import HistoryStore
from python_ops.ops.log_cleanup import resolve_log_retention
from python_ops.ops.optimize.plan import plan_optimize
from python_ops.ops.vacuum import resolve_retention


@dataclass(frozen=True)
class Decision:
    """Whether one op is due for one model, and why.

    Attributes:
        op: The op.
        due: True when it should run now.
        reason: Why (or why not), for logs and reports.
    """

    op: str
    due: bool
    reason: str


def _interval_elapsed(
    config: MaintenanceConfig, op: str, history: HistoryStore | None, now_s: float
) -> tuple[bool, str]:
    hours = config.interval_hours(op)
    last = history.last_success(config.model, op) if history is not None else None
    if last is None or hours <= 0:
        return True, ""
    age_h = (now_s - last.started_at.timestamp()) / 3600
    if age_h < hours:
        return False, f"last run {age_h:.1f} h ago, interval {hours:g} h"
    return True, ""


def _vacuum_due(config: MaintenanceConfig, snapshot: Snapshot, now_s: float) -> tuple[bool, str]:
    hours, _, _ = resolve_retention(
        snapshot,
        config.vacuum_retention_hours,
        allow_short_retention=config.vacuum_allow_short_retention,
        model=config.model,
    )
    cutoff_ms = (now_s - hours * 3600) * 1000
    expired = sum(1 for t in snapshot.tombstones if t.deletion_timestamp_ms < cutoff_ms)
    if expired:
        return True, f"{expired} removed file(s) older than the {hours:g} h retention"
    return False, f"no removed file older than the {hours:g} h retention"


def _cleanup_logs_due(
    config: MaintenanceConfig, snapshot: Snapshot, now_s: float
) -> tuple[bool, str]:
    retention, _ = resolve_log_retention(snapshot.metadata.configuration, config.log_retention_days)
    days = retention.total_seconds() / 86400
    if snapshot.checkpoint_version is None:
        return False, "no checkpoint yet (commits before one are never expired)"
    cutoff_ms = (now_s - days * 86400) * 1000
    expired = sum(
        1
        for f in snapshot.log_files
        if f.kind is LogFileKind.COMMIT
        and f.version is not None
        and f.version < snapshot.checkpoint_version
        and f.modification_time_ms < cutoff_ms
    )
    if expired:
        return True, f"{expired} commit file(s) older than {days:g} days before a checkpoint"
    return False, f"no commit file older than {days:g} days before a checkpoint"


def _optimize_due(config: MaintenanceConfig, location: str, snapshot: Snapshot) -> tuple[bool, str]:
    plan = plan_optimize(
        location,
        snapshot=snapshot,
        zorder_by=list(config.zorder_by),
        target_size_bytes=config.target_file_size_bytes,
        min_small_files=config.min_small_files,
        model=config.model,
    )
    if plan.work:
        kind = "Z-order" if plan.zorder_by else "compaction"
        return True, (
            f"{kind}: {plan.files_to_rewrite} file(s) in {len(plan.work)} partition(s) "
            "worth rewriting"
        )
    return False, f"nothing worth rewriting (min_small_files={config.min_small_files})"


def decide(
    config: MaintenanceConfig,
    location: str,
    *,
    ops: tuple[str, ...] = OPS,
    history: HistoryStore | None = None,
    now_s: float | None = None,
) -> list[Decision]:
    """Decide which of ``ops`` are due for the table at ``location``.

    Args:
        config: The model's config.
        location: The table location.
        ops: Ops to consider.
        history: The maintenance history (for the minimum intervals).
        now_s: The current time (None = now).

    Returns:
        One decision per op, in ``ops`` order.

    Raises:
        ConfigError: For bad settings found against the table (e.g. a Z-order column).
    """
    now = time.time() if now_s is None else now_s
    snapshot = read_snapshot(location)
    out = []
    for op in ops:
        if not config.op_enabled(op):
            switch = "maintenance_enabled" if not config.enabled else f"maintenance_{op}_enabled"
            out.append(Decision(op, False, f"disabled by {switch}"))
            continue
        elapsed, why = _interval_elapsed(config, op, history, now)
        if not elapsed:
            out.append(Decision(op, False, why))
            continue
        if op == "vacuum":
            due, why = _vacuum_due(config, snapshot, now)
        elif op == "cleanup_logs":
            due, why = _cleanup_logs_due(config, snapshot, now)
        else:
            due, why = _optimize_due(config, location, snapshot)
        out.append(Decision(op, due, why))
    return out
