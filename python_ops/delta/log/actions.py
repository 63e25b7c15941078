"""Delta log actions that the ops need, parsed from JSON commits or checkpoint rows.

Paths in the log are URL-encoded and may be absolute URIs. Every file action carries two
things: ``uri``, its identity as Delta keys it (``file_identity``: the URI of the path string as
the log spells it; replay, plans and commits compare these), and ``relative_path``, the physical
file it maps to (decoded, relative to the table root; None when outside the root, such actions
are never protected and never deleted), used only for I/O and for what VACUUM protects.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

from python_ops.delta.log.file_identity import delta_identity
from python_ops.errors import DeltaLogError
from python_ops.storage import is_remote, normalize_location
from python_ops.storage.paths import canonical, decode_log_path, is_canonical

_Z85 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"
_Z85_INDEX = {c: i for i, c in enumerate(_Z85)}


def z85_decode(text: str) -> bytes:
    """Decode Z85 (ZeroMQ base-85) text, as Delta uses for deletion-vector UUIDs.

    Args:
        text: Z85 text whose length is a multiple of 5.

    Returns:
        The decoded bytes (4 per 5 characters).

    Raises:
        ValueError: When the length or a character is invalid.
    """
    if len(text) % 5:
        raise ValueError(f"Z85 text length {len(text)} is not a multiple of 5")
    out = bytearray()
    for i in range(0, len(text), 5):
        value = 0
        for ch in text[i : i + 5]:
            value = value * 85 + _Z85_INDEX[ch]
        out += value.to_bytes(4, "big")
    return bytes(out)


def relativize(path: str, table_root: str) -> str | None:
    """Turn a path from the log into the canonical path relative to the table root.

    As Delta reads it (``new Path(new URI(path))``): percent-escapes decoded, then ``//``,
    ``.`` and ``..`` resolved (``storage.paths``), so every spelling of one file maps to one
    relative path.

    Args:
        path: The URL-encoded path as stored in the action (relative or absolute URI).
        table_root: The normalised table location.

    Returns:
        The canonical relative path; None when it lies outside the table root (or is the
        root itself).

    Raises:
        DeltaLogError: When a percent-escape is malformed (Delta cannot read it either).
    """
    if ":" not in path and not path.startswith("/"):
        # The common case: a relative path, already canonical and with nothing to decode.
        if "%" not in path and is_canonical(path):
            return path
        return canonical(decode_log_path(path))
    parsed = urlparse(path)
    if not parsed.scheme and not path.startswith("/"):
        return canonical(decode_log_path(path))
    if parsed.scheme in ("", "file"):
        absolute = decode_log_path(parsed.path if parsed.scheme else path)
        root = normalize_location(table_root) if not is_remote(table_root) else None
    else:
        scheme = "s3" if parsed.scheme in ("s3a", "s3n") else parsed.scheme
        absolute = f"{scheme}://{parsed.netloc}{decode_log_path(parsed.path)}"
        root = table_root.replace("s3a://", "s3://", 1).replace("s3n://", "s3://", 1)
        if not is_remote(root):
            return None
    if root is None:
        return None
    base = root.rstrip("/") + "/"
    if not parsed.scheme or parsed.scheme == "file":
        # a local absolute path: resolve it whole, then compare with the root
        whole = canonical(absolute.lstrip("/"))
        if whole is None:
            return None
        absolute = "/" + whole
    if not absolute.startswith(base):
        return None
    return canonical(absolute[len(base) :])


def _bad(kind: str, problem: str) -> DeltaLogError:
    return DeltaLogError(f"malformed '{kind}' action: {problem}")


def require_str(raw: Mapping[str, Any], name: str, kind: str) -> str:
    """A required non-empty string field of an action.

    Raises:
        DeltaLogError: When the field is missing, not a string or empty.
    """
    value = raw.get(name)
    if not isinstance(value, str) or not value:
        raise _bad(kind, f"field '{name}' must be a non-empty string, found {value!r}")
    return value


def optional_int(
    raw: Mapping[str, Any], name: str, kind: str, *, required: bool = False
) -> int | None:
    """An integer field of an action (JSON numbers without a fraction; never booleans).

    Raises:
        DeltaLogError: When the field has another type, is negative, or is missing but required.
    """
    value = raw.get(name)
    if value is None:
        if required:
            raise _bad(kind, f"required field '{name}' is missing")
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _bad(kind, f"field '{name}' must be a whole number >= 0, found {value!r}")
    return int(value)


def _optional_bool(raw: Mapping[str, Any], name: str, kind: str) -> None:
    value = raw.get(name)
    if value is not None and not isinstance(value, bool):
        raise _bad(kind, f"field '{name}' must be true or false, found {value!r}")


@dataclass(frozen=True, slots=True)
class DeletionVector:
    """A deletion-vector descriptor of an ``add`` or ``remove`` action.

    Attributes:
        storage_type: ``u`` (UUID-named file in the table), ``p`` (absolute path) or ``i``
            (inline, no file).
        path_or_inline_dv: The encoded location or inline bitmap.
        offset: Byte offset inside the file, if any.
        size_in_bytes: Size of the serialized bitmap.
        cardinality: Number of rows it deletes.
    """

    storage_type: str
    path_or_inline_dv: str
    offset: int | None
    size_in_bytes: int
    cardinality: int

    @property
    def unique_id(self) -> str:
        """Identity used together with the file path to key a file action."""
        base = f"{self.storage_type}{self.path_or_inline_dv}"
        return f"{base}@{self.offset}" if self.offset is not None else base

    def file_path(self, table_root: str) -> str | None:
        """The DV file's path relative to the table root, or None when it has no file there.

        Args:
            table_root: The normalised table location.

        Returns:
            The relative path of the on-disk DV file, or None (inline, or outside the root).
        """
        if self.storage_type == "u":
            encoded = self.path_or_inline_dv
            prefix, z85 = encoded[:-20], encoded[-20:]
            name = f"deletion_vector_{uuid.UUID(bytes=z85_decode(z85))}.bin"
            return f"{prefix}/{name}" if prefix else name
        if self.storage_type == "p":
            return relativize(self.path_or_inline_dv, table_root)
        return None

    @classmethod
    def parse(cls, raw: Any) -> DeletionVector | None:
        """Build from a JSON/checkpoint struct; None when absent.

        Raises:
            DeltaLogError: When the descriptor is malformed (unknown storage type, a missing or
                mistyped field, a ``u`` path that does not decode to a UUID).
        """
        if raw is None:
            return None
        kind = "deletionVector"
        if not isinstance(raw, Mapping):
            raise _bad(kind, f"expected an object, found {raw!r}")
        if raw.get("storageType") is None and raw.get("pathOrInlineDv") is None:
            return None  # a checkpoint row's all-null struct: no deletion vector
        storage_type = require_str(raw, "storageType", kind)
        if storage_type not in ("u", "p", "i"):
            raise _bad(kind, f"unknown storageType {storage_type!r} (expected u, p or i)")
        dv = cls(
            storage_type=storage_type,
            path_or_inline_dv=require_str(raw, "pathOrInlineDv", kind),
            offset=optional_int(raw, "offset", kind),
            size_in_bytes=optional_int(raw, "sizeInBytes", kind, required=True) or 0,
            cardinality=optional_int(raw, "cardinality", kind, required=True) or 0,
        )
        if storage_type == "u":
            encoded = dv.path_or_inline_dv
            try:
                if len(encoded) < 20:
                    raise ValueError(f"{len(encoded)} characters, at least 20 needed")
                z85_decode(encoded[-20:])
            except (ValueError, KeyError) as err:
                raise _bad(kind, f"pathOrInlineDv {encoded!r} is not a Z85 UUID ({err})") from err
        return dv


def _partition_values(raw: Any, kind: str) -> dict[str, str | None]:
    # The protocol stores partition values as strings (or null): JSON objects, or lists of
    # (key, value) pairs for parquet map columns.
    if raw is None:
        raise _bad(kind, "required field 'partitionValues' is missing")
    try:
        values = dict(raw)
    except (TypeError, ValueError) as err:
        raise _bad(kind, f"'partitionValues' must be an object, found {raw!r}") from err
    for key, value in values.items():
        if not isinstance(key, str) or not (value is None or isinstance(value, str)):
            raise _bad(kind, f"partition value {key!r}: {value!r} is not a string or null")
    return values


def file_key(path: str, table_root: str, dv: DeletionVector | None) -> tuple[str, str | None]:
    """The identity Delta reconciles ``add`` and ``remove`` actions by: (path's URI, DV id).

    The path's URI as Delta compares it (``file_identity.delta_identity``), never the decoded
    physical path: ``p=café/x`` and ``p=caf%C3%A9/x`` are two files to Delta.
    """
    return (delta_identity(path, table_root), dv.unique_id if dv else None)


def identity_text(key: tuple[str, str | None]) -> str:
    """A file key as one string (``path`` or ``path dv=<id>``; a valid path holds no space)."""
    return key[0] if key[1] is None else f"{key[0]} dv={key[1]}"


@dataclass(frozen=True, slots=True)
class AddFile:
    """A live data file (``add`` action).

    Attributes:
        path: The path exactly as written in the log.
        relative_path: Decoded path relative to the table root, None if outside it.
        size_bytes: File size in bytes.
        modification_time_ms: Modification time recorded by the writer.
        partition_values: Partition column to (string) value; None for null.
        deletion_vector: Its deletion vector, if any.
        stats: The JSON statistics string, when read.
        clustering_provider: ``liquid`` when Delta's clustering OPTIMIZE wrote the file (it is
            clustered on the table's clustering columns); None for files written otherwise.
    """

    path: str
    relative_path: str | None
    size_bytes: int
    modification_time_ms: int
    partition_values: dict[str, str | None]
    deletion_vector: DeletionVector | None
    stats: str | None = None
    clustering_provider: str | None = None
    uri: str = ""

    @property
    def key(self) -> tuple[str, str | None]:
        """The identity Delta reconciles add/remove actions by (path's URI, DV id)."""
        return (
            self.uri or self.path,
            self.deletion_vector.unique_id if self.deletion_vector else None,
        )

    @property
    def identity(self) -> str:
        """``key`` as one string: what plans name a file by."""
        return identity_text(self.key)

    @classmethod
    def parse(cls, raw: Mapping[str, Any], table_root: str) -> AddFile:
        """Build from a JSON/checkpoint ``add`` struct.

        Raises:
            DeltaLogError: When a required field is missing or has the wrong type.
        """
        path = raw.get("path")
        size = raw.get("size")
        mtime = raw.get("modificationTime")
        values = raw.get("partitionValues")
        stats = raw.get("stats")
        dv = raw.get("deletionVector")
        provider = raw.get("clusteringProvider")
        if type(values) is list:  # a checkpoint's map column: (key, value) pairs
            with contextlib.suppress(TypeError, ValueError):  # malformed: reported below
                values = dict(values)
        # The common, well-formed case in one cheap test (this runs once per action).
        if not (
            type(path) is str
            and path
            and type(size) is int
            and size >= 0
            and type(mtime) is int
            and mtime >= 0
            and type(values) is dict
            and all(type(v) is str or v is None for v in values.values())
            and (stats is None or type(stats) is str)
            and type(raw.get("dataChange", False)) is bool
            and (provider is None or type(provider) is str)
        ):
            path = require_str(raw, "path", "add")
            _optional_bool(raw, "dataChange", "add")
            if stats is not None and not isinstance(stats, str):
                raise _bad("add", f"field 'stats' must be a JSON string, found {stats!r}")
            size = optional_int(raw, "size", "add", required=True)
            mtime = optional_int(raw, "modificationTime", "add", required=True)
            values = _partition_values(values, "add")
            if provider is not None and not isinstance(provider, str):
                raise _bad(
                    "add", f"field 'clusteringProvider' must be a string, found {provider!r}"
                )
        return cls(
            path=path,
            relative_path=relativize(path, table_root),
            size_bytes=size or 0,
            modification_time_ms=mtime or 0,
            partition_values=values if type(values) is dict else dict(values),
            deletion_vector=None if dv is None else DeletionVector.parse(dv),
            stats=stats,
            clustering_provider=provider,
            uri=delta_identity(path, table_root),
        )


@dataclass(frozen=True, slots=True)
class RemoveFile:
    """A tombstone (``remove`` action): a file no longer in the table but kept for retention.

    Attributes:
        path: The path exactly as written in the log.
        relative_path: Decoded path relative to the table root, None if outside it.
        deletion_timestamp_ms: When the file was logically removed.
        size_bytes: File size when the writer recorded it, else None.
        deletion_vector: Its deletion vector, if any.
    """

    path: str
    relative_path: str | None
    deletion_timestamp_ms: int
    size_bytes: int | None
    deletion_vector: DeletionVector | None
    uri: str = ""

    @property
    def key(self) -> tuple[str, str | None]:
        """The identity Delta reconciles add/remove actions by (path's URI, DV id)."""
        return (
            self.uri or self.path,
            self.deletion_vector.unique_id if self.deletion_vector else None,
        )

    @classmethod
    def parse(cls, raw: Mapping[str, Any], table_root: str) -> RemoveFile:
        """Build from a JSON/checkpoint ``remove`` struct.

        Raises:
            DeltaLogError: When a field is missing or has the wrong type.
        """
        path = require_str(raw, "path", "remove")
        _optional_bool(raw, "dataChange", "remove")
        return cls(
            path=path,
            relative_path=relativize(path, table_root),
            deletion_timestamp_ms=optional_int(raw, "deletionTimestamp", "remove") or 0,
            size_bytes=optional_int(raw, "size", "remove"),
            deletion_vector=DeletionVector.parse(raw.get("deletionVector")),
            uri=delta_identity(path, table_root),
        )


@dataclass(frozen=True)
class CommitInfo:
    """The ``commitInfo`` of one commit: what operation wrote it, when, with which parameters.

    Attributes:
        version: The commit version.
        timestamp_ms: The commit's timestamp (commitInfo's, else the file's modification time).
        operation: The operation name (``WRITE``, ``MERGE``, ``OPTIMIZE`` ...), if recorded.
        operation_parameters: Parameters of the operation, as recorded.
        operation_metrics: Metrics of the operation, as recorded.
    """

    version: int
    timestamp_ms: int
    operation: str | None
    operation_parameters: dict[str, Any]
    operation_metrics: dict[str, Any]
