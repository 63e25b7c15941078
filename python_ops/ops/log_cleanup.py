"""Expired log cleanup, as Delta's ``MetadataCleanup`` does it, on demand.

docs/spec.md section 2: the cutoff is ``now - retention`` truncated to midnight UTC;
nothing is deleted without ``_last_checkpoint``; candidates are commits, checksums and
checkpoints of versions below the ``_last_checkpoint`` version; files are visited in version
order with monotonic timestamps (a later version's file that is not newer than the previous file
counts as previous + 1 ms); everything strictly before the newest complete checkpoint whose
predecessors have all expired goes, that checkpoint and everything after it stays. Sidecars of
v2 checkpoints that no remaining checkpoint references and that are older than the cutoff go too.

Project rules: the op runs on demand; when expired commits lie after the newest checkpoint (or
there is none) it first asks the Delta writer for a checkpoint; a model's retention policy is
recorded as table properties so every engine obeys it; files are deleted oldest first, so a run
killed mid-way leaves every kept version readable and a rerun finishes the job.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from python_ops.delta.checkpoint_reader import checkpoint_sidecars, last_checkpoint_version
from python_ops.delta.commits import commit_actions, list_log
from python_ops.delta.log_files import (
    LAST_CHECKPOINT,
    LOG_DIR,
    SIDECAR_DIR,
    LogFile,
    LogFileKind,
    complete_checkpoints,
    stale_staged_files,
)
from python_ops.delta.properties import (
    CHECKPOINT_PROTECTION_VERSION,
    ENABLE_EXPIRED_LOG_CLEANUP,
    IN_COMMIT_TIMESTAMP_VERSION,
    IN_COMMIT_TIMESTAMPS,
    LOG_RETENTION,
    Retention,
    resolve_retention,
)
from python_ops.delta.protocol import IN_COMMIT_TIMESTAMP_FEATURES, Op, Writer, check_protocol
from python_ops.delta.snapshot import (
    Snapshot,
    read_snapshot,
)
from python_ops.delta.writer import (
    set_table_properties,
    write_checkpoint,
)
from python_ops.errors import ConfigError, DeltaLogError, UnsupportedFeatureError
from python_ops.ops.audit import Audit, as_audit
from python_ops.ops.results import LogCleanupResult, LogFileToDelete
from python_ops.storage import Storage, open_storage
from python_ops.values import MAX_DAYS, checked_number

log = logging.getLogger(__name__)

_DAY_MS = 86_400_000
_CANDIDATE_KINDS = (LogFileKind.COMMIT, LogFileKind.CHECKSUM, LogFileKind.CHECKPOINT)


def expiry_cutoff_ms(now_ms: int, retention: Retention) -> int:
    """``now - retention`` truncated down to midnight UTC, as Delta computes it."""
    raw = retention.cutoff_ms(now_ms)
    return raw - raw % _DAY_MS


def monotonic_times(files: list[LogFile]) -> list[int]:
    """Modification times adjusted as Delta's ``BufferingLogDeletionIterator`` does.

    Args:
        files: Candidate files sorted by name (so by version).

    Returns:
        One adjusted time per file: a file of a later version whose time is not after the
        previous file's (adjusted) time counts as that time + 1 ms.
    """
    out: list[int] = []
    previous: LogFile | None = None
    for f in files:
        t = f.modification_time_ms
        if previous is not None and (previous.version or 0) < (f.version or 0) and t <= out[-1]:
            t = out[-1] + 1
        out.append(t)
        previous = f
    return out


def select_expired(
    files: list[LogFile], *, cutoff_ms: int, last_checkpoint: int
) -> tuple[int | None, list[LogFile]]:
    """Choose the checkpoint to keep and the files before it.

    Args:
        files: Every file of ``_delta_log`` (classified).
        cutoff_ms: The expiry cutoff.
        last_checkpoint: The version in ``_last_checkpoint``.

    Returns:
        (kept checkpoint version or None, candidate files strictly before it).
    """
    candidates = sorted((f for f in files if f.kind in _CANDIDATE_KINDS), key=lambda f: f.name)
    times = monotonic_times(candidates)
    complete = sorted(v for v in complete_checkpoints(files) if v <= last_checkpoint)
    kept: int | None = None
    newest_before: dict[int, int] = {}
    running = -1
    position = 0
    for version in complete:
        while position < len(candidates) and (candidates[position].version or 0) < version:
            running = max(running, times[position])
            position += 1
        newest_before[version] = running
    for version in reversed(complete):
        if newest_before[version] <= cutoff_ms:
            kept = version
            break
    if kept is None:
        return None, []
    return kept, [f for f in candidates if (f.version or 0) < kept]


def resolve_log_retention(
    configuration: Mapping[str, str], retention_days: float | None
) -> Retention:
    """The log retention: requested, else ``delta.logRetentionDuration``, else 30 days.

    Returns:
        The retention and its source.

    Raises:
        ConfigError: For a negative retention or an unparsable table property.
    """
    requested = None
    if retention_days is not None:
        days = checked_number(retention_days, setting="retention_days", maximum=MAX_DAYS)
        requested = timedelta(days=days)
    return resolve_retention(configuration, LOG_RETENTION, requested=requested)


def cleanup_logs(
    table: str | Storage,
    *,
    retention_days: float | None = None,
    dry_run: bool = True,
    checkpoint_if_needed: bool = True,
    force: bool = False,
    record_policy: dict[str, str] | None = None,
    now_ms: int | None = None,
    on_progress: Callable[[int, int], None] | None = None,
    snapshot: Snapshot | None = None,
    audit: Audit | bool = True,
) -> LogCleanupResult:
    """Delete expired ``_delta_log`` files (by default only report them).

    Args:
        table: Table location or an open ``Storage``.
        retention_days: Log retention; None uses ``delta.logRetentionDuration`` (default 30).
        dry_run: Report only (the default); pass False to delete.
        checkpoint_if_needed: Write a checkpoint first when expired commits lie after the
            newest checkpoint or ``_last_checkpoint`` is missing (not in dry runs).
        force: Clean even when the table sets ``delta.enableExpiredLogCleanup=false``.
        record_policy: Table properties to record first (from ``policy_properties``).
        now_ms: The current time in ms (None = now).
        on_progress: Called with (files done, files total) after each deletion.
        snapshot: The table's latest snapshot if the caller has just read it (its log listing
            is used too); None reads it.
        audit: Whether the run is audited, and the caller's labels (``ops.audit.Audit``).

    Returns:
        What was selected and deleted.

    Raises:
        ConfigError: For a bad retention or retention property.
        TableNotFoundError: When there is no Delta table at the location.
        WriterError: When recording the policy fails.
    """
    storage = table if isinstance(table, Storage) else open_storage(table)
    started = time.perf_counter()
    try:
        result = _cleanup(
            storage,
            retention_days=retention_days,
            dry_run=dry_run,
            checkpoint_if_needed=checkpoint_if_needed,
            force=force,
            record_policy=record_policy or {},
            now_ms=int(time.time() * 1000) if now_ms is None else now_ms,
            on_progress=on_progress,
            started=started,
            snapshot=snapshot,
        )
    except Exception as err:
        as_audit(audit).record(
            "cleanup_logs",
            storage.root,
            "failed",
            {"dry_run": dry_run, "retention_days": retention_days, "error": str(err)},
        )
        raise
    as_audit(audit).record(
        "cleanup_logs", storage.root, "succeeded", result.to_dict(include_files=False)
    )
    return result


def _cleanup(
    storage: Storage,
    *,
    retention_days: float | None,
    dry_run: bool,
    checkpoint_if_needed: bool,
    force: bool,
    record_policy: dict[str, str],
    now_ms: int,
    on_progress: Callable[[int, int], None] | None,
    started: float,
    snapshot: Snapshot | None,
) -> LogCleanupResult:
    recorded: dict[str, str] = {}
    if snapshot is None:
        snapshot = read_snapshot(storage)
    ruled = check_protocol(snapshot.protocol, Op.CLEANUP_LOGS, location=storage.root)
    if record_policy and not dry_run:
        try:
            check_protocol(snapshot.protocol, Op.PROPERTIES, location=storage.root)
        except UnsupportedFeatureError as err:
            log.warning("cleanup_logs %s: retention policy not recorded: %s", storage.root, err)
        else:
            if set_table_properties(storage.root, record_policy):
                recorded = dict(record_policy)
                snapshot = read_snapshot(storage)
    configuration = snapshot.metadata.configuration
    retention = resolve_log_retention(configuration, retention_days)
    cutoff = expiry_cutoff_ms(now_ms, retention)

    def result(**kw: object) -> LogCleanupResult:
        base: dict[str, object] = {
            "location": storage.root,
            "table_version": snapshot.version,
            "dry_run": dry_run,
            "skipped_reason": None,
            "retention_days": retention.days,
            "retention_source": retention.source,
            "cutoff_ms": cutoff,
            "last_checkpoint_version": None,
            "checkpoint_first": None,
            "checkpoint_not_written": None,
            "checkpoint_kept": None,
            "oldest_version_kept": None,
            "files_found": 0,
            "bytes_found": 0,
            "files_deleted": 0,
            "bytes_deleted": 0,
            "delete_failures": 0,
            "properties_recorded": recorded,
            "checkpoint_writer": None,
            "duration_s": time.perf_counter() - started,
            "files": (),
        }
        base.update(kw)
        return LogCleanupResult(**base)  # type: ignore[arg-type]

    if configuration.get(ENABLE_EXPIRED_LOG_CLEANUP, "true").lower() == "false" and not force:
        return result(
            skipped_reason=f"the table sets {ENABLE_EXPIRED_LOG_CLEANUP}=false; pass force to "
            "clean it anyway"
        )
    files = list(snapshot.log_files)  # listed with the snapshot (again after our own commit)
    if any(name in ruled for name in IN_COMMIT_TIMESTAMP_FEATURES):
        files = commit_timestamps(storage, files, configuration)
    last = last_checkpoint_version(storage)
    first: int | None = None
    note: str | None = None
    checkpointer: Writer | None = None
    if checkpoint_if_needed and _needs_checkpoint(files, last, cutoff):
        # imported here: the writers' machinery is for a run that checkpoints, not for the
        # commands that import this module for its rules only (VACUUM's due check)
        from python_ops.delta.local_writer import writer as local_delta_writer
        from python_ops.ops.writer_choice import checkpoint_writer

        checkpointer, note = checkpoint_writer(snapshot, storage.root)
        if note is None and dry_run:
            # Plan as if the checkpoint the real run writes at the head version existed.
            first = last = snapshot.version
            files.append(_planned_checkpoint(snapshot.version, now_ms))
        elif note is None:
            if checkpointer is Writer.DELTA:
                first = last = local_delta_writer().checkpoint(storage.root)
            else:
                first = last = write_checkpoint(storage.root)
            log.info(
                "cleanup_logs %s: %s wrote a checkpoint at version %d first",
                storage.root,
                checkpointer,
                first,
            )
            files = list_log(storage)
    if last is None and not _expired_commits(files, cutoff):
        return result(  # no checkpoint was needed: the cause is the age of the commits
            skipped_reason=_nothing_expired_reason(cutoff, retention.days),
            oldest_version_kept=_oldest_readable(files),
        )
    if last is None:
        reason = f"no {LAST_CHECKPOINT}: Delta deletes nothing without it"
        return result(
            skipped_reason=f"{reason} ({note})" if note else reason,
            oldest_version_kept=_oldest_readable(files),
        )
    kept, expired = select_expired(files, cutoff_ms=cutoff, last_checkpoint=last)
    protected_below = (
        _checkpoint_protection(configuration) if "checkpointProtection" in ruled else 0
    )
    if any((f.version or 0) < protected_below for f in expired):
        return result(
            skipped_reason="checkpointProtection: "
            f"{CHECKPOINT_PROTECTION_VERSION}={protected_below} protects the commits and "
            "checkpoints below it; Delta truncates that history itself",
            last_checkpoint_version=last,
            oldest_version_kept=_oldest_readable(files),
        )
    selected = [LogFileToDelete(f.path, f.version, f.kind.value, f.size_bytes) for f in expired]
    if kept is not None:
        selected += _orphan_sidecars(storage, files, expired, cutoff)
    deleted, deleted_bytes, not_deleted = 0, 0, tuple[str, ...]()
    if not dry_run:
        deleted, deleted_bytes, not_deleted = _delete(storage, selected, on_progress)
        remove_stale_staged(storage, latest_version=snapshot.version, now_ms=now_ms)
    gone = {f.name for f in expired}
    remaining = [f for f in files if f.name not in gone]
    return result(
        last_checkpoint_version=last,
        checkpoint_first=first,
        checkpoint_writer=None if first is None or checkpointer is None else str(checkpointer),
        checkpoint_not_written=note,
        checkpoint_kept=kept,
        oldest_version_kept=kept if kept is not None and expired else _oldest_readable(remaining),
        files_found=len(selected),
        bytes_found=sum(f.size_bytes for f in selected),
        files_deleted=deleted,
        bytes_deleted=deleted_bytes,
        delete_failures=len(not_deleted),
        files=tuple(selected),
        paths_not_deleted=not_deleted,
    )


def remove_stale_staged(storage: Storage, *, latest_version: int, now_ms: int) -> list[str]:
    """Delete staged uploads that killed writers left in ``_delta_log`` (see ``log_files``).

    Args:
        storage: The table's storage.
        latest_version: The newest committed version.
        now_ms: The current time in ms.

    Returns:
        The paths deleted.
    """
    stale = stale_staged_files(list_log(storage), latest_version=latest_version, now_ms=now_ms)
    removed = [f.path for f in stale if storage.delete_log_file(f.path)]
    if removed:
        log.info("%s: removed %d staged file(s) of killed writers", storage.root, len(removed))
    return removed


def _checkpoint_protection(configuration: dict[str, str]) -> int:
    raw = configuration.get(CHECKPOINT_PROTECTION_VERSION, "0")
    try:
        return int(raw)
    except ValueError as err:
        raise ConfigError(
            setting=CHECKPOINT_PROTECTION_VERSION,
            value=raw,
            fix="The table property must be a version number; fix it with Delta.",
        ) from err


def commit_timestamps(
    storage: Storage, files: list[LogFile], configuration: dict[str, str]
) -> list[LogFile]:
    """Log files timed by their commit's ``inCommitTimestamp`` where the table has them.

    With in-commit timestamps enabled, the protocol makes a commit's own timestamp its time
    (file times may be changed by copies and restores); every file of a version from the
    enablement version on takes that version's timestamp.

    Args:
        storage: The table's storage.
        files: Classified ``_delta_log`` files.
        configuration: The table properties.

    Returns:
        The files, with modification times replaced where the table has in-commit timestamps.

    Raises:
        DeltaLogError: When a commit that must carry an ``inCommitTimestamp`` does not.
    """
    # Delta 3.1-3.2 named the properties with a "-preview" suffix.
    suffix = next(
        (
            sfx
            for sfx in ("", "-preview")
            if configuration.get(IN_COMMIT_TIMESTAMPS + sfx, "false").lower() == "true"
        ),
        None,
    )
    if suffix is None:
        return files
    version_property = IN_COMMIT_TIMESTAMP_VERSION + suffix
    try:
        since = int(configuration.get(version_property, "0"))
    except ValueError as err:
        raise DeltaLogError(f"{storage.root}: {version_property} is not a version number") from err
    commits = {f.version for f in files if f.kind is LogFileKind.COMMIT}
    stamps: dict[int, int] = {}
    out = []
    for f in files:
        v = f.version
        if v is None or v < since or f.kind not in _CANDIDATE_KINDS or v not in commits:
            out.append(f)
            continue
        if v not in stamps:
            info: dict[str, Any] = next(
                (a["commitInfo"] for a in commit_actions(storage, v) if "commitInfo" in a), {}
            )
            stamp = info.get("inCommitTimestamp")
            if isinstance(stamp, bool) or not isinstance(stamp, int):
                raise DeltaLogError(
                    f"{storage.root}/{LOG_DIR}/{v:020d}.json: the table has in-commit timestamps "
                    f"from version {since}, but this commit carries none"
                )
            stamps[v] = stamp
        out.append(replace(f, modification_time_ms=stamps[v]))
    return out


def _planned_checkpoint(version: int, now_ms: int) -> LogFile:
    return LogFile(
        f"{version:020d}.checkpoint.parquet",
        LogFileKind.CHECKPOINT,
        version,
        0,
        now_ms,
        1,
        1,
        "classic",
    )


def _expired_commits(files: list[LogFile], cutoff_ms: int) -> list[int]:
    """Versions of the commits at or before the cutoff (by Delta's adjusted times)."""
    commits = sorted((f for f in files if f.kind is LogFileKind.COMMIT), key=lambda f: f.name)
    times = monotonic_times(commits)
    return [f.version or 0 for f, t in zip(commits, times, strict=True) if t <= cutoff_ms]


def _nothing_expired_reason(cutoff_ms: int, retention_days: float) -> str:
    day = datetime.fromtimestamp(cutoff_ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M")
    return (
        f"nothing expired: every commit is younger than the cutoff {day} UTC (the "
        f"{retention_days:g}-day retention counted back from now, then to midnight UTC, as "
        "Delta does)"
    )


def _needs_checkpoint(files: list[LogFile], last_checkpoint: int | None, cutoff_ms: int) -> bool:
    """True when expired commits lie after the newest complete checkpoint, or it has none."""
    expired = _expired_commits(files, cutoff_ms)
    if not expired:
        return False
    checkpoints = complete_checkpoints(files)
    newest = max(checkpoints, default=None)
    return newest is None or newest < max(expired) or last_checkpoint is None


def _oldest_readable(files: list[LogFile]) -> int | None:
    versions = {f.version for f in files if f.kind is LogFileKind.COMMIT and f.version is not None}
    if 0 in versions:
        return 0
    checkpoints = complete_checkpoints(files)
    return min(checkpoints) if checkpoints else min(versions, default=None)


def _orphan_sidecars(
    storage: Storage, files: list[LogFile], expired: list[LogFile], cutoff_ms: int
) -> list[LogFileToDelete]:
    """Sidecars older than the cutoff that no remaining checkpoint references.

    Hidden files in ``_sidecars`` (a Hadoop ``.<name>.crc`` checksum beside each sidecar) are
    not sidecars: no checkpoint names them, and Delta leaves them alone.
    """
    sidecars = [
        e
        for e in storage.list_dir(SIDECAR_DIR)
        if not e.is_dir and not e.name.startswith((".", "_"))
    ]
    if not sidecars:
        return []
    gone = {f.name for f in expired}
    referenced: set[str] = set()
    for f in files:
        if f.kind is LogFileKind.CHECKPOINT and f.name not in gone:
            referenced.update(checkpoint_sidecars(storage, f))
    return [
        LogFileToDelete(e.path, None, "sidecar", e.size_bytes)
        for e in sorted(sidecars, key=lambda e: e.path)
        if e.name not in referenced and e.modification_time_ms <= cutoff_ms
    ]


def _delete(
    storage: Storage,
    selected: list[LogFileToDelete],
    on_progress: Callable[[int, int], None] | None,
) -> tuple[int, int, tuple[str, ...]]:
    """Delete oldest versions first; sidecars last (after the checkpoints that used them).

    After the first file that could not be deleted nothing newer is: the log keeps no gap (a
    kept version whose successor is gone), as when a run is killed mid-way.

    Returns:
        Files deleted, their bytes, and the paths not deleted (the failed one and every later).
    """
    ordered = sorted(selected, key=lambda f: (f.version is None, f.version or 0, f.path))
    deleted = deleted_bytes = 0
    failed: list[str] = []
    for done, f in enumerate(ordered, start=1):
        if not failed and storage.delete_log_file(f.path):
            deleted += 1
            deleted_bytes += f.size_bytes
        else:
            failed.append(f.path)
        if on_progress is not None:
            on_progress(done, len(ordered))
    return deleted, deleted_bytes, tuple(failed)
