"""The Delta log reader: one snapshot of a table from its ``_delta_log``, without Spark.

It reads exactly what the protocol says: the newest complete checkpoint (classic single-file,
multi-part, or v2 with sidecars; ``_last_checkpoint`` is not required), then the JSON commits
after it, reconciling ``add`` and ``remove`` actions by (path, deletion-vector id). Data files are
never listed or opened.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from python_ops import runtime
from python_ops.delta.log.actions import (
    AddFile,
    RemoveFile,
    require_str,
)
from python_ops.delta.log.commits import (
    At,
    commit_info,
    commit_lines,
    list_log,
    location_of,
)
from python_ops.delta.log.file_identity import uri_class
from python_ops.delta.log.log_files import (
    LOG_DIR,
    SIDECAR_DIR,
    LogFile,
    LogFileKind,
    complete_checkpoints,
)
from python_ops.delta.log.metadata import TableMetadata, parse_metadata, parse_protocol
from python_ops.delta.state.checkpoint_reader import (
    checkpoint_actions,
    last_checkpoint_version,
    read_parquet_actions,
)
from python_ops.delta.state.file_columns import (
    FileColumns,
)
from python_ops.errors import DeltaLogError, TableNotFoundError
from python_ops.storage import Storage, open_storage

FileKey = tuple[str, str | None]


@dataclass(frozen=True)
class Snapshot:
    """A table as of one version, reconstructed from its log.

    Attributes:
        location: The normalised table location.
        version: The snapshot's version.
        checkpoint_version: Version of the checkpoint the snapshot started from, if any.
        metadata: The table metadata.
        protocol: The ``protocol`` action as a dict.
        files: Live data files.
        tombstones: ``remove`` actions still in the log (expired or not).
        log_files: Every file found in ``_delta_log`` (names classified).
        commit_timestamp_ms: Timestamp of the snapshot's commit.
        ambiguous: Live files (as the log spells them) that a ``remove`` spelled another way
            may have cancelled in Delta's replay (``ambiguous_files``).
    """

    location: str
    version: int
    checkpoint_version: int | None
    metadata: TableMetadata
    protocol: dict[str, Any]
    files: tuple[AddFile, ...]
    tombstones: tuple[RemoveFile, ...]
    log_files: tuple[LogFile, ...] = field(repr=False)
    commit_timestamp_ms: int = 0
    ambiguous: tuple[str, ...] = ()


class LogReplay:
    """Accumulates actions in log order into a snapshot state (Delta's reconciliation)."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.files: dict[FileKey, AddFile] = {}
        self.tombstones: dict[FileKey, RemoveFile] = {}
        self.metadata: Mapping[str, Any] | None = None
        self.metadata_at: At = ("", "line", 0)
        self.protocol: Mapping[str, Any] | None = None
        self.sidecars: list[str] = []

    def apply(self, at: At, action: Mapping[str, Any]) -> None:
        """Apply one action read at ``at`` (file and line, for errors)."""
        try:
            if (raw := action.get("add")) is not None:
                add = raw if isinstance(raw, AddFile) else AddFile.parse(raw, self.root)
                key = add.key
                self.files[key] = add
                self.tombstones.pop(key, None)
            elif (raw := action.get("remove")) is not None:
                remove = RemoveFile.parse(raw, self.root)
                key = remove.key
                self.files.pop(key, None)
                self.tombstones[key] = remove
            elif (raw := action.get("metaData")) is not None:
                self.metadata = raw
                self.metadata_at = at
            elif (raw := action.get("protocol")) is not None:
                self.protocol = parse_protocol(raw)
            elif (raw := action.get("sidecar")) is not None:
                self.sidecars.append(require_str(raw, "path", "sidecar"))
        except DeltaLogError as err:
            raise DeltaLogError(f"{location_of(at)}: {err}") from err


def snapshot_reads(location: str) -> int:
    """How many snapshots of the table at ``location`` this process has reconstructed.

    Reconstructing a snapshot lists and reads ``_delta_log``; tests use the count to check
    that deciding and running maintenance read a table's log once.
    """
    with runtime.SNAPSHOT_READS.lock:
        return runtime.SNAPSHOT_READS.value[open_storage(location).root]


def read_snapshot(
    location: str | Storage, *, version: int | None = None, with_stats: bool = False
) -> Snapshot:
    """Reconstruct a table's snapshot from its Delta log.

    Args:
        location: Table location (path or URI) or an open ``Storage`` rooted at it.
        version: The version to read; the latest when None.
        with_stats: Also read file statistics from checkpoints (commits always carry them);
            off by default because they dominate the size of big checkpoints.

    Returns:
        The snapshot.

    Raises:
        TableNotFoundError: When there is no Delta log with a commit at the location.
        DeltaLogError: When the requested version cannot be reconstructed (missing commits,
            unreadable files, no metadata).
    """
    return reconstruct(location, version=version, with_stats=with_stats, columns=None)


def reconstruct(
    location: str | Storage,
    *,
    version: int | None,
    with_stats: bool,
    columns: list[FileColumns] | None,
) -> Snapshot:
    """Replay the log up to ``version``: the one reader behind every snapshot read.

    Args:
        location: Table location or an open ``Storage``.
        version: The version to read; the latest when None.
        with_stats: Also read file statistics from checkpoints.
        columns: When given, a checkpoint file's ``add``/``remove`` rows that
            ``checkpoint_columns`` takes are appended here as path columns instead of
            becoming objects (``file_paths.read_file_paths``).

    Returns:
        The snapshot (without the rows handed over as columns).

    Raises:
        TableNotFoundError: When there is no Delta log with a commit at the location.
        DeltaLogError: When the requested version cannot be reconstructed.
    """
    storage = location if isinstance(location, Storage) else open_storage(location)
    root = storage.root
    with runtime.SNAPSHOT_READS.lock:
        runtime.SNAPSHOT_READS.value[root] += 1
    log_files = list_log(storage)
    commits = {
        f.version: f for f in log_files if f.kind is LogFileKind.COMMIT and f.version is not None
    }
    checkpoints = complete_checkpoints(log_files)
    target = _target_version(root, version, set(commits) | set(checkpoints))
    usable = [v for v in checkpoints if v <= target]
    start = max(usable) if usable else None
    replay = LogReplay(root)
    if start is not None:
        _replay_checkpoint(storage, replay, checkpoints[start], with_stats, columns)
    first = 0 if start is None else start + 1
    _require_commits(storage, commits, checkpoints, range(first, target + 1))
    timestamp, actions = _replay_commits(storage, replay, commits, start, target)
    if target >= first and replay.metadata is not None:
        require_in_commit_timestamp(root, target, replay.metadata, actions)
    if replay.metadata is None or replay.protocol is None:
        missing_action = "metaData" if replay.metadata is None else "protocol"
        raise DeltaLogError(
            f"{root}: no {missing_action} action up to version {target}; the log is incomplete, "
            "so no op can tell what the table holds"
        )
    return Snapshot(
        location=root,
        version=target,
        checkpoint_version=start,
        metadata=parse_metadata(replay.metadata, location_of(replay.metadata_at)),
        protocol=dict(replay.protocol),
        files=tuple(replay.files.values()),
        tombstones=tuple(replay.tombstones.values()),
        log_files=tuple(log_files),
        commit_timestamp_ms=timestamp,
        ambiguous=ambiguous_files(replay.files, replay.tombstones),
    )


def _target_version(root: str, version: int | None, known: set[int]) -> int:
    """The version to reconstruct: ``version``, or the latest the log knows when None."""
    if not known:
        raise TableNotFoundError(
            f"no Delta table at {root}: '{LOG_DIR}' is missing or has no commits. "
            "Check the location, or build the model first."
        )
    target = max(known) if version is None else version
    if target not in known and not any(v > target for v in known):
        raise DeltaLogError(f"{root}: version {target} does not exist (latest is {max(known)})")
    return target


def _replay_checkpoint(
    storage: Storage,
    replay: LogReplay,
    parts: Sequence[LogFile],
    with_stats: bool,
    columns: list[FileColumns] | None,
) -> None:
    """Apply a complete checkpoint's parts, then the v2 sidecars they name."""
    root = storage.root
    for part in parts:
        for at, action in checkpoint_actions(
            storage, part, with_stats=with_stats, parse_adds=True, columns=columns
        ):
            replay.apply(at, action)
    for sidecar in replay.sidecars:
        where = f"{root}/{SIDECAR_DIR}/{sidecar}"
        data = storage.read_arrow_buffer(f"{SIDECAR_DIR}/{sidecar}")
        sidecar_actions = read_parquet_actions(
            data, where, with_stats=with_stats, root=root, columns=columns
        )
        del data  # the reader's copy is the one held (see read_parquet_actions)
        for at, action in sidecar_actions:
            replay.apply(at, action)


def _require_commits(
    storage: Storage,
    commits: Mapping[int, LogFile],
    checkpoints: Mapping[int, Any],
    versions: range,
) -> None:
    """Refuse when a commit the replay needs is missing, saying why it may be."""
    missing = [v for v in versions if v not in commits]
    if not missing:
        return
    named = last_checkpoint_version(storage)
    hint = (
        f"_last_checkpoint names version {named}, whose checkpoint is missing or incomplete"
        if named is not None and named not in checkpoints
        else "the log was cleaned past the last checkpoint, or a commit was lost"
    )
    raise DeltaLogError(
        f"{storage.root}: cannot reconstruct version {versions.stop - 1}: commit(s) "
        f"{missing[:5]} are missing and no checkpoint covers them ({hint}). Restore the missing "
        "log files; no op runs on a log it cannot read completely."
    )


def _replay_commits(
    storage: Storage,
    replay: LogReplay,
    commits: Mapping[int, LogFile],
    start: int | None,
    target: int,
) -> tuple[int, list[dict[str, Any]]]:
    """Apply the JSON commits after the checkpoint: the last one's timestamp and actions."""
    first = 0 if start is None else start + 1
    timestamp = 0
    actions: list[dict[str, Any]] = []
    for v in range(first, target + 1):
        try:
            lines = commit_lines(storage, commits[v].path)
            for at, action in lines:
                replay.apply(at, action)
        except DeltaLogError as err:
            raise DeltaLogError(
                f"{err}. {damaged_commit_way_forward(commits[v].path, v, start, target)}"
            ) from err
        actions = [action for _, action in lines]
        timestamp = commit_info(v, actions, commits[v].modification_time_ms).timestamp_ms
    return timestamp, actions


def require_in_commit_timestamp(
    root: str, version: int, metadata: Mapping[str, Any], actions: list[dict[str, Any]]
) -> None:
    """Refuse a table with in-commit timestamps whose latest commit has none, as Delta does.

    With ``delta.enableInCommitTimestamps`` on, every commit from the enablement version on
    must begin with a ``commitInfo`` carrying ``inCommitTimestamp``; Delta 4.4 cannot read the
    table's snapshot otherwise (``DELTA_MISSING_COMMIT_INFO``), so no op here runs on it.

    Raises:
        DeltaLogError: Naming the commit and the way out.
    """
    config = metadata.get("configuration") or {}
    if not isinstance(config, Mapping):
        config = dict(config)
    if str(config.get("delta.enableInCommitTimestamps", "false")).lower() != "true":
        return
    enabled_at = config.get("delta.inCommitTimestampEnablementVersion")
    if enabled_at is not None and str(enabled_at).isdigit() and version < int(enabled_at):
        return
    first = actions[0].get("commitInfo") if actions else None
    ict = first.get("inCommitTimestamp") if isinstance(first, Mapping) else None
    if type(ict) is not int:
        raise DeltaLogError(
            f"{root}: commit {version} has no inCommitTimestamp in a leading commitInfo, but "
            "the table enables in-commit timestamps (delta.enableInCommitTimestamps); Delta "
            "4.4 cannot read such a table (DELTA_MISSING_COMMIT_INFO), so no op runs on it. "
            "The writer of that commit does not support in-commit timestamps: restore the "
            "commit from a backup, or have Delta disable the feature."
        )


def _may_differ(identity: str) -> bool:
    """Whether another string can be one URI with ``identity`` (an escape or a scheme)."""
    return "%" in identity or ":" in identity


def ambiguous_files(
    files: Mapping[FileKey, AddFile], tombstones: Mapping[FileKey, RemoveFile]
) -> tuple[str, ...]:
    """Live files a ``remove`` of another spelling of one URI may have cancelled in Delta.

    Delta groups actions by their canonical string before it replays them by URI
    (``file_identity``): a ``remove`` spelled ``%C3`` for an ``add`` spelled ``%c3`` cancels
    it only when both land in one group. Such a file is live here (VACUUM keeps it); a
    rewrite refuses the table (``require_unambiguous``). Only identities with an escape or a
    scheme can share a URI with another string.

    Returns:
        The ambiguous live files' paths as the log spells them, sorted.
    """
    removed = {(uri_class(k[0]), k[1]) for k in tombstones if _may_differ(k[0])}
    if not removed:
        return ()
    return tuple(
        sorted(
            f.path
            for k, f in files.items()
            if _may_differ(k[0]) and (uri_class(k[0]), k[1]) in removed
        )
    )


def require_unambiguous(snapshot: Snapshot, op: str) -> None:
    """Refuse to rewrite a table where Delta's own reading of some live file is uncertain.

    Raises:
        DeltaLogError: Naming the files (``Snapshot.ambiguous``) and the way out.
    """
    if snapshot.ambiguous:
        names = ", ".join(snapshot.ambiguous[:5])
        raise DeltaLogError(
            f"{snapshot.location}: {op} refused: {len(snapshot.ambiguous)} live file(s) ({names}) "
            "were removed by a commit that spells them differently (one URI, two strings); "
            "Delta cancels such a remove only by chance of its snapshot partitioning, so a "
            "rewrite could bring back rows Delta no longer reads. Nothing was changed. Remove "
            "or re-add those files with Delta's own writer (e.g. a DELETE on their rows), then "
            "run the op again."
        )


def damaged_commit_way_forward(path: str, version: int, checkpoint: int | None, latest: int) -> str:
    """What a user can do about a commit the reader refused: the last intact version and how on.

    The reader replays the checkpoint and the commits before ``version`` without fault, so the
    table as of ``version - 1`` is intact and readable (time travel stops before the damage).

    Args:
        path: The damaged commit file, relative to the table (``_delta_log/<version>.json``).
        version: Its version.
        checkpoint: The checkpoint version the replay started from, if any.
        latest: The version being read.

    Returns:
        Sentences for the end of the error message.
    """
    after = (
        "it is the latest commit"
        if version >= latest
        else f"the {latest - version} later commit(s) ({version + 1}"
        + (f"..{latest}" if latest > version + 1 else "")
        + ") build on it"
    )
    restore = (
        f"restore {path} from a backup (or the object store's earlier version of it), then "
        "run the op again"
    )
    if version == 0:
        return (
            f"Commit {version} is damaged and no earlier version exists ({after}); no op runs "
            f"on a log it cannot read completely. To go on, {restore}."
        )
    intact = version - 1
    first = 0 if checkpoint is None else checkpoint + 1
    commits = f"commit {intact}" if first == intact else f"commits {first}..{intact}"
    source = (
        f"checkpoint {checkpoint}"
        if checkpoint == intact
        else commits + (f" after checkpoint {checkpoint}" if checkpoint is not None else "")
    )
    return (
        f"Commit {version} is damaged ({after}); version {intact} is the last intact version "
        f"({source} read without fault); no op runs on a log it cannot read completely. To go "
        f"on, {restore}; or, without a backup, read the table as of version {intact} (time "
        f"travel: VERSION AS OF {intact}, which stops before the damage) and write it to a new "
        f"location (CREATE TABLE ... AS SELECT), the commits from {version} on being lost."
    )
