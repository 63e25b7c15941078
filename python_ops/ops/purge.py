"""Deletion-vector purge: rewrite the files of partitions whose soft-deleted rows pass a share.

A table with deletion vectors keeps deleted rows in its data files until they are rewritten.
``deleted_rows`` reads, per partition, the rows the live files hold (``numRecords`` of their
statistics) and the rows their deletion vectors delete (``cardinality``), from the log alone.
``purge`` runs Delta's ``REORG TABLE ... [WHERE <those partitions>] APPLY (PURGE)`` for the
partitions whose deleted share is above the threshold (default: Delta's OPTIMIZE threshold
``optimize.maxDeletedRowsRatio``, 0.05) on Delta's writer: the engine's when it has Delta,
else a local Spark with Delta (``python_ops.delta.local_writer``). delta-rs cannot read
deletion vectors, so it never purges. VACUUM later reclaims the replaced files.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Mapping
from typing import Any

from python_ops.delta.deletes import PartitionDeletes, deleted_rows
from python_ops.delta.protocol import Op
from python_ops.delta.snapshot import Snapshot, read_snapshot
from python_ops.errors import ChangedThenFailedError, EngineError
from python_ops.ops.audit import Audit, as_audit
from python_ops.ops.optimize.delta_statement import (
    MARKER_PREFIX,
    USER_METADATA,
    as_dict,
    marked_commit,
    partitions_predicate,
    run_marked,
)
from python_ops.ops.results import PurgeResult
from python_ops.spark_sessions import DeltaSql, session_sql
from python_ops.storage import Storage, open_storage
from python_ops.values import checked_number

#: Delta's own OPTIMIZE rewrites a file whose deletion vector deletes more than this share.
DEFAULT_DELETED_RATIO = 0.05
WRITER_REORG = "Delta REORG ... APPLY (PURGE) (SQL)"
WRITER_NATIVE = "python_ops purge + own commit"


def purge_statement(
    table: str, partitions: list[PartitionDeletes], logical: Mapping[str, str] | None = None
) -> str:
    """``REORG TABLE <table> [WHERE <partitions>] APPLY (PURGE)``.

    Args:
        table: How the engine names the table.
        partitions: The partitions to purge (a WHERE only when the table is partitioned).
        logical: Physical to logical column names under column mapping (``logical_names``).

    Returns:
        The statement.
    """
    predicate = partitions_predicate([p.partition_values for p in partitions], logical or {})
    where = f" WHERE {predicate}" if predicate else ""
    return f"REORG TABLE {table}{where} APPLY (PURGE)"


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
        EngineError: When Delta's answer is not the expected one.
    """
    started = time.perf_counter()
    ratio = checked_number(deleted_ratio, setting="deleted_ratio", maximum=1)
    location = open_storage(table).root
    if sql is None and spark is not None:
        sql = session_sql(spark)
    params: dict[str, Any] = {"deleted_ratio": ratio, "dry_run": dry_run}
    audited = as_audit(audit)
    try:
        if snapshot is None:
            snapshot = read_snapshot(location, with_stats=True)
        elif any(f.deletion_vector for f in snapshot.files) and not any(
            f.stats for f in snapshot.files
        ):  # the rows each file holds (numRecords) are in the statistics
            snapshot = read_snapshot(location, version=snapshot.version, with_stats=True)
        partitions = deleted_rows(snapshot)
        due = [p for p in partitions if p.deleted_rows and p.deleted_share > ratio]
        if due:
            snapshot.metadata.require_schema("purge", location)
        outcome: dict[str, Any] = {}
        writer = ""
        if due and not dry_run:
            outcome, writer = _rewrite(snapshot, due, sql)
    except Exception as err:
        audited.record("purge", location, "failed", {**params, "error": str(err)})
        raise
    result = PurgeResult(
        location=location,
        dry_run=dry_run,
        deleted_ratio=ratio,
        version_before=snapshot.version,
        rows=sum(p.rows for p in partitions),
        deleted_rows=sum(p.deleted_rows for p in partitions),
        partitions_due=tuple(
            {
                "partition_values": p.partition_values,
                "rows": p.rows,
                "deleted_rows": p.deleted_rows,
                "deleted_share": round(p.deleted_share, 6),
                "reclaimable_bytes": p.reclaimable_bytes,
            }
            for p in due
        ),
        files_to_rewrite=sum(p.files_with_dv for p in due),
        bytes_to_rewrite=sum(p.bytes_with_dv for p in due),
        reclaimable_bytes=sum(p.reclaimable_bytes for p in due),
        commit=outcome.get("version"),
        files_removed=int(outcome.get("removed", 0)),
        files_added=int(outcome.get("added", 0)),
        bytes_removed=int(outcome.get("bytes_removed", 0)),
        bytes_added=int(outcome.get("bytes_added", 0)),
        writer=writer,
        skipped_reason=None if due else f"no partition has more than {ratio:g} rows deleted",
        duration_s=time.perf_counter() - started,
    )
    audited.record("purge", location, "succeeded", {**params, **result.to_dict()})
    return result


def _rewrite(
    snapshot: Snapshot, due: list[PartitionDeletes], sql: DeltaSql | None
) -> tuple[dict[str, Any], str]:
    """Purge ``due``: Delta's REORG where the engine has Delta, else here (no JVM).

    Returns:
        What was committed, and the writer that did it.
    """
    # imported here: the writer's machinery is not for a dry run, nor for the commands that
    # import this module for its default only (``config``)
    from python_ops.ops.writer_choice import delta_writer_for

    location = snapshot.location
    _gate, engine = delta_writer_for(snapshot, Op.COMPACTION, sql, location)
    if engine is not None and engine.has_delta(location):
        return _reorg(engine, snapshot, due), f"{WRITER_REORG} on {engine.where}"
    return purge_natively(open_storage(location), snapshot, due), WRITER_NATIVE


def _reorg(sql: DeltaSql, snapshot: Snapshot, due: list[PartitionDeletes]) -> dict[str, Any]:
    marker = MARKER_PREFIX + "purge-" + uuid.uuid4().hex
    logical = snapshot.metadata.logical_names()
    statement = purge_statement(sql.table(snapshot.location), due, logical)
    rows = run_marked(
        sql,
        statement,
        {USER_METADATA: marker},
        location=snapshot.location,
        after=snapshot.version,
    )
    if len(rows) != 1 or "metrics" not in rows[0]:
        raise EngineError(
            f"Delta's REORG on {sql.where} answered {len(rows)} row(s) without the expected "
            f"'metrics' column: {rows[:1]!r}"
        )
    m = as_dict(rows[0]["metrics"])
    found = marked_commit(snapshot.location, snapshot.version, marker)
    if found is None and (m.get("numFilesAdded") or m.get("numFilesRemoved")):
        raise ChangedThenFailedError(  # as OPTIMIZE: a rewrite whose commit is not found
            f"Delta's REORG of {snapshot.location} on {sql.where} rewrote "
            f"{m.get('numFilesRemoved') or 0} file(s), but no commit after version "
            f"{snapshot.version} carries its marker {marker!r}; its history cannot be attributed"
        )
    return {
        "version": found[0] if found else None,
        "added": int(m.get("numFilesAdded") or 0),
        "removed": int(m.get("numFilesRemoved") or 0),
        "bytes_added": int(as_dict(m.get("filesAdded")).get("totalSize") or 0),
        "bytes_removed": int(as_dict(m.get("filesRemoved")).get("totalSize") or 0),
    }


def purge_natively(
    storage: Storage, snapshot: Snapshot, due: list[PartitionDeletes]
) -> dict[str, Any]:
    """``REORG ... APPLY (PURGE)``'s semantics, written and committed in this process.

    Each file with a deletion vector in the due partitions is rewritten alone without its
    deleted rows (a file left with none is only removed), one commit per partition, each remove
    carrying its deletion vector.

    Returns:
        What was committed: the last version, files and bytes removed and added.

    Raises:
        RewriteConflict: When a concurrent commit removed one of the files.
    """
    from python_ops.ops.optimize.native import discard_written
    from python_ops.ops.optimize.own_compact import write_bins
    from python_ops.ops.optimize.plan import Bin, PartitionPlan, stats_columns
    from python_ops.ops.optimize.rewrite_commit import RewriteCommit, commit_rewrite

    columns = stats_columns(snapshot)
    logical = snapshot.metadata.logical_names()
    done: dict[str, Any] = {"removed": 0, "added": 0, "bytes_removed": 0, "bytes_added": 0}
    version = snapshot.version
    for p in due:
        files = [
            f
            for f in snapshot.files
            if f.deletion_vector is not None and f.partition_values == p.partition_values
        ]
        bins = tuple(Bin((f.identity,), f.size_bytes) for f in files)
        plan = PartitionPlan(dict(p.partition_values), len(files), len(files), bins, None)
        written: list[Any] = []
        try:
            write_bins(storage, plan, {f.identity: f for f in files}, columns, written)
            rewrite = RewriteCommit(
                tuple(files),
                tuple(written),
                {"predicate": json.dumps([_partition_where(p, logical)]), "applyPurge": "true"},
                operation="REORG",
            )
            version, _ = commit_rewrite(
                storage, rewrite, read_version=snapshot.version, next_version=version + 1
            )
        except BaseException:
            discard_written(storage, written)
            raise
        done["version"] = version
        done["removed"] += len(files)
        done["added"] += len(written)
        done["bytes_removed"] += sum(f.size_bytes for f in files)
        done["bytes_added"] += sum(w.size_bytes for w in written)
    return done


def _partition_where(p: PartitionDeletes, logical: Mapping[str, str]) -> str:
    return partitions_predicate([p.partition_values], logical) or "true"
