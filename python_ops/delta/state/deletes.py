"""Soft-deleted rows of a deletion-vector table, per partition, from the log alone.

Rows a file holds are its statistics' ``numRecords``; rows its deletion vector deletes are the
vector's ``cardinality``. Health, the report and the purge's due rule read them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from python_ops.delta.log.actions import AddFile
from python_ops.delta.state.snapshot import Snapshot


@dataclass(frozen=True)
class PartitionDeletes:
    """Soft-deleted rows of one partition, from the log.

    Attributes:
        partition_values: Partition column to value (empty for an unpartitioned table).
        rows: Rows the live files hold (deleted ones included), from ``numRecords``.
        deleted_rows: Rows their deletion vectors delete.
        files_with_dv: Live files with a deletion vector.
        bytes_with_dv: Their bytes (what a purge rewrites).
        reclaimable_bytes: Estimated bytes a purge frees: each file's size times its deleted
            share.
    """

    partition_values: dict[str, str | None]
    rows: int
    deleted_rows: int
    files_with_dv: int
    bytes_with_dv: int
    reclaimable_bytes: int

    @property
    def deleted_share(self) -> float:
        """Deleted rows over all rows (0 when the partition holds none)."""
        return self.deleted_rows / self.rows if self.rows else 0.0


def _records(f: AddFile) -> int | None:
    if not f.stats:
        return None
    value = json.loads(f.stats).get("numRecords")
    return None if value is None else int(value)


def deleted_rows(snapshot: Snapshot) -> list[PartitionDeletes]:
    """Per partition, the rows its live files hold and the rows their deletion vectors delete.

    Args:
        snapshot: A snapshot read ``with_stats=True`` (files without ``numRecords`` are left
            out: their share cannot be known).

    Returns:
        One entry per partition with live files, sorted by partition values.
    """
    groups: dict[tuple[tuple[str, str | None], ...], list[AddFile]] = {}
    for f in snapshot.files:
        groups.setdefault(tuple(sorted(f.partition_values.items())), []).append(f)
    out = []
    for key in sorted(groups, key=lambda k: [(c, v or "") for c, v in k]):
        rows = deleted = with_dv = dv_bytes = free = 0
        for f in groups[key]:
            records = _records(f)
            if records is None:
                continue
            gone = f.deletion_vector.cardinality if f.deletion_vector else 0
            rows += records
            deleted += gone
            if gone:
                with_dv += 1
                dv_bytes += f.size_bytes
                free += int(f.size_bytes * gone / records) if records else 0
        out.append(PartitionDeletes(dict(key), rows, deleted, with_dv, dv_bytes, free))
    return out
