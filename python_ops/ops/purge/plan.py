"""The purge plan: the partitions whose deleted-row share passes the threshold, from the log.

``deleted_rows`` reads, per partition, the rows the live files hold (``numRecords`` of their
statistics) and the rows their deletion vectors delete (``cardinality``); nothing is read but
the log.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from python_ops.delta.state.deletes import PartitionDeletes, deleted_rows
from python_ops.delta.state.snapshot import Snapshot, read_snapshot
from python_ops.ops.purge.options import PurgeOptions


@dataclass(frozen=True)
class PurgePlan:
    """What a purge will rewrite on one table version.

    Attributes:
        location: The table location.
        snapshot: The snapshot planned on (with statistics).
        partitions: Every partition's rows and deleted rows.
        due: The partitions above the threshold, in the order they are purged.
    """

    location: str
    snapshot: Snapshot
    partitions: tuple[PartitionDeletes, ...]
    due: tuple[PartitionDeletes, ...]

    @property
    def rows(self) -> int:
        """Rows the live files hold (deleted included)."""
        return sum(p.rows for p in self.partitions)

    @property
    def deleted(self) -> int:
        """Rows the deletion vectors delete."""
        return sum(p.deleted_rows for p in self.partitions)

    def due_rows(self) -> tuple[dict[str, Any], ...]:
        """Each due partition as the result reports it."""
        return tuple(
            {
                "partition_values": p.partition_values,
                "rows": p.rows,
                "deleted_rows": p.deleted_rows,
                "deleted_share": round(p.deleted_share, 6),
                "reclaimable_bytes": p.reclaimable_bytes,
            }
            for p in self.due
        )


def plan_purge(
    location: str, options: PurgeOptions, *, snapshot: Snapshot | None = None
) -> PurgePlan:
    """Plan a purge: read the log (statistics included) and pick the partitions due.

    Args:
        location: The normalised table location.
        options: The request.
        snapshot: The latest snapshot if just read (read again with statistics when it has
            deletion vectors but no statistics: the rows each file holds are in them).

    Returns:
        The plan.

    Raises:
        DeltaLogError: When the log cannot be read, or a due table has no schema.
    """
    if snapshot is None:
        snapshot = read_snapshot(location, with_stats=True)
    elif any(f.deletion_vector for f in snapshot.files) and not any(
        f.stats for f in snapshot.files
    ):
        snapshot = read_snapshot(location, version=snapshot.version, with_stats=True)
    partitions = tuple(deleted_rows(snapshot))
    ratio = options.deleted_ratio
    due = tuple(p for p in partitions if p.deleted_rows and p.deleted_share > ratio)
    if due:
        snapshot.metadata.require_schema("purge", location)
    return PurgePlan(location, snapshot, partitions, due)
