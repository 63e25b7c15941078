"""A table's layout at past versions: the numbers the HTML report draws over its builds.

The history says when each build and op ran and which table versions it left; the table's own
Delta log says what those versions held. One pass over the log per table replays its commits
forward (from the newest checkpoint at or before the oldest version asked for), and takes the
live files, small files and bytes at each version asked for. A version the log can no longer
reconstruct (its commits were cleaned up past every checkpoint before it) is left out. A point
the history names no version for (a proof, a skip) takes the newest commit written by a time.

Log files at a version are those of versions up to it still in ``_delta_log`` now; the report
adds back what later log cleanups recorded deleting (``report_series``).
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

from python_ops.delta.log.commits import commit_lines, list_log
from python_ops.delta.log.log_files import LogFile, LogFileKind, complete_checkpoints
from python_ops.delta.state.snapshot import LogReplay, read_snapshot
from python_ops.errors import MaintenanceError
from python_ops.ops.health import DEFAULT_SMALL_FILE_THRESHOLD_BYTES
from python_ops.storage import Storage, open_storage


@dataclass(frozen=True, slots=True)
class TableState:
    """A table's layout at one version.

    Attributes:
        version: The version.
        files: Live data files.
        small_files: Live files under the small-file threshold.
        bytes: Live bytes.
        log_files: Files in ``_delta_log`` now that belong to this version or an earlier one.
    """

    version: int
    files: int
    small_files: int
    bytes: int
    log_files: int


def table_states(
    location: str,
    points: Sequence[tuple[int | None, int]],
    *,
    small_file_threshold_bytes: int = DEFAULT_SMALL_FILE_THRESHOLD_BYTES,
) -> list[TableState | None]:
    """The table's layout at each point: at its version, else as its time found the table.

    Args:
        location: The table's location.
        points: (version, or None when the history names none; then the newest commit
            written at or before this time, ms since the epoch), in any order.
        small_file_threshold_bytes: Files smaller than this count as small (as
            ``table_health``'s default, so the newest point matches the text report).

    Returns:
        One state per point (None: no table then, or a version the log cannot reconstruct).
    """
    try:
        storage = open_storage(location)
        log = list_log(storage)
    except (MaintenanceError, OSError):
        return [None] * len(points)
    commits = {f.version: f for f in log if f.kind is LogFileKind.COMMIT and f.version is not None}
    # the newest commit written by then (a point without a version: a proof, a skip)
    by_time = sorted((f.modification_time_ms, v) for v, f in commits.items())
    stamps = [t for t, _ in by_time]
    versions = [v if v is not None else _newest_by(by_time, stamps, at_ms) for v, at_ms in points]
    states = _replayed(
        storage, sorted({v for v in versions if v is not None}), log, small_file_threshold_bytes
    )
    return [states.get(v) if v is not None else None for v in versions]


def _newest_by(by_time: list[tuple[int, int]], stamps: list[int], at_ms: int) -> int | None:
    """The newest version among the commits written at or before ``at_ms`` (None: none)."""
    upto = bisect.bisect_right(stamps, at_ms)
    return max((v for _, v in by_time[:upto]), default=None)


def _replayed(
    storage: Storage, wanted: list[int], log: list[LogFile], threshold: int
) -> dict[int, TableState]:
    """One forward replay of the log, taking the state at each of ``wanted`` (ascending)."""
    commits = {f.version: f for f in log if f.kind is LogFileKind.COMMIT and f.version is not None}
    checkpoints = sorted(complete_checkpoints(log))
    counted = sorted(f.version for f in log if f.version is not None)
    out: dict[int, TableState] = {}
    replay: LogReplay | None = None
    at = -1
    for version in wanted:
        if replay is None or any(v not in commits for v in range(at + 1, version + 1)):
            replay, at = _start(storage, version, checkpoints, 0 in commits)
            if replay is None:
                continue
        try:
            for v in range(at + 1, version + 1):
                for where, action in commit_lines(storage, commits[v].path):
                    replay.apply(where, action)
        except (MaintenanceError, OSError, KeyError):
            replay, at = None, -1
            continue
        at = version
        out[version] = _state(replay, version, threshold, counted)
    return out


def _start(
    storage: Storage, version: int, checkpoints: list[int], first_commit: bool
) -> tuple[LogReplay | None, int]:
    """A replay at the newest checkpoint at or before ``version``; else before version 0.

    Args:
        storage: The table's storage.
        version: The version the replay is to reach.
        checkpoints: The log's complete checkpoints' versions, ascending.
        first_commit: Whether the log still has version 0's commit.

    Returns:
        The replay and the version it holds; (None, -1) when the log cannot give one.
    """
    base = max((c for c in checkpoints if c <= version), default=None)
    if base is None:  # every commit from the first (the caller finds any that is missing)
        return (LogReplay(storage.root), -1) if first_commit else (None, -1)
    try:
        snapshot = read_snapshot(storage, version=base)
    except (MaintenanceError, OSError):
        return None, -1
    replay = LogReplay(storage.root)
    replay.files = {f.key: f for f in snapshot.files}
    return replay, snapshot.version


def _state(replay: LogReplay, version: int, threshold: int, counted: list[int]) -> TableState:
    """The replay's live files at ``version`` (``counted``: the log files' versions, sorted)."""
    sizes = [f.size_bytes for f in replay.files.values()]
    return TableState(
        version=version,
        files=len(sizes),
        small_files=sum(1 for s in sizes if s < threshold),
        bytes=sum(sizes),
        log_files=bisect.bisect_right(counted, version),
    )
