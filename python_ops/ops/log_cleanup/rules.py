"""Expired log cleanup's rules, as Delta's ``MetadataCleanup`` applies them: pure functions.

docs/spec.md section 2: the cutoff is ``now - retention`` truncated to midnight UTC;
nothing is deleted without ``_last_checkpoint``; candidates are commits, checksums and
checkpoints of versions below the ``_last_checkpoint`` version; files are visited in version
order with monotonic timestamps (a later version's file that is not newer than the previous file
counts as previous + 1 ms); everything strictly before the newest complete checkpoint whose
predecessors have all expired goes, that checkpoint and everything after it stays.

Nothing here writes or deletes; the due checks import these rules without the op's writers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from python_ops.delta.log.commits import commit_actions
from python_ops.delta.log.log_files import LOG_DIR, LogFile, LogFileKind, complete_checkpoints
from python_ops.delta.table.properties import (
    CHECKPOINT_PROTECTION_VERSION,
    IN_COMMIT_TIMESTAMP_VERSION,
    IN_COMMIT_TIMESTAMPS,
    LOG_RETENTION,
    Retention,
    resolve_retention,
)
from python_ops.errors import ConfigError, DeltaLogError
from python_ops.storage import Storage
from python_ops.values import MAX_DAYS, checked_number

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


def checkpoint_protection(configuration: dict[str, str]) -> int:
    """The version ``checkpointProtection`` protects below (0: none).

    Raises:
        ConfigError: When the table property is not a version number.
    """
    raw = configuration.get(CHECKPOINT_PROTECTION_VERSION, "0")
    try:
        return int(raw)
    except ValueError as err:
        raise ConfigError(
            setting=CHECKPOINT_PROTECTION_VERSION,
            value=raw,
            fix="The table property must be a version number; fix it with Delta.",
        ) from err


def planned_checkpoint(version: int, now_ms: int) -> LogFile:
    """The checkpoint a real run writes at ``version`` first, as a dry run plans with it."""
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


def expired_commits(files: list[LogFile], cutoff_ms: int) -> list[int]:
    """Versions of the commits at or before the cutoff (by Delta's adjusted times)."""
    commits = sorted((f for f in files if f.kind is LogFileKind.COMMIT), key=lambda f: f.name)
    times = monotonic_times(commits)
    return [f.version or 0 for f, t in zip(commits, times, strict=True) if t <= cutoff_ms]


def nothing_expired_reason(cutoff_ms: int, retention_days: float) -> str:
    """Why nothing expired: every commit is younger than the midnight-UTC cutoff."""
    day = datetime.fromtimestamp(cutoff_ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M")
    return (
        f"nothing expired: every commit is younger than the cutoff {day} UTC (the "
        f"{retention_days:g}-day retention counted back from now, then to midnight UTC, as "
        "Delta does)"
    )


def needs_checkpoint(files: list[LogFile], last_checkpoint: int | None, cutoff_ms: int) -> bool:
    """True when expired commits lie after the newest complete checkpoint, or it has none."""
    expired = expired_commits(files, cutoff_ms)
    if not expired:
        return False
    checkpoints = complete_checkpoints(files)
    newest = max(checkpoints, default=None)
    return newest is None or newest < max(expired) or last_checkpoint is None


def oldest_readable(files: list[LogFile]) -> int | None:
    """The oldest version the log can still be read at (0, else its oldest checkpoint)."""
    versions = {f.version for f in files if f.kind is LogFileKind.COMMIT and f.version is not None}
    if 0 in versions:
        return 0
    checkpoints = complete_checkpoints(files)
    return min(checkpoints) if checkpoints else min(versions, default=None)
