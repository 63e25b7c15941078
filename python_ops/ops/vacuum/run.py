"""VACUUM: delete files a Delta table no longer references, as Delta's ``VacuumCommand.gc`` does.

``options`` -> ``plan`` (retention, mode, protected set, candidates, selection) -> ``execute``
(deletes, state file) -> result, composed here with the run's audit record (docs/spec.md 1).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Unpack

from python_ops.delta.log.commits import commits_shared
from python_ops.ops.audit import Audit, as_audit, audited
from python_ops.ops.results import VacuumResult
from python_ops.ops.vacuum.execute import Progress, execute
from python_ops.ops.vacuum.plan import Given, plan_vacuum
from python_ops.ops.vacuum.rule import options as opts
from python_ops.ops.vacuum_modes import VacuumEngine, VacuumMode
from python_ops.storage import Storage, open_storage


def vacuum(  # noqa: D417 (the options are documented once, on VacuumOptions)
    table: str | Storage,
    *,
    spark: Any = None,
    retention_hours: float | None = None,
    dry_run: bool = True,
    partition_filter: str | None = None,
    allow_short_retention: bool = False,
    max_workers: int = 8,
    now_ms: int | None = None,
    on_progress: Progress | None = None,
    progress_interval_s: float = 5.0,
    cluster_listing: bool = False,
    engine: VacuumEngine | str = VacuumEngine.AUTO,
    audit: Audit | bool = True,
    mode: VacuumMode | str = VacuumMode.FULL,
    full_interval_days: float = 7.0,
    inventory: str | None = None,
    **given: Unpack[Given],
) -> VacuumResult:
    """Delete (or, by default, only report) files the table no longer references.

    Args:
        table: Table location (path or URI) or an open ``Storage``.
        spark: A Spark session, for ``engine="spark"`` and ``cluster_listing`` (None: none).
        on_progress: Called with (files done, files total) during deletion.
        **given: What the caller has already (``Given``: snapshot, evidence, invocation,
            how it names the table and the override in warnings).
        The others: ``VacuumOptions``'s fields, documented there.

    Returns:
        What was found and deleted, with every selected path.

    Raises:
        MaintenanceError: As ``plan_vacuum`` (bad option, retention or table): nothing deleted.
    """
    workers = opts.checked_workers(max_workers)
    mode = opts.checked_mode(mode, inventory=inventory, cluster=cluster_listing)
    on = opts.checked_engine(engine, spark=spark, cluster=cluster_listing)
    storage = table if isinstance(table, Storage) else open_storage(table, spark=spark)
    params = {"retention_hours": retention_hours, "dry_run": dry_run, "mode": mode,
              "partition_filter": partition_filter, "inventory": inventory}  # fmt: skip
    audit = as_audit(audit)
    audit = replace(audit, enabled=audit.enabled or not dry_run)  # a deleting run is recorded
    with (
        commits_shared(mode != VacuumMode.FULL),  # LITE reads commits the snapshot replayed: once
        audited("vacuum", storage.root, params, audit=audit) as record,
    ):
        o = opts.VacuumOptions(
            retention_hours, dry_run, partition_filter, allow_short_retention, workers, now_ms,
            progress_interval_s, cluster_listing, on, audit,
            opts.vacuum_mode(mode), full_interval_days, inventory,
        )  # fmt: skip
        plan = plan_vacuum(storage, options=o, spark=spark, **given)
        result = execute(plan, spark=spark, on_progress=on_progress)
        record |= result.to_dict(include_paths=False)
    return result
