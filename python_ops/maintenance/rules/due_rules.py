"""When each op is due, from the table's snapshot: the rules ``due.decide`` applies.

One function per op, ``(target, snapshot, now_ms) -> (due, why)``, registered with the op in
``registry.REGISTRY``. They read the log (and, for VACUUM, at most a cost-bounded listing:
``reclaim``); none of them writes.
"""

from __future__ import annotations

from python_ops.delta.log.commits import commit_actions
from python_ops.delta.log.log_files import LogFileKind
from python_ops.delta.state.deletes import deleted_rows
from python_ops.delta.state.file_paths import FilePaths
from python_ops.delta.state.snapshot import Snapshot, read_snapshot
from python_ops.delta.table.features import Writer
from python_ops.errors import MaintenanceError
from python_ops.invocation import Invocation
from python_ops.maintenance.configuration.op_keys import as_model_setting
from python_ops.maintenance.configuration.policy import (
    describe_changes,
    effective_snapshot,
    stale_policy,
)
from python_ops.maintenance.facts.layout import last_replacement
from python_ops.maintenance.records.history import HistoryStore
from python_ops.maintenance.rules.reclaim import VacuumDue, vacuum_due
from python_ops.maintenance.selection.targets import ModelTarget
from python_ops.ops.log_cleanup import expiry_cutoff_ms, resolve_log_retention
from python_ops.ops.log_cleanup.rules import expired_commits, nothing_expired_reason
from python_ops.ops.optimize.planning.plan import ENGINE_DEFAULT_TARGET_BYTES, plan_optimize
from python_ops.ops.optimize.writers.clustering import clustering_state, is_clustered
from python_ops.storage import open_storage


def vacuum_decision(
    target: ModelTarget,
    snapshot: Snapshot | FilePaths,
    now_ms: int,
    *,
    invocation: Invocation | None = None,
    history: HistoryStore | None = None,
    trust_bound: bool = False,
    empty_at_ms: int | None = None,
) -> VacuumDue:
    """VACUUM: removed or untracked files older than the retention (``reclaim``, cost-bounded).

    Decided on a snapshot, or on the log's paths (``read_file_paths``) alike; with the listing
    a dry run made as its evidence, for the run it decides. ``invocation``: the command it runs
    in (its warnings once per command); ``history``: where a listing's bound is kept;
    ``trust_bound``: skip the listing while it holds; ``empty_at_ms``: when the table's
    location was empty, a bound without a listing (``reclaim.vacuum_due``).
    """
    with as_model_setting(target.config.model, "vacuum"):
        return vacuum_due(
            target,
            snapshot,
            now_ms,
            invocation=invocation,
            history=history,
            trust_bound=trust_bound,
            empty_at_ms=empty_at_ms,
        )


def vacuum_is_due(
    target: ModelTarget, snapshot: Snapshot | FilePaths, now_ms: int
) -> tuple[bool, str]:
    """VACUUM's rule as the registry's (due, why); ``due.decide`` keeps its evidence too."""
    decision = vacuum_decision(target, snapshot, now_ms)
    return decision.due, decision.why


def _clustering_due(target: ModelTarget, snapshot: Snapshot) -> tuple[bool, str]:
    """A clustered table: due after a clustering-column change, or when enough was written.

    Enough: ``maintenance_min_small_files`` files, or the target file size in bytes, written
    since the last clustering (files without ``clusteringProvider`` in the log).
    """
    c = target.config
    state = clustering_state(open_storage(target.location), snapshot)
    if state.full:
        return True, (
            f"clustering: the clustering columns changed at version {state.columns_changed_at}; "
            "OPTIMIZE FULL re-clusters every file, once"
        )
    threshold = c.target_file_size_bytes or ENGINE_DEFAULT_TARGET_BYTES
    if state.unclustered_files >= c.min_small_files or (
        state.unclustered_files and state.unclustered_bytes >= threshold
    ):
        return True, (
            f"clustering: {state.unclustered_files} file(s), {state.unclustered_bytes} bytes "
            "written since the last clustering"
        )
    return False, (
        f"clustering: {state.unclustered_files} file(s) written since the last clustering "
        f"(min_small_files={c.min_small_files})"
    )


# A table its build just rewrote whole (a table materialization, a Python model, a full
# refresh) is compacted right away only when the build wrote at least this many files: Delta's
# own auto compaction default (spark.databricks.delta.autoCompact.minNumFiles). Fewer are left
# for the next build, which replaces them all anyway.
REBUILT_MIN_FILES = 50


def _written_whole_by_last_commit(target: ModelTarget, snapshot: Snapshot) -> bool:
    """Whether the snapshot's own commit added every live file (the build replaced the table).

    A commit whose files are all ``dataChange: false`` (OPTIMIZE, REORG: the same rows
    rewritten) is no build, even when it left every live file.
    """
    if not snapshot.files:
        return False
    try:
        actions = commit_actions(open_storage(target.location), snapshot.version)
    except (MaintenanceError, OSError):  # the commit is gone (cleaned up): not known
        return False
    adds = [a["add"] for a in actions if isinstance(a.get("add"), dict)]
    if adds and all(add.get("dataChange") is False for add in adds):
        return False  # a rewrite of the same rows (OPTIMIZE, REORG, ...): no build wrote it
    added = {add.get("path") for add in adds}
    # a file re-added with a deletion vector (DELETE, UPDATE) is removed in the same commit:
    # its data was not rewritten
    added -= {a["remove"].get("path") for a in actions if isinstance(a.get("remove"), dict)}
    return all(f.path in added for f in snapshot.files)


def rebuilt_layout(target: ModelTarget, snapshot: Snapshot) -> str | None:
    """Why a Z-ordered model is re-clustered now, whatever its interval; None: it is not.

    A write replaced every live file since the table's last rewrite (``last_replacement``: a
    ``table`` model's build, a full refresh), so the Z-order (or liquid clustering: Delta 4.4
    writes a ``CLUSTER BY`` CTAS's files unclustered) the model asks for went with the files an
    earlier OPTIMIZE wrote. A table of one file, or without Z-order or clustering columns (none
    asked for, or ``auto`` chose none), is not.

    Args:
        target: The model, ``auto`` already resolved to its columns.
        snapshot: Its table's latest snapshot.

    Returns:
        The reason in words, or None.
    """
    columns = target.config.zorder_by or target.config.cluster_by
    if not columns or len(snapshot.files) < 2:
        return None
    live = [f.path for f in snapshot.files]
    found = last_replacement(open_storage(target.location), snapshot.version, live)
    if found is None:
        return None
    how = f" ({found.operation})" if found.operation else ""
    return (
        f"rebuilt: version {found.version}{how} replaced all {len(live)} file(s), and with "
        f"them the clustering on {', '.join(columns)}; re-clustered now, whatever "
        "maintenance_optimize_interval_hours"
    )


def optimize_is_due(target: ModelTarget, snapshot: Snapshot, now_ms: int) -> tuple[bool, str]:
    """OPTIMIZE: the plan has work (clustered: ``_clustering_due``; just rebuilt: 50 files).

    A Z-ordered model its build replaced whole says so (``rebuilt_layout``).
    """
    c = target.config
    choice = c.auto_choice
    if choice is not None and choice.changed:
        was = ", ".join(choice.previous) if choice.previous else "none recorded"
        return True, (
            f"auto: the advisor chose {', '.join(choice.columns)} (last: {was}); every "
            "partition is re-clustered once"
        )
    if is_clustered(snapshot):
        due, why = _clustering_due(target, snapshot)
        replaced = None if due else rebuilt_layout(target, snapshot)
        return (True, f"{replaced}; {why}") if replaced else (due, why)
    rebuilt = not c.zorder_by and _written_whole_by_last_commit(target, snapshot)
    if rebuilt and len(snapshot.files) < REBUILT_MIN_FILES:
        return False, (
            f"just rebuilt: version {snapshot.version} wrote all {len(snapshot.files)} file(s) "
            f"of the table; compaction waits for {REBUILT_MIN_FILES} (as Delta's auto "
            "compaction), since the next full build replaces them"
        )
    with as_model_setting(target.config.model, "optimize"):
        plan = plan_optimize(
            target.location,
            snapshot=snapshot,
            # due = worth rewriting; the gate of the writer that runs (delta-rs or Delta's
            # SQL on the engine) is asked when the op runs
            writer=Writer.DELTA,
            zorder_by=list(c.zorder_by),
            target_size_bytes=c.target_file_size_bytes,
            min_small_files=c.min_small_files,
            where=target.build_scope,  # after a build: the partitions it wrote, only
        )
    where = " of the partitions this build wrote" if target.build_scope else ""
    work = plan.work  # a partition's only file is not Z-ordered (``plan_optimize``)
    if work:
        kind = "Z-order" if plan.zorder_by else "compaction"
        files = sum(len(b.files) for p in work for b in p.bins)
        why = f"{kind}: {files} file(s) in {len(work)} partition(s){where} worth rewriting"
        replaced = rebuilt_layout(target, snapshot) if plan.zorder_by else None
        return True, f"{replaced}; {why}" if replaced else why
    return False, f"nothing{where} worth rewriting (min_small_files={c.min_small_files})"


def cleanup_logs_is_due(target: ModelTarget, snapshot: Snapshot, now_ms: int) -> tuple[bool, str]:
    """Log cleanup: expired commits before a checkpoint, or a recorded policy to follow."""
    with as_model_setting(target.config.model, "cleanup_logs"):
        changes = stale_policy(snapshot, target.config)
        retention = resolve_log_retention(
            effective_snapshot(snapshot).metadata.configuration, target.config.log_retention_days
        )
    if changes:  # log cleanup records the policy: the package's properties follow the config
        return (
            True,
            f"recorded retention to follow the config: {describe_changes(snapshot, changes)}",
        )
    cutoff = expiry_cutoff_ms(now_ms, retention)
    if snapshot.checkpoint_version is None:
        # the same reason the op gives: the commits' age first, then the missing checkpoint
        old = expired_commits(list(snapshot.log_files), cutoff)
        if not old:
            return False, nothing_expired_reason(cutoff, retention.days)
        return False, (
            f"{len(old)} commit(s) older than the cutoff, but no checkpoint yet: Delta deletes "
            "nothing without one (cleanup_logs_all writes one first)"
        )
    expired = sum(
        1
        for f in snapshot.log_files
        if f.kind is LogFileKind.COMMIT
        and f.version is not None
        and f.version < snapshot.checkpoint_version
        and f.modification_time_ms <= cutoff
    )
    days = f"{retention.days:g} days"
    if expired:
        return True, f"{expired} commit file(s) older than {days} before a checkpoint"
    return False, f"no commit file older than {days} before a checkpoint"


def purge_is_due(target: ModelTarget, snapshot: Snapshot, now_ms: int) -> tuple[bool, str]:
    """Purge: a partition's deleted-row share above ``maintenance_purge_deleted_ratio``."""
    if not any(f.deletion_vector for f in snapshot.files):
        return False, "no deletion vectors"
    if not any(f.stats for f in snapshot.files):
        snapshot = read_snapshot(target.location, version=snapshot.version, with_stats=True)
    ratio = target.config.purge_deleted_ratio
    partitions = deleted_rows(snapshot)
    due = [p for p in partitions if p.deleted_rows and p.deleted_share > ratio]
    if due:
        worst = max(p.deleted_share for p in due)
        return True, (
            f"{len(due)} partition(s) with more than {ratio:g} of their rows deleted (up to "
            f"{worst:.1%}); about {sum(p.reclaimable_bytes for p in due)} bytes to reclaim"
        )
    worst = max((p.deleted_share for p in partitions), default=0.0)
    return False, f"deleted rows at most {worst:.1%} of a partition (threshold {ratio:g})"


def stats_is_due(target: ModelTarget, snapshot: Snapshot, now_ms: int) -> tuple[bool, str]:
    """Statistics upkeep: live files lack statistics for a watched column (``ops.stats``)."""
    from python_ops.delta.writing.log_commit import refuse_without_atomic_commits
    from python_ops.ops.stats.plan import plan_stats

    refuse_without_atomic_commits(open_storage(target.location))  # refused where the op is
    columns = target.config.stats_watched_columns
    with as_model_setting(target.config.model, "stats"):
        plan = plan_stats(target.location, columns=columns, snapshot=snapshot)
    if plan.files_due:
        return True, (
            f"{len(plan.files_due)} of {len(plan.snapshot.files)} file(s) lack statistics for "
            f"the watched columns ({plan.files_without_stats} have none)"
        )
    if plan.stats_columns_after is not None:
        return True, f"delta.dataSkippingStatsColumns to cover {', '.join(plan.watched)}"
    return False, f"every file has statistics for its {len(plan.fields)} statistics column(s)"
