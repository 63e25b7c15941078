"""VACUUM LITE: candidates from the log's ``remove`` actions instead of a listing of storage.

As Delta's ``VacuumCommand`` (4.4) does for ``VACUUM t LITE``:

1. ``V`` = the latest commit at or before the cutoff (``getActiveCommitAtTime``: commit files'
   modification times made monotonic, or in-commit timestamps where the table has them).
   No such commit: nothing to vacuum.
2. The commits ``start..V`` are read, where ``start`` = the last vacuum's
   ``latestCommitVersionOutsideOfRetentionWindow`` + 1 (``_delta_log/_last_vacuum_info``), else
   the earliest commit. When the earliest commit is not 0 and the last vacuum does not reach it
   (the log was cleaned), LITE cannot be complete: ``LiteVacuumUnavailableError`` (Delta's
   ``DELTA_CANNOT_VACUUM_LITE``), before anything is deleted.
3. Candidates: every ``remove``'s file and its on-disk (``u``) deletion-vector file, timed by
   the remove's ``deletionTimestamp``, and every ``cdc`` file (time 0); the newest time per path;
   those before the cutoff that the snapshot does not protect (live again, an unexpired
   tombstone, their DV files and parents). No directory is ever selected, nothing is listed.

The state file (``state``) is written only after a real run deleted everything it
selected.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from python_ops.delta.log.actions import DeletionVector, RemoveFile, relativize
from python_ops.delta.log.commits import commit_actions
from python_ops.delta.log.log_files import LogFile, LogFileKind
from python_ops.delta.state.file_paths import FilePaths
from python_ops.delta.state.snapshot import Snapshot
from python_ops.delta.table.properties import IN_COMMIT_TIMESTAMP_VERSION, IN_COMMIT_TIMESTAMPS
from python_ops.errors import DeltaLogError, MaintenanceError
from python_ops.ops.results import VacuumFile
from python_ops.ops.vacuum.sources.state import LastVacuumInfo
from python_ops.storage import Storage

FULL_HINT = "run VACUUM FULL (python -m python_ops vacuum --mode full, or vacuum(mode='full'))"


class LiteVacuumUnavailableError(MaintenanceError):
    """LITE cannot be complete: the log no longer reaches back to where it must start.

    Delta's ``DELTA_CANNOT_VACUUM_LITE``. Nothing was deleted; a FULL run lists storage instead
    (and records where the next LITE can start).

    Args:
        table: The table location.
        earliest: The earliest commit still in the log.
        last_version: The last vacuum's ``latestCommitVersionOutsideOfRetentionWindow`` (None:
            no last-vacuum info, or none with a version).
    """

    def __init__(self, *, table: str, earliest: int, last_version: int | None):
        self.table = table
        self.earliest = earliest
        self.last_version = last_version
        reach = (
            "no _delta_log/_last_vacuum_info records a version"
            if last_version is None
            else f"_delta_log/_last_vacuum_info reaches only version {last_version}"
        )
        super().__init__(
            f"table {table}: VACUUM LITE cannot delete all eligible files as some files are not "
            f"referenced by the Delta log: the log starts at version {earliest} and {reach}. "
            f"Nothing was deleted. Please {FULL_HINT}; it records where the next LITE starts."
        )


@dataclass(frozen=True)
class LiteWindow:
    """The commits LITE reads.

    Attributes:
        earliest: The earliest commit in the log.
        end: ``latestCommitVersionOutsideOfRetentionWindow``: the latest commit at or before the
            cutoff (None: every commit is newer than the cutoff, nothing to vacuum).
        start: The first commit to read (None with ``end``, or when nothing is left to read).
        complete: False when the log does not reach back to where LITE must start.
        cutoff_ms: The cutoff the window was found for.
        handled_before_ms: The window starts at or before the last complete run's end (Delta's
            ``min(latest, last + 1)``): the removes that run saw before its cutoff (recorded
            in ``_last_vacuum_info`` by this package) were deleted then, and are not candidates
            again. None: nothing of the window was handled.
    """

    earliest: int
    end: int | None
    start: int | None
    complete: bool
    cutoff_ms: int = 0
    handled_before_ms: int | None = None

    @property
    def commit_range(self) -> tuple[int, int] | None:
        """(start, end) of the commits read, inclusive; None when none are read."""
        if self.start is None or self.end is None or self.start > self.end:
            return None
        return (self.start, self.end)


def _commits(snapshot: Snapshot) -> list[LogFile]:
    found = [
        f for f in snapshot.log_files if f.kind is LogFileKind.COMMIT and f.version is not None
    ]
    return sorted((f for f in found if (f.version or 0) <= snapshot.version), key=_version)


def _version(f: LogFile) -> int:
    assert f.version is not None
    return f.version


def _in_commit_timestamp(storage: Storage, version: int) -> int:
    for action in commit_actions(storage, version):
        if (info := action.get("commitInfo")) is not None:
            stamp = info.get("inCommitTimestamp")
            if isinstance(stamp, int) and not isinstance(stamp, bool):
                return stamp
    raise DeltaLogError(
        f"{storage.root}: commit {version} carries no inCommitTimestamp, though the table has "
        "in-commit timestamps from an earlier version"
    )


def latest_commit_at_or_before(
    storage: Storage, snapshot: Snapshot, cutoff_ms: int, commits: list[LogFile]
) -> int | None:
    """The latest commit whose timestamp is at or before ``cutoff_ms``, as Delta times commits.

    Args:
        storage: The table's storage.
        snapshot: The latest snapshot (its properties say whether commits carry timestamps).
        cutoff_ms: The cutoff.
        commits: The log's commit files, ascending.

    Returns:
        The version; None when every commit is newer than the cutoff.

    Raises:
        DeltaLogError: When a commit that must carry an in-commit timestamp does not.
    """
    configuration = snapshot.metadata.configuration
    ict_from: int | None = None
    if configuration.get(IN_COMMIT_TIMESTAMPS, "false").lower() == "true":
        try:
            ict_from = int(configuration.get(IN_COMMIT_TIMESTAMP_VERSION, "0"))
        except ValueError as err:
            raise DeltaLogError(
                f"{storage.root}: {IN_COMMIT_TIMESTAMP_VERSION} is not a version number"
            ) from err
    timed = [f for f in commits if ict_from is None or _version(f) < ict_from]
    stamped = [_version(f) for f in commits if ict_from is not None and _version(f) >= ict_from]
    if stamped and _in_commit_timestamp(storage, stamped[0]) <= cutoff_ms:
        lo, hi = 0, len(stamped) - 1  # in-commit timestamps increase: the last one <= cutoff
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if _in_commit_timestamp(storage, stamped[mid]) <= cutoff_ms:
                lo = mid
            else:
                hi = mid - 1
        return stamped[lo]
    found, previous = None, None
    for f in timed:  # file times, made monotonic as Delta's history manager does
        stamp = f.modification_time_ms
        if previous is not None and stamp <= previous:
            stamp = previous + 1
        previous = stamp
        if stamp <= cutoff_ms:
            found = _version(f)
    return found


def lite_window(
    storage: Storage, snapshot: Snapshot, cutoff_ms: int, last: LastVacuumInfo | None
) -> LiteWindow:
    """The commits LITE reads for this cutoff, and whether it can be complete.

    Args:
        storage: The table's storage.
        snapshot: The latest snapshot.
        cutoff_ms: The cutoff (now less the retention).
        last: The last vacuum's info (``state.read_last_vacuum_info``).

    Returns:
        The window.

    Raises:
        DeltaLogError: When commit timestamps cannot be read.
    """
    commits = _commits(snapshot)
    earliest = _version(commits[0]) if commits else snapshot.version
    last_version = last.version if last is not None else None
    complete = earliest == 0 or (last_version is not None and last_version >= earliest)
    end = latest_commit_at_or_before(storage, snapshot, cutoff_ms, commits)
    if end is None:
        return LiteWindow(earliest, None, None, complete, cutoff_ms)
    # Delta's window starts at min(latest, last + 1): a run right after a complete one reads the
    # latest commit again; what that run deleted from it is not a candidate again
    start = min(snapshot.version, earliest if last_version is None else last_version + 1)
    handled = (
        last.cutoff_ms
        if last is not None and last_version is not None and start <= last_version
        else None
    )
    return LiteWindow(earliest, end, start, complete, cutoff_ms, handled)


def _dv_file(dv: DeletionVector | None) -> str | None:
    # Delta takes relative (``u``) DV files only; an absolute one is never the table's
    return dv.file_path("") if dv is not None and dv.storage_type == "u" else None


def lite_candidates(
    storage: Storage, window: LiteWindow, location: str
) -> dict[str, tuple[int, int]]:
    """Files the commits of the window removed (and their DV files, and CDC files).

    Args:
        storage: The table's storage.
        window: The commits to read.
        location: The normalised table location (for absolute paths in the log).

    Returns:
        Relative path to (size, time): the newest deletion time where a path repeats.
    """
    out: dict[str, tuple[int, int]] = {}

    handled = window.handled_before_ms

    def note(path: str | None, size: int, at: int) -> None:
        if path is not None and (path not in out or out[path][1] < at):
            out[path] = (size, at)

    def handled_already(path: str) -> bool:  # deleted by the last complete run
        return handled is not None and out[path][1] < handled

    span = window.commit_range
    if span is None:
        return out
    for version in range(span[0], span[1] + 1):
        try:
            actions = commit_actions(storage, version)
        except FileNotFoundError:
            continue  # a gap: Delta reads the commits it lists
        for action in actions:
            if (raw := action.get("remove")) is not None:
                r = RemoveFile.parse(raw, location)
                at = r.deletion_timestamp_ms
                note(r.relative_path, r.size_bytes or 0, at)
                dv = r.deletion_vector
                note(_dv_file(dv), dv.size_in_bytes if dv else 0, at)
            elif (cdc := action.get("cdc")) is not None and isinstance(cdc.get("path"), str):
                size = cdc.get("size")
                note(relativize(cdc["path"], location), size if isinstance(size, int) else 0, 0)
    return {p: v for p, v in out.items() if not handled_already(p)}


def expired(candidates: dict[str, tuple[int, int]], cutoff_ms: int) -> list[str]:
    """The candidates removed strictly before the cutoff (their newest removal)."""
    return [p for p, (_, at) in candidates.items() if at < cutoff_ms]


def select_lite(
    candidates: dict[str, tuple[int, int]], kept: Collection[str], cutoff_ms: int
) -> list[VacuumFile]:
    """LITE's selection: candidates removed before the cutoff that nothing protects.

    Args:
        candidates: ``lite_candidates``.
        kept: The expired candidates VACUUM must keep (``FilePaths.kept_among``: protected
            paths, and directories above one).
        cutoff_ms: Files removed strictly before this time are eligible.

    Returns:
        The selected files (never directories), sorted by path.
    """
    chosen = (
        VacuumFile(p, candidates[p][0], False)
        for p in expired(candidates, cutoff_ms)
        if p not in kept
    )
    return sorted(chosen, key=lambda f: f.path)


def lite_selection(
    storage: Storage, candidates: dict[str, tuple[int, int]], paths: FilePaths, cutoff_ms: int
) -> tuple[list[VacuumFile], int]:
    """LITE's selection on a storage: ``select_lite``, less the paths behind a symbolic link.

    The log names files, not what the disk holds now: a partition directory replaced by a
    link to somewhere else would lead a delete out of the table. Such paths are kept and
    counted (``Storage.behind_links``; the delete itself never follows a link either).

    Args:
        storage: The table's storage.
        candidates: ``lite_candidates``.
        paths: The snapshot's paths (``FilePaths.kept_among`` judges the few candidates).
        cutoff_ms: Files removed strictly before this time are eligible.

    Returns:
        (the selected files, sorted; candidates kept because they lie behind a link).
    """
    eligible = expired(candidates, cutoff_ms)
    kept = paths.kept_among(eligible, cutoff_ms)
    linked = storage.behind_links(p for p in eligible if p not in kept)
    return select_lite(candidates, kept | linked, cutoff_ms), len(linked)
