"""A version's checksum file (``<version>.crc``): the table's state as its writer recorded it.

Delta on Spark and Sail write, beside each commit, a JSON file describing the table after it:
``numFiles``, ``tableSizeBytes``, ``metadata`` and ``protocol`` (Delta's "version checksum";
Delta on Spark adds more fields, which are not read here). delta-rs writes none. The file is
optional and written after the commit, so a missing or unreadable one means "not known", never
an error: a reader that needs the state then reads the snapshot.

The post-hook uses it to decide that nothing is due without reconstructing the snapshot
(``maintenance.build_decisions``): one small read instead of a checkpoint and a listing. After
a build that created its table, the build's commits are the whole log, and the same state is
replayed from them (``replayed_checksum``): no read at all.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from python_ops.delta.log.json_text import loads_bytes
from python_ops.delta.log.log_files import LOG_DIR
from python_ops.delta.log.metadata import TableMetadata, parse_metadata, parse_protocol
from python_ops.delta.state.snapshot import LogReplay
from python_ops.errors import DeltaLogError, MaintenanceError
from python_ops.storage import Storage


@dataclass(frozen=True)
class VersionChecksum:
    """The table at one version, as its writer's checksum file says.

    Attributes:
        version: The version it describes.
        num_files: Live data files.
        table_size_bytes: Their bytes.
        metadata: The table's metadata.
        protocol: The table's ``protocol`` action.
    """

    version: int
    num_files: int
    table_size_bytes: int
    metadata: TableMetadata
    protocol: dict[str, Any]


def _count(raw: Mapping[str, Any], key: str) -> int | None:
    value = raw.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value


def read_version_checksum(storage: Storage, version: int) -> VersionChecksum | None:
    """The checksum file of ``version``, or None when there is none or it cannot be trusted.

    A file that is not JSON, lacks a field, or holds a malformed ``metadata`` or ``protocol``
    is treated as absent: the caller reads the snapshot instead.

    Args:
        storage: The table's storage.
        version: The version.

    Returns:
        What the file says, or None.
    """
    path = f"{LOG_DIR}/{version:020d}.crc"
    try:
        raw = loads_bytes(storage.read_bytes(path))
    except (OSError, ValueError, MaintenanceError):  # absent, unreadable, not JSON
        return None
    if not isinstance(raw, dict):
        return None
    files, size = _count(raw, "numFiles"), _count(raw, "tableSizeBytes")
    metadata, protocol = raw.get("metadata"), raw.get("protocol")
    if files is None or size is None:
        return None
    if not isinstance(metadata, dict) or not isinstance(protocol, dict):
        return None
    try:
        return VersionChecksum(
            version, files, size, parse_metadata(metadata, path), parse_protocol(protocol)
        )
    except (DeltaLogError, TypeError, ValueError):
        return None


def replayed_checksum(
    root: str, commits: Sequence[tuple[int, Sequence[Mapping[str, Any]]]]
) -> VersionChecksum | None:
    """The state a checksum file of the last commit describes, replayed from the whole log.

    When ``commits`` are versions 0, 1, ... N of a table (a table its build created), they are
    its whole log, and replaying them as a snapshot does (``LogReplay``: add and remove
    reconciled by path and deletion-vector id) gives version N's state without reading its
    checksum file (which delta-rs does not write). Anything else is not known here.

    Args:
        root: The table's root (relative paths of its files).
        commits: (version, actions) pairs in version order.

    Returns:
        Version N's state; None when the commits are not the whole log (the first is not
        version 0, or a version is skipped), the log has no metaData or protocol yet, or an
        action does not parse.
    """
    if not commits or any(version != i for i, (version, _) in enumerate(commits)):
        return None
    replay = LogReplay(root)
    try:
        for version, actions in commits:
            at = (f"{LOG_DIR}/{version:020d}.json", "line", 0)
            for action in actions:
                replay.apply(at, action)
        if replay.metadata is None or replay.protocol is None:
            return None
        metadata = parse_metadata(replay.metadata, f"{LOG_DIR}/{commits[-1][0]:020d}.json")
    except (DeltaLogError, TypeError, ValueError):
        return None
    files = replay.files.values()
    return VersionChecksum(
        commits[-1][0],
        len(files),
        sum(f.size_bytes for f in files),
        metadata,
        dict(replay.protocol),
    )
