"""Delta's own OPTIMIZE runs our plan, where the engine has Delta.

The statement (``optimize_statement``: the plan's partitions with work, its Z-order columns)
runs under ``optimize_settings`` (the session settings that make Delta pick exactly the planned
files), for that statement only; the counts are Delta's own output row, the commit is found by
a marker in its ``userMetadata``, and a commit that removed a file outside the plan is a
failure, never a warning.
"""

from __future__ import annotations

import uuid
from typing import Any

from python_ops.delta_sql import DeltaSql
from python_ops.ops.optimize.planning.outcome import Outcome
from python_ops.ops.optimize.planning.plan import OptimizePlan
from python_ops.ops.optimize.writers.delta_statement import (
    BATCH_SIZE,
    MARKER_PREFIX,
    MAX_DELETED_ROWS_RATIO,
    MAX_FILE_SIZE,
    MIN_FILE_SIZE,
    USER_METADATA,
    as_dict,
    marked_commit,
    optimize_metrics,
    partitions_predicate,
    run_marked,
    unmarked_answer,
)


def _partition_predicate(plan: OptimizePlan) -> str | None:
    """The plan's partitions with work as a predicate on partition columns (None: all of them)."""
    work = plan.work
    if not work or not work[0].partition_values:
        return None
    if plan.where is None and len(work) == len(plan.partitions):
        return None
    names = plan.snapshot.metadata.logical_names() if plan.snapshot is not None else {}
    return partitions_predicate([p.partition_values for p in work], names)


def optimize_statement(plan: OptimizePlan, table: str) -> str:
    """Delta's own OPTIMIZE for our plan: its partitions with work, its Z-order columns.

    Args:
        plan: The plan (``plan_optimize``).
        table: How the engine names the table (``delta.`<location>``` or its catalog name).

    Returns:
        The statement (run it with ``optimize_settings``).
    """
    statement = f"OPTIMIZE {table}"
    predicate = _partition_predicate(plan)
    if predicate:
        statement += f" WHERE {predicate}"
    if plan.zorder_by:
        statement += " ZORDER BY (" + ", ".join(f"`{c}`" for c in plan.zorder_by) + ")"
    return statement


def optimize_settings(plan: OptimizePlan, marker: str) -> dict[str, str | None]:
    """Session settings under which Delta's OPTIMIZE rewrites exactly the planned files.

    Delta takes every file of the ``WHERE`` partitions smaller than ``minFileSize`` (all of
    them for Z-order), sorts each partition's files by size, fills bins up to ``maxFileSize``
    and drops single-file bins: our plan's rule with our target as both sizes. Its other
    candidate rule (files whose deletion vectors delete more than ``maxDeletedRowsRatio`` of
    their rows) is not part of our plan, so the ratio is set to 1 (no file exceeds it).
    ``batchSize`` unset: one batch, so one commit for the statement. ``userMetadata`` carries a
    marker unique to this run, so the commit it made is found without guessing.

    Args:
        plan: The plan.
        marker: This run's marker for the commit's ``userMetadata``.

    Returns:
        Setting name to value (None: unset while the statement runs).
    """
    return {
        MIN_FILE_SIZE: str(plan.target_size_bytes),
        MAX_FILE_SIZE: str(plan.target_size_bytes),
        MAX_DELETED_ROWS_RATIO: "1.0",
        BATCH_SIZE: None,
        USER_METADATA: marker,
    }


def _marked_commit(plan: OptimizePlan, marker: str) -> tuple[int, set[str]] | None:
    return marked_commit(plan.location, plan.version, marker)


def run_with_delta_sql(
    sql: DeltaSql, plan: OptimizePlan, failures: list[dict[str, Any]]
) -> list[Outcome]:
    """Hand the plan to Delta's own OPTIMIZE; what it did is its own output row.

    The statement comes from ``optimize_statement`` and runs under ``optimize_settings``
    (restored afterwards) on a session of its own (``StatementSession``); the counts are the
    metrics of the row Delta's OPTIMIZE returns for this very statement, the commit version the
    one marked with this run's marker. A commit that removed a file outside the plan is a
    failure in ``failures`` (the op then fails, exit 1), never a warning only.
    """
    table = sql.table(plan.location)
    marker = MARKER_PREFIX + uuid.uuid4().hex
    rows = run_marked(
        sql,
        optimize_statement(plan, table),
        optimize_settings(plan, marker),
        location=plan.location,
        after=plan.version,
    )
    m = optimize_metrics(rows, table, sql.where)
    added = int(m.get("numFilesAdded") or 0)
    removed = int(m.get("numFilesRemoved") or 0)
    version: int | None = None
    if added or removed:
        found = _marked_commit(plan, marker)
        if found is None:
            raise unmarked_answer(
                plan.location,
                plan.version,
                marker,
                f"Delta's OPTIMIZE of {table} on {sql.where} answered it rewrote {removed} "
                f"file(s) ({USER_METADATA} {marker!r})",
            )
        version, paths = found
        planned = {f for p in plan.work for b in p.bins for f in b.files}
        if paths - planned:  # Delta widened the plan (e.g. files appended since planning)
            outside = sorted(paths - planned)
            failures.append(
                {
                    "partition_values": {},
                    "reason": f"Delta's OPTIMIZE committed version {version} removing "
                    f"{len(outside)} file(s) outside the plan ({', '.join(outside[:5])}"
                    f"{', ...' if len(outside) > 5 else ''}); the table's rows are unchanged "
                    "(OPTIMIZE rewrites with dataChange=false), but the op did more than it "
                    "planned",
                    "committed_version": version,
                    "inputs_still_live": False,
                    "attempts": 1,
                }
            )
    return [
        Outcome(
            version=version,
            files_added=added,
            files_removed=removed,
            bytes_added=int(as_dict(m.get("filesAdded")).get("totalSize") or 0),
            bytes_removed=int(as_dict(m.get("filesRemoved")).get("totalSize") or 0),
            considered=int(m.get("totalConsideredFiles") or 0),
            skipped=int(m.get("totalFilesSkipped") or 0),
            partitions=int(m.get("partitionsOptimized") or 0),
        )
    ]
