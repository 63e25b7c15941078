"""Execute a purge plan on the writer the table allows, and report what was done.

Delta's ``REORG`` where the engine has Delta (``statement``), else here (``native``); the
protocol gate (``writer_choice``) decides, and a table only Delta can write goes to Delta's
local writer unless starts are deferred (a post-hook's ``JvmDeferredError``).
"""

from __future__ import annotations

import time
from typing import Any

from python_ops.delta.table.features import Op
from python_ops.delta_sql import DeltaSql
from python_ops.ops.purge.native import WRITER_NATIVE, purge_natively
from python_ops.ops.purge.options import PurgeOptions
from python_ops.ops.purge.plan import PurgePlan
from python_ops.ops.purge.statement import WRITER_REORG, reorg
from python_ops.ops.results import PurgeResult
from python_ops.storage import Storage


def execute_purge(
    plan: PurgePlan,
    options: PurgeOptions,
    *,
    storage: Storage,
    sql: DeltaSql | None,
    started: float,
) -> PurgeResult:
    """Rewrite the plan's due partitions (nothing in a dry run) and measure the result.

    Args:
        plan: The plan.
        options: The request.
        storage: The table's storage (the native writer's).
        sql: The engine's Delta SQL, if any.
        started: ``time.perf_counter()`` when the run started.

    Returns:
        What was (or would be) purged.
    """
    outcome: dict[str, Any] = {}
    writer = ""
    if plan.due and not options.dry_run:
        outcome, writer = _rewrite(plan, storage, sql)
    due = plan.due
    return PurgeResult(
        location=plan.location,
        dry_run=options.dry_run,
        deleted_ratio=options.deleted_ratio,
        version_before=plan.snapshot.version,
        rows=plan.rows,
        deleted_rows=plan.deleted,
        partitions_due=plan.due_rows(),
        files_to_rewrite=sum(p.files_with_dv for p in due),
        bytes_to_rewrite=sum(p.bytes_with_dv for p in due),
        reclaimable_bytes=sum(p.reclaimable_bytes for p in due),
        commit=outcome.get("version"),
        files_removed=int(outcome.get("removed", 0)),
        files_added=int(outcome.get("added", 0)),
        bytes_removed=int(outcome.get("bytes_removed", 0)),
        bytes_added=int(outcome.get("bytes_added", 0)),
        writer=writer,
        skipped_reason=None
        if due
        else f"no partition has more than {options.deleted_ratio:g} rows deleted",
        duration_s=time.perf_counter() - started,
    )


def _rewrite(plan: PurgePlan, storage: Storage, sql: DeltaSql | None) -> tuple[dict[str, Any], str]:
    """Purge the due partitions: Delta's REORG where the engine has Delta, else here."""
    # imported here: the writer's machinery is not for a dry run
    from python_ops.ops.writer_choice import delta_writer_for, keeps_empty_partition_values

    _gate, engine = delta_writer_for(plan.snapshot, Op.COMPACTION, sql, plan.location)
    values = [p.partition_values for p in plan.due]
    here = keeps_empty_partition_values(plan.snapshot, Op.COMPACTION, values, plan.location)
    if not here and engine is not None and engine.has_delta(plan.location):
        return reorg(engine, plan.snapshot, list(plan.due)), f"{WRITER_REORG} on {engine.where}"
    return purge_natively(storage, plan.snapshot, list(plan.due)), WRITER_NATIVE
