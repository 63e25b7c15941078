"""A log cleanup plan: what the log holds, its cutoff, and whether a checkpoint comes first.

``plan_cleanup`` only reads (the snapshot, ``_last_checkpoint``, commit timestamps);
``select_files`` is the selection, run on the plan's listing or, after a checkpoint was
written, on the new one.
"""

from __future__ import annotations

from dataclasses import dataclass

from python_ops.delta.log.log_files import LAST_CHECKPOINT, LogFile
from python_ops.delta.state.checkpoint_reader import last_checkpoint_version
from python_ops.delta.state.snapshot import Snapshot
from python_ops.delta.table.features import IN_COMMIT_TIMESTAMP_FEATURES, Op, Writer
from python_ops.delta.table.properties import (
    CHECKPOINT_PROTECTION_VERSION,
    ENABLE_EXPIRED_LOG_CLEANUP,
    Retention,
)
from python_ops.delta.table.protocol import check_protocol
from python_ops.ops.log_cleanup.delete import orphan_sidecars
from python_ops.ops.log_cleanup.options import LogCleanupOptions
from python_ops.ops.log_cleanup.rules import (
    checkpoint_protection,
    commit_timestamps,
    expired_commits,
    expiry_cutoff_ms,
    needs_checkpoint,
    nothing_expired_reason,
    oldest_readable,
    resolve_log_retention,
    select_expired,
)
from python_ops.ops.results import LogFileToDelete
from python_ops.storage import Storage


@dataclass(frozen=True)
class LogCleanupPlan:
    """What a run works from, read before anything is written.

    Attributes:
        storage: The table's storage.
        options: The request.
        snapshot: The table's latest snapshot (its log listing included).
        ruled: Table features whose rule applies to log cleanup.
        retention: The retention used and its source.
        cutoff_ms: Files at or before this (monotonic) time are expired; midnight UTC.
        files: The log's files, timed as the protocol times them (in-commit timestamps).
        last_checkpoint: The version ``_last_checkpoint`` names, if any.
        checkpointer: Who writes the checkpoint needed first (None: none is needed or can be).
        checkpoint_note: Why a needed checkpoint cannot be written, if so.
        skipped_reason: Why the run does nothing at all (cleanup disabled by the table).
    """

    storage: Storage
    options: LogCleanupOptions
    snapshot: Snapshot
    ruled: tuple[str, ...]
    retention: Retention
    cutoff_ms: int
    files: tuple[LogFile, ...]
    last_checkpoint: int | None
    checkpointer: Writer | None
    checkpoint_note: str | None
    skipped_reason: str | None


@dataclass(frozen=True)
class Selection:
    """The files a run deletes, or why it deletes none.

    Attributes:
        selected: Expired log files and orphan sidecars, each with version and kind.
        kept: The checkpoint everything before which was selected (None: none).
        oldest_kept: The oldest version that can still be reconstructed afterwards.
        skipped_reason: Why nothing is selected, if so.
    """

    selected: tuple[LogFileToDelete, ...]
    kept: int | None
    oldest_kept: int | None
    skipped_reason: str | None = None


def plan_cleanup(
    storage: Storage, options: LogCleanupOptions, snapshot: Snapshot
) -> LogCleanupPlan:
    """Read what a log cleanup needs; write nothing.

    Raises:
        UnsupportedFeatureError: For a feature log cleanup refuses.
        ConfigError: For a bad retention or retention property.
        DeltaLogError: When a commit that must carry an ``inCommitTimestamp`` does not.
    """
    ruled = check_protocol(snapshot.protocol, Op.CLEANUP_LOGS, location=storage.root)
    configuration = snapshot.metadata.configuration
    retention = resolve_log_retention(configuration, options.retention_days)
    cutoff = expiry_cutoff_ms(options.now_ms, retention)
    skipped = None
    if configuration.get(ENABLE_EXPIRED_LOG_CLEANUP, "true").lower() == "false" and not (
        options.force
    ):
        skipped = (
            f"the table sets {ENABLE_EXPIRED_LOG_CLEANUP}=false; pass force to clean it anyway"
        )
    files = list(snapshot.log_files)  # listed with the snapshot
    if any(name in ruled for name in IN_COMMIT_TIMESTAMP_FEATURES):
        files = commit_timestamps(storage, files, configuration)
    last = last_checkpoint_version(storage)
    checkpointer: Writer | None = None
    note: str | None = None
    if skipped is None and options.checkpoint_if_needed and needs_checkpoint(files, last, cutoff):
        # imported here: the writers' machinery is for a run that checkpoints, not for the
        # commands that import the rules only (VACUUM's due check)
        from python_ops.ops.writer_choice import checkpoint_writer

        checkpointer, note = checkpoint_writer(snapshot, storage.root)
        checkpointer = checkpointer if note is None else None
    return LogCleanupPlan(
        storage, options, snapshot, ruled, retention, cutoff, tuple(files), last,
        checkpointer, note, skipped,
    )  # fmt: skip


def select_files(plan: LogCleanupPlan, files: list[LogFile], last: int | None) -> Selection:
    """The expired files of ``files`` given the checkpoint ``last`` (Delta's selection).

    Returns:
        What goes, what is kept, or why nothing goes.

    Raises:
        ConfigError: For a bad ``checkpointProtection`` version property.
    """
    cutoff = plan.cutoff_ms
    if last is None and not expired_commits(files, cutoff):
        # no checkpoint was needed: the cause is the age of the commits
        reason = nothing_expired_reason(cutoff, plan.retention.days)
        return Selection((), None, oldest_readable(files), reason)
    if last is None:
        reason = f"no {LAST_CHECKPOINT}: Delta deletes nothing without it"
        note = plan.checkpoint_note
        return Selection((), None, oldest_readable(files), f"{reason} ({note})" if note else reason)
    kept, expired = select_expired(files, cutoff_ms=cutoff, last_checkpoint=last)
    configuration = plan.snapshot.metadata.configuration
    protected = checkpoint_protection(configuration) if "checkpointProtection" in plan.ruled else 0
    if any((f.version or 0) < protected for f in expired):
        reason = (
            f"checkpointProtection: {CHECKPOINT_PROTECTION_VERSION}={protected} protects the "
            "commits and checkpoints below it; Delta truncates that history itself"
        )
        return Selection((), None, oldest_readable(files), reason)
    selected = [LogFileToDelete(f.path, f.version, f.kind.value, f.size_bytes) for f in expired]
    if kept is not None:
        selected += orphan_sidecars(plan.storage, files, expired, cutoff)
    gone = {f.name for f in expired}
    remaining = [f for f in files if f.name not in gone]
    oldest = kept if kept is not None and expired else oldest_readable(remaining)
    return Selection(tuple(selected), kept, oldest)
