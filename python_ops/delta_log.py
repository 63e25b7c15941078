"""The Delta log reader: one snapshot of a table from its ``_delta_log``, without Spark.

It reads exactly what the protocol says: the newest complete checkpoint (classic single-file,
multi-part, or v2 with sidecars; ``_last_checkpoint`` is not required), then the JSON commits
after it, reconciling ``add`` and ``remove`` actions by (path, deletion-vector id). Data files are
never listed or opened.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from python_ops.actions import AddFile, CommitInfo, RemoveFile
from python_ops.errors import DeltaLogError, TableNotFoundError
from python_ops.log_files import (
    LOG_DIR,
    SIDECAR_DIR,
    LogFile,
    LogFileKind,
    classify,
    complete_checkpoints,
)
from python_ops.storage import Storage, open_storage

_ADD_FIELDS = ("path", "size", "modificationTime", "partitionValues", "deletionVector")
_REMOVE_FIELDS = ("path", "deletionTimestamp", "size", "deletionVector")


@dataclass(frozen=True)
class TableMetadata:
    """The table's ``metaData`` action.

    Attributes:
        table_id: The table's unique id.
        schema_string: The table schema as Delta's JSON schema string.
        partition_columns: Partition columns, in order.
        configuration: Table properties (``delta.*`` and user properties).
    """

    table_id: str
    schema_string: str
    partition_columns: tuple[str, ...]
    configuration: dict[str, str]

    def schema_fields(self) -> list[dict[str, Any]]:
        """The top-level fields of the schema (name, type, nullable, metadata)."""
        fields: list[dict[str, Any]] = json.loads(self.schema_string).get("fields", [])
        return fields


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


def _list_log(storage: Storage) -> list[LogFile]:
    return [classify(e) for e in storage.list_dir(LOG_DIR) if not e.is_dir]


def _json_lines(data: bytes, where: str) -> Iterator[dict[str, Any]]:
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            action = json.loads(line)
        except json.JSONDecodeError as err:
            raise DeltaLogError(f"{where}: line {number} is not valid JSON ({err})") from err
        if isinstance(action, dict):
            yield action


def _read_parquet_actions(
    data: bytes, where: str, *, with_stats: bool = False
) -> Iterator[dict[str, Any]]:
    """Yield single-key action dicts from a checkpoint or sidecar parquet file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(pa.BufferReader(data))
    except Exception as err:  # pyarrow raises ArrowInvalid and OSError subtypes
        raise DeltaLogError(f"{where}: not a readable parquet checkpoint ({err})") from err
    schema = pf.schema_arrow
    wanted: dict[str, tuple[str, ...] | None] = {
        "add": (*_ADD_FIELDS, "stats") if with_stats else _ADD_FIELDS,
        "remove": _REMOVE_FIELDS,
        "metaData": None,
        "protocol": None,
        "sidecar": None,
    }
    for kind, subfields in wanted.items():
        if kind not in schema.names:
            continue
        struct_type = schema.field(kind).type
        present = [struct_type.field(i).name for i in range(struct_type.num_fields)]
        names = [f for f in (subfields or present) if f in present]
        # Read the chosen leaves only: skipping add.stats keeps big checkpoints cheap.
        table = pf.read(columns=[f"{kind}.{n}" for n in names])
        for values in table.column(kind).to_pylist():
            if values is None or ("path" in values and values["path"] is None):
                continue
            yield {kind: values}


class _Replay:
    """Accumulates actions in log order into a snapshot state."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.files: dict[tuple[str, str | None], AddFile] = {}
        self.tombstones: dict[tuple[str, str | None], RemoveFile] = {}
        self.metadata: Mapping[str, Any] | None = None
        self.protocol: Mapping[str, Any] | None = None
        self.sidecars: list[str] = []

    def apply(self, action: Mapping[str, Any]) -> None:
        if (raw := action.get("add")) is not None:
            add = AddFile.parse(raw, self.root)
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
        elif (raw := action.get("protocol")) is not None:
            self.protocol = raw
        elif (raw := action.get("sidecar")) is not None:
            self.sidecars.append(str(raw["path"]))


def _metadata(raw: Mapping[str, Any], where: str) -> TableMetadata:
    try:
        config = raw.get("configuration") or {}
        if not isinstance(config, Mapping):  # parquet map -> list of pairs
            config = dict(config)
        return TableMetadata(
            table_id=str(raw.get("id") or ""),
            schema_string=str(raw["schemaString"]),
            partition_columns=tuple(raw.get("partitionColumns") or ()),
            configuration={str(k): str(v) for k, v in config.items()},
        )
    except (KeyError, TypeError, ValueError) as err:
        raise DeltaLogError(f"{where}: malformed metaData action ({err})") from err


def _commit_info(version: int, actions: list[dict[str, Any]], mtime_ms: int) -> CommitInfo:
    for action in actions:
        if (info := action.get("commitInfo")) is not None:
            return CommitInfo(
                version=version,
                timestamp_ms=int(
                    info.get("inCommitTimestamp") or info.get("timestamp") or mtime_ms
                ),
                operation=info.get("operation"),
                operation_parameters=dict(info.get("operationParameters") or {}),
                operation_metrics=dict(info.get("operationMetrics") or {}),
            )
    return CommitInfo(version, mtime_ms, None, {}, {})


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
    storage = location if isinstance(location, Storage) else open_storage(location)
    root = storage.root
    log_files = _list_log(storage)
    commits = {
        f.version: f for f in log_files if f.kind is LogFileKind.COMMIT and f.version is not None
    }
    checkpoints = complete_checkpoints(log_files)
    known = set(commits) | set(checkpoints)
    if not known:
        raise TableNotFoundError(
            f"no Delta table at {root}: '{LOG_DIR}' is missing or has no commits. "
            "Check the location, or build the model first."
        )
    target = max(known) if version is None else version
    if target not in known and not any(v > target for v in known):
        raise DeltaLogError(f"{root}: version {target} does not exist (latest is {max(known)})")
    usable = [v for v in checkpoints if v <= target]
    start = max(usable) if usable else None

    replay = _Replay(root)
    if start is not None:
        for part in checkpoints[start]:
            for action in _checkpoint_actions(storage, part, with_stats=with_stats):
                replay.apply(action)
        for sidecar in replay.sidecars:
            data = storage.read_bytes(f"{SIDECAR_DIR}/{sidecar}")
            where = f"{root}/{SIDECAR_DIR}/{sidecar}"
            for action in _read_parquet_actions(data, where, with_stats=with_stats):
                replay.apply(action)
    first = 0 if start is None else start + 1
    missing = [v for v in range(first, target + 1) if v not in commits]
    if missing:
        raise DeltaLogError(
            f"{root}: cannot reconstruct version {target}: commit(s) {missing[:5]} are missing "
            f"and no checkpoint covers them (the log was cleaned past the last checkpoint)."
        )
    timestamp = 0
    for v in range(first, target + 1):
        actions = list(
            _json_lines(storage.read_bytes(commits[v].path), f"{root}/{commits[v].path}")
        )
        for action in actions:
            replay.apply(action)
        timestamp = _commit_info(v, actions, commits[v].modification_time_ms).timestamp_ms
    if replay.metadata is None or replay.protocol is None:
        raise DeltaLogError(f"{root}: no metaData/protocol action up to version {target}")
    return Snapshot(
        location=root,
        version=target,
        checkpoint_version=start,
        metadata=_metadata(replay.metadata, root),
        protocol=dict(replay.protocol),
        files=tuple(replay.files.values()),
        tombstones=tuple(replay.tombstones.values()),
        log_files=tuple(log_files),
        commit_timestamp_ms=timestamp,
    )


def checkpoint_sidecars(storage: Storage, part: LogFile) -> list[str]:
    """The sidecar file names a (v2) checkpoint file references (empty for other formats).

    Args:
        storage: The table's storage.
        part: The checkpoint file.

    Returns:
        Sidecar names relative to ``_delta_log/_sidecars``.
    """
    if part.checkpoint_format != "v2":
        return []
    return [
        str(action["sidecar"]["path"])
        for action in _checkpoint_actions(storage, part)
        if action.get("sidecar") is not None
    ]


def _checkpoint_actions(
    storage: Storage, part: LogFile, *, with_stats: bool = False
) -> Iterator[dict[str, Any]]:
    data = storage.read_bytes(part.path)
    where = f"{storage.root}/{part.path}"
    if part.name.endswith(".json"):
        return _json_lines(data, where)
    return _read_parquet_actions(data, where, with_stats=with_stats)


def read_history(location: str | Storage, *, limit: int | None = None) -> list[CommitInfo]:
    """Read the ``commitInfo`` of every commit still in the log, newest first.

    Args:
        location: Table location or an open ``Storage``.
        limit: Return at most this many (newest) commits.

    Returns:
        Commit infos, newest first.

    Raises:
        TableNotFoundError: When there is no Delta log at the location.
    """
    storage = location if isinstance(location, Storage) else open_storage(location)
    commits = sorted(
        (f for f in _list_log(storage) if f.kind is LogFileKind.COMMIT and f.version is not None),
        key=lambda f: -(f.version or 0),
    )
    if not commits:
        raise TableNotFoundError(f"no Delta table at {storage.root}: '{LOG_DIR}' has no commits")
    out = []
    for f in commits[:limit] if limit else commits:
        assert f.version is not None
        actions = list(_json_lines(storage.read_bytes(f.path), f"{storage.root}/{f.path}"))
        out.append(_commit_info(f.version, actions, f.modification_time_ms))
    return out


def commit_versions(storage: Storage) -> list[int]:
    """Versions of the JSON commits still in the log, ascending."""
    return sorted(
        f.version
        for f in _list_log(storage)
        if f.kind is LogFileKind.COMMIT and f.version is not None
    )


def commit_actions(storage: Storage, version: int) -> list[dict[str, Any]]:
    """The actions of one JSON commit.

    Args:
        storage: The table's storage.
        version: The commit version.

    Returns:
        The commit's actions in file order.
    """
    path = f"{LOG_DIR}/{version:020d}.json"
    return list(_json_lines(storage.read_bytes(path), f"{storage.root}/{path}"))
