"""``REORG ... APPLY (PURGE)``'s semantics written and committed here: no engine, no JVM.

Each file with a deletion vector in a due partition is rewritten alone without its deleted
rows (a file left with none is only removed); one commit per partition (operation ``REORG``,
``applyPurge``), each remove carrying its add's path string and deletion vector. A failure
after a partition committed is reported with what committed (``ChangedThenFailedError``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from python_ops.delta.log.actions import AddFile
from python_ops.delta.state.deletes import PartitionDeletes
from python_ops.delta.state.snapshot import Snapshot
from python_ops.errors import ChangedThenFailedError
from python_ops.ops.optimize.writers.delta_statement import partitions_predicate
from python_ops.storage import Storage

WRITER_NATIVE = "python_ops purge + own commit"


def purge_natively(
    storage: Storage, snapshot: Snapshot, due: list[PartitionDeletes]
) -> dict[str, Any]:
    """Purge ``due`` here, one commit per partition.

    Returns:
        What was committed: the last version, files and bytes removed and added.

    Raises:
        LiveFilesMissingError: When an input is not in storage (nothing written).
        RewriteConflict: When a concurrent commit removed one of the first partition's files
            (nothing committed).
        ChangedThenFailedError: When a later partition failed after earlier ones committed.
    """
    from python_ops.ops.live_files import require_live_files

    inputs = [f for p in due for f in _inputs(snapshot, p)]
    require_live_files(storage, inputs, op="purge")  # before anything is written
    logical = snapshot.metadata.logical_names()
    done: dict[str, Any] = {"removed": 0, "added": 0, "bytes_removed": 0, "bytes_added": 0}
    for p in due:
        try:
            committed = _purge_partition(storage, snapshot, p, done.get("version"), logical)
        except Exception as err:
            if "version" not in done:
                raise
            raise ChangedThenFailedError(
                f"{snapshot.location}: the purge committed version(s) up to {done['version']} "
                f"({done['removed']} file(s) rewritten), then partition "
                f"{dict(p.partition_values)} failed: {err}"
            ) from err
        done["version"] = committed["version"]
        for key in ("removed", "added", "bytes_removed", "bytes_added"):
            done[key] += committed[key]
    return done


def _inputs(snapshot: Snapshot, p: PartitionDeletes) -> list[AddFile]:
    """The partition's files with deletion vectors: what its purge rewrites."""
    return [
        f
        for f in snapshot.files
        if f.deletion_vector is not None and f.partition_values == p.partition_values
    ]


def _purge_partition(
    storage: Storage,
    snapshot: Snapshot,
    p: PartitionDeletes,
    last: int | None,
    logical: Mapping[str, str],
) -> dict[str, Any]:
    """Rewrite one partition's files with deletion vectors and commit (after ``last``)."""
    # imported here: the writer's machinery is not for a dry run or a plan
    from python_ops.ops.optimize.planning.plan import Bin, PartitionPlan, stats_columns
    from python_ops.ops.optimize.writers.native import discard_written, in_commit_timestamps
    from python_ops.ops.optimize.writers.own_compact import write_bins
    from python_ops.ops.optimize.writers.rewrite_commit import RewriteCommit, commit_rewrite

    files = _inputs(snapshot, p)
    bins = tuple(Bin((f.identity,), f.size_bytes) for f in files)
    plan = PartitionPlan(dict(p.partition_values), len(files), len(files), bins, None)
    written: list[Any] = []
    predicate = partitions_predicate([p.partition_values], logical) or "true"
    try:
        columns = snapshot.metadata.physical(stats_columns(snapshot))  # as the files name them
        write_bins(storage, plan, {f.identity: f for f in files}, columns, written)
        rewrite = RewriteCommit(
            tuple(files),
            tuple(written),
            {"predicate": json.dumps([predicate]), "applyPurge": "true"},
            operation="REORG",
            in_commit_timestamps=in_commit_timestamps(snapshot),
        )
        version, _ = commit_rewrite(
            storage,
            rewrite,
            read_version=snapshot.version,
            next_version=(snapshot.version if last is None else last) + 1,
        )
    except BaseException:
        discard_written(storage, written)
        raise
    return {
        "version": version,
        "removed": len(files),
        "added": len(written),
        "bytes_removed": sum(f.size_bytes for f in files),
        "bytes_added": sum(w.size_bytes for w in written),
    }
