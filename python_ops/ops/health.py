"""``table_health``: how much maintenance a table needs, read from its Delta log alone."""

from __future__ import annotations

import time

from python_ops.delta.state.deletes import deleted_rows
from python_ops.delta.state.snapshot import Snapshot, read_snapshot
from python_ops.delta.table.features import Op
from python_ops.delta.table.properties import DELETED_FILE_RETENTION, resolve_retention
from python_ops.delta.table.protocol import check_protocol
from python_ops.ops.results import TableHealth
from python_ops.storage import Storage
from python_ops.values import checked_number

DEFAULT_SMALL_FILE_THRESHOLD_BYTES = 32 * 1024 * 1024


def table_health(
    table: str | Storage,
    *,
    small_file_threshold_bytes: int = DEFAULT_SMALL_FILE_THRESHOLD_BYTES,
    now_ms: int | None = None,
    snapshot: Snapshot | None = None,
) -> TableHealth:
    """Summarise a Delta table's file layout and log from its ``_delta_log``.

    Args:
        table: Table location (path or URI) or an open ``Storage``.
        small_file_threshold_bytes: Files smaller than this count as small.
        now_ms: The current time in ms since the epoch (for tombstone expiry); now when None.
        snapshot: The table's snapshot, when the caller has read it (its version is the one
            reported); None: read here.

    Returns:
        The table's health.

    Raises:
        ConfigError: When the threshold is not positive or the table's retention property
            cannot be parsed.
        TableNotFoundError: When there is no Delta table at the location.
        DeltaLogError: When the log cannot be read.
        UnsupportedFeatureError: When the table uses a feature health cannot report on.
    """
    small_file_threshold_bytes = int(
        checked_number(
            small_file_threshold_bytes,
            setting="small_file_threshold_bytes",
            minimum=1,
            whole=True,
        )
    )
    started = time.perf_counter()
    snap = read_snapshot(table) if snapshot is None else snapshot
    check_protocol(snap.protocol, Op.HEALTH, location=snap.location)
    retention = resolve_retention(snap.metadata.configuration, DELETED_FILE_RETENTION)
    now = int(time.time() * 1000) if now_ms is None else now_ms
    cutoff_ms = retention.cutoff_ms(now)
    sizes = [f.size_bytes for f in snap.files]
    num_small = sum(1 for s in sizes if s < small_file_threshold_bytes)
    deletes = []
    if any(f.deletion_vector for f in snap.files):  # numRecords: read the statistics too
        deletes = deleted_rows(read_snapshot(table, version=snap.version, with_stats=True))
    rows = sum(p.rows for p in deletes)
    deleted = sum(p.deleted_rows for p in deletes)
    partitions = {
        tuple(sorted(f.partition_values.items(), key=lambda kv: kv[0])) for f in snap.files
    }
    return TableHealth(
        location=snap.location,
        version=snap.version,
        checkpoint_version=snap.checkpoint_version,
        num_files=len(sizes),
        total_bytes=sum(sizes),
        small_file_threshold_bytes=small_file_threshold_bytes,
        num_small_files=num_small,
        small_file_share=(num_small / len(sizes)) if sizes else 0.0,
        num_partitions=len(partitions) if snap.metadata.partition_columns else (1 if sizes else 0),
        partition_columns=snap.metadata.partition_columns,
        num_log_files=len(snap.log_files),
        num_tombstones=sum(1 for t in snap.tombstones if t.deletion_timestamp_ms >= cutoff_ms),
        deleted_file_retention_hours=retention.hours,
        duration_s=time.perf_counter() - started,
        deleted_rows=deleted,
        deleted_row_share=deleted / rows if rows else 0.0,
        max_partition_deleted_share=max((p.deleted_share for p in deletes), default=0.0),
        purge_reclaimable_bytes=sum(p.reclaimable_bytes for p in deletes),
    )
