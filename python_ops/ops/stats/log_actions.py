"""The raw ``add`` and ``metaData`` actions a statistics commit copies, read from the log.

Delta's recompute re-adds each file as ``add.copy(dataChange = false, stats = new)``: every
other field (``tags``, ``deletionVector``, ``clusteringProvider``, ``partitionValues``, size,
modification time) is kept. The snapshot reader keeps only what the ops need, so the actions
to copy are read again here: the newest commit that added each file (walking back from the
snapshot's version), else the snapshot's checkpoint: classic, multi-part, or v2 (its top file,
Parquet or JSON, and the sidecar files it names under ``_delta_log/_sidecars``, which hold the
``add`` actions of a v2 checkpoint Delta writes). The commit written is a JSON commit; this op
writes no checkpoint, so a v2-checkpoint table gets no classic one from it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from python_ops.delta.log.actions import AddFile, DeletionVector, file_key, require_str
from python_ops.delta.log.commits import commit_actions, json_lines
from python_ops.delta.log.log_files import SIDECAR_DIR, LogFile, complete_checkpoints
from python_ops.delta.state.snapshot import Snapshot
from python_ops.errors import DeltaLogError
from python_ops.storage import Storage

Key = tuple[str, str | None]


def _key(raw: dict[str, Any], root: str) -> Key:
    path = str(raw.get("path"))
    return file_key(path, root, DeletionVector.parse(raw.get("deletionVector")))


def _as_json(value: Any, kind: pa.DataType) -> Any:
    """A checkpoint value as JSON actions spell it, by its Arrow type.

    Maps become objects (an empty map ``{}``, not an empty list), struct fields that are null
    are left out, lists stay lists (``partitionColumns: []``).
    """
    if value is None:
        return None
    if pa.types.is_map(kind):
        return {str(k): _as_json(v, kind.item_type) for k, v in value}
    if pa.types.is_struct(kind):
        return {
            f.name: _as_json(value[f.name], f.type) for f in kind if value.get(f.name) is not None
        }
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        return [_as_json(v, kind.value_type) for v in value]
    return value


def _parquet_rows(storage: Storage, rel: str) -> Iterable[dict[str, Any]]:
    """The ``add``, ``metaData`` and ``sidecar`` rows of a checkpoint or sidecar Parquet file."""
    fs, path = storage.arrow_path(rel)
    names = pq.ParquetFile(path, filesystem=fs).schema_arrow.names
    columns = [c for c in ("add", "metaData", "sidecar") if c in names]
    table = pq.read_table(path, filesystem=fs, columns=columns)
    for row in table.to_pylist():
        for kind in columns:
            if row.get(kind) is not None:
                yield {kind: _as_json(row[kind], table.schema.field(kind).type)}


def _checkpoint_rows(storage: Storage, part: LogFile) -> Iterable[dict[str, Any]]:
    if part.name.endswith(".json"):
        where = f"{storage.root}/{part.path}"
        return (action for _, action in json_lines(storage.read_bytes(part.path), where))
    return _parquet_rows(storage, part.path)


def _from_checkpoint(
    storage: Storage, snapshot: Snapshot, wanted: set[Key], out: dict[Key, dict[str, Any]]
) -> dict[str, Any] | None:
    assert snapshot.checkpoint_version is not None
    parts = complete_checkpoints(list(snapshot.log_files)).get(snapshot.checkpoint_version, [])
    metadata = None
    sidecars: list[str] = []
    rows = [row for part in parts for row in _checkpoint_rows(storage, part)]
    for row in rows:
        if isinstance(row.get("sidecar"), dict):
            sidecars.append(require_str(row["sidecar"], "path", "sidecar"))
    for sidecar in sidecars:
        rows.extend(_parquet_rows(storage, f"{SIDECAR_DIR}/{sidecar}"))
    for row in rows:
        add = row.get("add")
        if isinstance(add, dict) and add.get("path") is not None:
            add = {k: v for k, v in add.items() if not k.endswith("_parsed")}
            key = _key(add, snapshot.location)
            if key in wanted and key not in out:
                out[key] = add
        meta = row.get("metaData")
        if isinstance(meta, dict) and meta.get("id") is not None:
            metadata = meta
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
