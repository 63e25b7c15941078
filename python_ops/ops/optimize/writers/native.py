"""OPTIMIZE written and committed here: each partition's rewrite, exactly the plan.

Compaction writes each planned bin as one file (``own_compact.write_bins``), Z-order clusters
the partition (``zorder.write_clustered``); ``rewrite_commit`` commits the partition's
rewrite (removes spelled as the log spells each add) and reads it back. A partition whose
commit conflicts is not committed and the files it wrote are deleted.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from python_ops.delta.log.actions import AddFile
from python_ops.delta.state.snapshot import Snapshot, read_snapshot
from python_ops.delta.table.features import Op, Writer
from python_ops.delta.table.properties import IN_COMMIT_TIMESTAMPS
from python_ops.delta.table.protocol import check_protocol
from python_ops.delta.writing.log_commit import require_atomic_commits
from python_ops.errors import ChangedThenFailedError
from python_ops.ops.optimize.planning.outcome import Outcome, rewrite_outcome
from python_ops.ops.optimize.planning.plan import OptimizePlan, PartitionPlan
from python_ops.ops.optimize.planning.plan import stats_columns as indexed_columns
from python_ops.ops.optimize.sorting.external_sort import DEFAULT_MEMORY_BUDGET
from python_ops.ops.optimize.sorting.zorder import WrittenFile, check_supported, write_clustered
from python_ops.ops.optimize.writers.own_compact import write_bins
from python_ops.ops.optimize.writers.rewrite_commit import (
    RewriteCommit,
    RewriteConflict,
    commit_rewrite,
)
from python_ops.storage import Storage, open_storage

log = logging.getLogger(__name__)


def _parameters(plan: OptimizePlan) -> dict[str, str]:
    """``operationParameters`` as Delta's OPTIMIZE records them."""
    parameters = {
        "predicate": json.dumps([plan.where] if plan.where else []),
        "targetSize": str(plan.target_size_bytes),
    }
    if plan.zorder_by:
        parameters["zOrderBy"] = json.dumps(list(plan.zorder_by))
    return parameters


def _write_partition(
    storage: Storage,
    plan: OptimizePlan,
    partition: PartitionPlan,
    files: dict[str, AddFile],
    physical: tuple[list[str], list[str]],
    memory_budget_bytes: int,
) -> list[WrittenFile]:
    """Write one partition's rewrite (Z-order, or one file per compaction bin); no commit.

    ``physical``: the statistics columns and the Z-order columns as the files name them.
    """
    columns, zorder = physical
    if plan.zorder_by:
        inputs = [files[i] for b in partition.bins for i in b.files]
        return write_clustered(
            storage,
            inputs,
            columns=zorder,
            target_size_bytes=plan.target_size_bytes,
            stats_columns=columns,
            memory_budget_bytes=memory_budget_bytes,
        )
    written: list[WrittenFile] = []
    try:
        write_bins(storage, partition, files, columns, written)
    except BaseException:
        discard_written(storage, written)
        raise
    return written


def discard_written(storage: Storage, written: list[WrittenFile]) -> list[str]:
    """Delete files a rewrite wrote and never committed; returns those still there."""
    paths = [w.path for w in written]
    if not paths:
        return []
    try:
        left = storage.delete_files(paths)
    except OSError as err:
        log.warning("could not delete the uncommitted files %s: %s", paths, err)
        return paths
    return list(left)


#: How often a conflicted partition is planned again and retried, and the pause before each.
REPLANS = 2
REPLAN_PAUSE_S = (0.2, 0.8)

Attempt = tuple[OptimizePlan, PartitionPlan, dict[str, AddFile]]


def _commit_partition(
    storage: Storage,
    attempt: Attempt,
    outcomes: list[Outcome],
    physical: tuple[list[str], list[str]],
    memory_budget_bytes: int,
    *,
    stamp: bool,
) -> Outcome:
    """Write one partition's rewrite and commit it after this run's previous commits.

    Raises:
        RewriteConflict: Nothing committed; the files it wrote are deleted (those left are in
            its ``untracked``).
        ChangedThenFailedError: The commit is in the log (its files are the table's).
    """
    plan, partition, files = attempt
    inputs = [files[i] for b in partition.bins for i in b.files]
    written: list[WrittenFile] = []
    try:
        written = _write_partition(storage, plan, partition, files, physical, memory_budget_bytes)
        rewrite = RewriteCommit(
            tuple(inputs),
            tuple(written),
            _parameters(plan),
            in_commit_timestamps=stamp,
        )
        after = max((o.version or 0 for o in outcomes), default=plan.version)
        version, retried = commit_rewrite(
            storage, rewrite, read_version=plan.version, next_version=max(after, plan.version) + 1
        )
    except RewriteConflict as err:
        err.untracked = tuple(discard_written(storage, written))
        raise
    except ChangedThenFailedError:
        raise  # the commit is in the log: its files are the table's now
    except BaseException:
        left = discard_written(storage, written)
        if left:
            log.warning("OPTIMIZE %s: uncommitted files left: %s", plan.location, left)
        raise
    return rewrite_outcome(partition, inputs, written, version, retried)


def in_commit_timestamps(snapshot: Snapshot | None) -> bool:
    """Whether the table enables in-commit timestamps (each commit must carry one)."""
    config = snapshot.metadata.configuration if snapshot is not None else {}
    return config.get(IN_COMMIT_TIMESTAMPS, "false").lower() == "true"


def _replanned(
    storage: Storage, plan: OptimizePlan, partition: PartitionPlan, attempts: int
) -> Attempt | None:
    """The partition planned again on the latest snapshot, after a pause; None: no work left."""
    from python_ops.ops.optimize.planning.plan import plan_optimize  # the planner, on the new log

    time.sleep(REPLAN_PAUSE_S[min(attempts, len(REPLAN_PAUSE_S)) - 1])
    latest = read_snapshot(storage)
    again = plan_optimize(
        storage,
        zorder_by=list(plan.zorder_by) or None,
        full=True,
        target_size_bytes=plan.target_size_bytes,
        min_small_files=plan.min_small_files,
        snapshot=latest,
    )
    for p in again.work:
        if p.partition_values == partition.partition_values:
            return again, p, {f.identity: f for f in latest.files}
    return None


def _conflict(partition: PartitionPlan, err: RewriteConflict, attempts: int) -> dict[str, Any]:
    """A partition that still conflicted, as ``failures`` records it."""
    return {
        "partition_values": partition.partition_values,
        "reason": str(err),
        "inputs_still_live": False,
        "attempts": attempts,
    }


def rewrite_natively(
    plan: OptimizePlan,
    *,
    failures: list[dict[str, Any]],
    outcomes: list[Outcome],
    memory_budget_bytes: int = DEFAULT_MEMORY_BUDGET,
) -> list[str]:
    """Rewrite and commit the plan partition by partition; a conflict loses one partition.

    A partition whose commit conflicted is planned again on the latest snapshot (its live
    files now) and retried after a pause, at most ``REPLANS`` times; it fails only when it
    still conflicts, and is skipped when nothing there is worth rewriting any more.

    Each commit's outcome is appended to ``outcomes`` as it is made, so a caller that meets an
    error later still knows what was committed. A partition whose commit conflicts (a
    concurrent commit removed one of its inputs, or changed the metadata) is not committed:
    the files it wrote are deleted, it is recorded in ``failures``, and the next partition is
    rewritten (its inputs are its own: a conflict in one partition says nothing of another).

    Returns:
        Files written and not committed that could not be deleted (named, for VACUUM).
    """
    storage = open_storage(plan.location)
    snapshot = plan.snapshot
    if snapshot is None or snapshot.version != plan.version:
        snapshot = read_snapshot(storage, version=plan.version)
    check_protocol(
        snapshot.protocol,
        Op.ZORDER if plan.zorder_by else Op.COMPACTION,
        location=plan.location,
        writer=Writer.DELTA_RS,
    )
    require_atomic_commits(storage)
    files = {f.identity: f for f in snapshot.files}
    if plan.zorder_by:
        check_supported(snapshot.metadata.configuration, list(snapshot.files))
    # the files' names: physical under column mapping (name mode), the table's otherwise
    columns = snapshot.metadata.physical(indexed_columns(snapshot))
    zorder = snapshot.metadata.physical(plan.zorder_by or ())
    memory = memory_budget_bytes
    stamp = in_commit_timestamps(snapshot)  # from the snapshot read here, plan's or not
    untracked: list[str] = []
    for partition in plan.work:
        current, attempts = (plan, partition, files), 0
        while True:
            attempts += 1
            try:
                outcomes.append(
                    _commit_partition(
                        storage, current, outcomes, (columns, zorder), memory, stamp=stamp
                    )
                )
                break
            except RewriteConflict as err:
                untracked += err.untracked
                if attempts > REPLANS:  # retried enough: this partition failed
                    failures.append(_conflict(partition, err, attempts))
                    break
                again = _replanned(storage, plan, partition, attempts)
                if again is None:  # the concurrent writer left nothing worth rewriting there
                    break
                current = again
    return untracked
