"""``purge``: options -> plan -> execute -> result, audited."""

from __future__ import annotations

import time
from typing import Any

from python_ops.delta.state.snapshot import Snapshot
from python_ops.delta_sql import DeltaSql, session_sql
from python_ops.ops.audit import Audit, as_audit
from python_ops.ops.purge.execute import execute_purge
from python_ops.ops.purge.options import DEFAULT_DELETED_RATIO, PurgeOptions
from python_ops.ops.purge.plan import plan_purge
from python_ops.ops.results import PurgeResult
from python_ops.storage import open_storage


def purge(
    table: str,
    *,
    deleted_ratio: float = DEFAULT_DELETED_RATIO,
    dry_run: bool = False,
    spark: Any = None,
    sql: DeltaSql | None = None,
    snapshot: Snapshot | None = None,
    audit: Audit | bool = True,
) -> PurgeResult:
    """Purge soft-deleted rows of the partitions whose deleted share passes ``deleted_ratio``.

    Args:
        table: The table location.
        deleted_ratio: Purge a partition when its deleted rows over its rows exceed this.
        dry_run: Only report what would be purged.
        spark: A Spark session; when it has Delta, the purge runs on it.
        sql: Where Delta's SQL would run (overrides ``spark``).
        snapshot: The table's latest snapshot with statistics, if just read.
        audit: Whether the run is audited, and the caller's labels (``ops.audit.Audit``).

    Returns:
        What was (or would be) purged.

    Raises:
        ConfigError: For a ratio outside 0..1.
        UnsupportedFeatureError: When no Delta writer is available or Delta 4.4 refuses the
            table.
        EngineError: When Delta failed the statement or answered unexpectedly (nothing
            changed).
        ChangedThenFailedError: When a failure came after a commit.
    """
    started = time.perf_counter()
    options = PurgeOptions.checked(deleted_ratio=deleted_ratio, dry_run=dry_run)
    storage = open_storage(table)
    if sql is None and spark is not None:
        sql = session_sql(spark)
    audited = as_audit(audit)
    try:
        plan = plan_purge(storage.root, options, snapshot=snapshot)
        result = execute_purge(plan, options, storage=storage, sql=sql, started=started)
    except Exception as err:
        audited.record("purge", storage.root, "failed", {**options.params(), "error": str(err)})
        raise
    audited.record("purge", storage.root, "succeeded", {**options.params(), **result.to_dict()})
    return result
