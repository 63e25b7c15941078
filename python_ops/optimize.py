"""OPTIMIZE: our plan (``python_ops.optimize_plan``), executed and committed by delta-rs.

Each partition with work goes to delta-rs's ``optimize.compact`` (or ``optimize.z_order``) with
partition filters selecting exactly that partition and the planned target size. delta-rs writes
the new files and commits ``remove``/``add`` actions with ``dataChange=false`` and operation
``OPTIMIZE``; its conflict checker lets concurrent appends through and fails when a concurrent
commit removed a file being compacted. Such a failure is reported cleanly: nothing of that
partition is committed, and files the failed attempt wrote are untracked, left for VACUUM.
"""

from __future__ import annotations

import json
import time
from typing import Any

from python_ops.audit import audit_record
from python_ops.errors import MaintenanceError
from python_ops.optimize_plan import OptimizePlan, plan_optimize, plan_summary
from python_ops.results import OptimizeResult
from python_ops.storage import open_storage


class OptimizeConflictError(MaintenanceError):
    """A concurrent commit removed files being compacted; the partition was not committed."""


def _metric(metrics: dict[str, Any], name: str, field: str) -> int:
    raw = metrics.get(name) or "{}"
    value = json.loads(raw) if isinstance(raw, str) else raw
    return int(value.get(field) or 0)


def execute_plan(
    plan: OptimizePlan, *, max_concurrent_tasks: int | None = None
) -> list[dict[str, Any]]:
    """Hand every partition with work to delta-rs; return each call's metrics and version.

    Raises:
        OptimizeConflictError: When delta-rs refuses a commit because of a concurrent change.
    """
    from deltalake import DeltaTable

    table = DeltaTable(plan.location)
    outcomes: list[dict[str, Any]] = []
    for partition in plan.work:
        filters = partition.filters or None
        try:
            if plan.zorder_by:
                metrics = table.optimize.z_order(
                    list(plan.zorder_by),
                    partition_filters=filters,
                    target_size=plan.target_size_bytes,
                    max_concurrent_tasks=max_concurrent_tasks,
                )
            else:
                metrics = table.optimize.compact(
                    partition_filters=filters,
                    target_size=plan.target_size_bytes,
                    max_concurrent_tasks=max_concurrent_tasks,
                )
        except Exception as err:  # delta-rs raises CommitFailedError and others
            where = ", ".join(f"{k}={v}" for k, v in partition.partition_values.items()) or "table"
            raise OptimizeConflictError(
                f"OPTIMIZE of {plan.location} ({where}) was not committed: {err}. Committed "
                f"partitions so far: {len(outcomes)}. Files the failed attempt wrote are not "
                "referenced by the table; VACUUM removes them after the retention period."
            ) from err
        outcomes.append({"metrics": metrics, "version": table.version()})
    return outcomes


def optimize(
    table: str,
    *,
    zorder_by: list[str] | None = None,
    where: str | None = None,
    full: bool = False,
    target_size_bytes: int | None = None,
    min_small_files: int = 2,
    dry_run: bool = False,
    max_concurrent_tasks: int | None = None,
    model: str | None = None,
) -> OptimizeResult:
    """Plan and run OPTIMIZE (compaction, or Z-order when ``zorder_by`` is given).

    Args:
        table: The table location.
        zorder_by: Z-order columns; None or empty for compaction.
        where: Predicate on partition columns limiting the scope.
        full: Every selected partition, not only those changed since the last OPTIMIZE.
        target_size_bytes: Target file size (None: table property, else engine default).
        min_small_files: Minimum small files in a partition for compaction to be worth it.
        dry_run: Only plan.
        max_concurrent_tasks: Writer parallelism (None: number of CPUs).
        model: The dbt model, for messages.

    Returns:
        The plan and what was committed.

    Raises:
        ConfigError: For bad columns, predicates or sizes.
        OptimizeConflictError: When a concurrent change made a commit impossible.
    """
    started = time.perf_counter()
    location = open_storage(table).root
    try:
        plan = plan_optimize(
            location,
            zorder_by=zorder_by,
            where=where,
            full=full,
            target_size_bytes=target_size_bytes,
            min_small_files=min_small_files,
            model=model,
        )
        reason = None if plan.work else "nothing worth rewriting in scope"
        outcomes = (
            []
            if dry_run or not plan.work
            else execute_plan(plan, max_concurrent_tasks=max_concurrent_tasks)
        )
    except Exception as err:
        audit_record(
            "optimize",
            location,
            "failed",
            {"model": model, "zorder_by": zorder_by, "where": where, "error": str(err)},
        )
        raise
    metrics = [o["metrics"] for o in outcomes]
    result = OptimizeResult(
        location=location,
        dry_run=dry_run,
        zorder_by=plan.zorder_by,
        plan=plan_summary(plan),
        skipped_reason=reason,
        version_before=plan.version,
        commits=tuple(o["version"] for o in outcomes if o["metrics"].get("numFilesAdded")),
        num_files_added=sum(int(m.get("numFilesAdded") or 0) for m in metrics),
        num_files_removed=sum(int(m.get("numFilesRemoved") or 0) for m in metrics),
        bytes_added=sum(_metric(m, "filesAdded", "totalSize") for m in metrics),
        bytes_removed=sum(_metric(m, "filesRemoved", "totalSize") for m in metrics),
        partitions_optimized=sum(int(m.get("partitionsOptimized") or 0) for m in metrics),
        total_considered_files=sum(int(m.get("totalConsideredFiles") or 0) for m in metrics),
        total_files_skipped=sum(int(m.get("totalFilesSkipped") or 0) for m in metrics),
        duration_s=time.perf_counter() - started,
    )
    audit_record("optimize", location, "succeeded", {"model": model, **result.to_dict()})
    return result
