"""Delta's own purge: ``REORG TABLE ... [WHERE <partitions>] APPLY (PURGE)`` on an engine."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from python_ops.delta.state.deletes import PartitionDeletes
from python_ops.delta.state.snapshot import Snapshot
from python_ops.delta_sql import DeltaSql
from python_ops.errors import EngineError
from python_ops.ops.optimize.writers.delta_statement import (
    MARKER_PREFIX,
    USER_METADATA,
    as_dict,
    marked_commit,
    partitions_predicate,
    run_marked,
    unmarked_answer,
)

WRITER_REORG = "Delta REORG ... APPLY (PURGE) (SQL)"


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


def reorg(sql: DeltaSql, snapshot: Snapshot, due: list[PartitionDeletes]) -> dict[str, Any]:
    """Run Delta's REORG for ``due`` and find the commit it made (by this run's marker).

    Returns:
        What was committed: version, files and bytes removed and added.

    Raises:
        EngineError: When Delta failed the statement (nothing committed) or answered
            unexpectedly.
        ChangedThenFailedError: When Delta rewrote files but its commit cannot be found, or it
            failed after committing.
    """
    marker = MARKER_PREFIX + "purge-" + uuid.uuid4().hex
    logical = snapshot.metadata.logical_names()
    statement = purge_statement(sql.table(snapshot.location), due, logical)
    rows = run_marked(
        sql, statement, {USER_METADATA: marker}, location=snapshot.location, after=snapshot.version
    )
    if len(rows) != 1 or "metrics" not in rows[0]:
        raise EngineError(
            f"Delta's REORG on {sql.where} answered {len(rows)} row(s) without the expected "
            f"'metrics' column: {rows[:1]!r}"
        )
    m = as_dict(rows[0]["metrics"])
    found = marked_commit(snapshot.location, snapshot.version, marker)
    if found is None and (m.get("numFilesAdded") or m.get("numFilesRemoved")):
        raise unmarked_answer(  # as OPTIMIZE: a rewrite whose commit is not found
            snapshot.location,
            snapshot.version,
            marker,
            f"Delta's REORG of {snapshot.location} on {sql.where} answered it rewrote "
            f"{m.get('numFilesRemoved') or 0} file(s)",
        )
    return {
        "version": found[0] if found else None,
        "added": int(m.get("numFilesAdded") or 0),
        "removed": int(m.get("numFilesRemoved") or 0),
        "bytes_added": int(as_dict(m.get("filesAdded")).get("totalSize") or 0),
        "bytes_removed": int(as_dict(m.get("filesRemoved")).get("totalSize") or 0),
    }
