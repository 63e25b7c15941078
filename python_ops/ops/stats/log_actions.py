"""The raw ``add`` and ``metaData`` actions a statistics commit copies, read from the log.

Delta's recompute re-adds each file as ``add.copy(dataChange = false, stats = new)``: every
other field (``tags``, ``deletionVector``, ``clusteringProvider``, ``partitionValues``, size,
modification time) is kept. The snapshot reader keeps only what the ops need, so the actions
to copy are read again here: the newest commit that added each file (walking back from the
snapshot's version), else the snapshot's checkpoint (classic or multi-part; v2 checkpoints are
refused by the protocol gate for this op).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pyarrow.parquet as pq

from python_ops.delta.actions import AddFile, DeletionVector, file_key, relativize
from python_ops.delta.commits import commit_actions
from python_ops.delta.log_files import LOG_DIR, LogFileKind
from python_ops.delta.snapshot import Snapshot
from python_ops.errors import DeltaLogError
from python_ops.storage import Storage

Key = tuple[str, str | None]


def _key(raw: dict[str, Any], root: str) -> Key:
    path = str(raw.get("path"))
    return file_key(path, relativize(path, root), DeletionVector.parse(raw.get("deletionVector")))


def _maps_to_dicts(value: Any) -> Any:
    """A checkpoint row as JSON actions spell it: maps as objects, null fields left out."""
    if isinstance(value, dict):
        return {k: _maps_to_dicts(v) for k, v in value.items() if v is not None}
    if isinstance(value, list) and all(isinstance(p, tuple) and len(p) == 2 for p in value):
        return {str(k): v for k, v in value}
    return value


def _from_checkpoint(
    storage: Storage, snapshot: Snapshot, wanted: set[Key], out: dict[Key, dict[str, Any]]
) -> dict[str, Any] | None:
    version = snapshot.checkpoint_version
    parts = [
        f
        for f in snapshot.log_files
        if f.kind is LogFileKind.CHECKPOINT and f.version == version and f.name.endswith(".parquet")
    ]
    metadata = None
    for part in parts:
        fs, path = storage.arrow_path(f"{LOG_DIR}/{part.name}")
        names = pq.ParquetFile(path, filesystem=fs).schema_arrow.names
        columns = [c for c in ("add", "metaData") if c in names]
        for row in pq.read_table(path, filesystem=fs, columns=columns).to_pylist():
            add = row.get("add")
            if add is not None and add.get("path") is not None:
                add = {k: v for k, v in _maps_to_dicts(add).items() if not k.endswith("_parsed")}
                key = _key(add, snapshot.location)
                if key in wanted and key not in out:
                    out[key] = add
            if row.get("metaData") is not None and row["metaData"].get("id") is not None:
                metadata = _maps_to_dicts(row["metaData"])
    return metadata


def raw_actions(
    storage: Storage, snapshot: Snapshot, files: Iterable[AddFile]
) -> tuple[dict[Key, dict[str, Any]], dict[str, Any]]:
    """The raw ``add`` action of each of ``files`` and the table's raw ``metaData`` action.

    Raises:
        DeltaLogError: When an action cannot be found (a log this op does not understand).
    """
    wanted = {f.key for f in files}
    out: dict[Key, dict[str, Any]] = {}
    metadata: dict[str, Any] | None = None
    first = 0 if snapshot.checkpoint_version is None else snapshot.checkpoint_version + 1
    for version in range(snapshot.version, first - 1, -1):
        for action in commit_actions(storage, version):
            add = action.get("add")
            if isinstance(add, dict):
                key = _key(add, snapshot.location)
                if key in wanted and key not in out:
                    out[key] = dict(add)
            elif isinstance(action.get("metaData"), dict) and metadata is None:
                metadata = dict(action["metaData"])
        if len(out) == len(wanted) and metadata is not None:
            break
    if (len(out) < len(wanted) or metadata is None) and snapshot.checkpoint_version is not None:
        from_checkpoint = _from_checkpoint(storage, snapshot, wanted, out)
        metadata = metadata or from_checkpoint
    if len(out) < len(wanted) or metadata is None:
        raise DeltaLogError(
            f"{snapshot.location}: the add actions of {len(wanted) - len(out)} live file(s) or "
            "the metaData action were not found in the log; nothing was written"
        )
    return out, metadata
