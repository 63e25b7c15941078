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

from python_ops.delta.json_text import loads_bytes
from python_ops.delta.log_files import LOG_DIR
from python_ops.delta.snapshot import LogReplay, TableMetadata, parse_metadata, parse_protocol
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


def derived_checksum(
    before: VersionChecksum, commits: Sequence[tuple[int, Sequence[Mapping[str, Any]]]]
) -> VersionChecksum | None:
    """The state after ``commits``, derived from the checksum of the version before them.

    Counted as Delta's incremental checksum counts (``computeNewChecksum``, how Delta and Sail
    write the checksum files ``read_version_checksum`` trusts): each ``add`` a live file and its
    size, each ``remove`` one less (it must carry its size: ``extendedFileMetadata``), the
    newest ``metaData`` and ``protocol`` win. Like Delta, this trusts the writers' invariant
    that a ``dataChange`` add names a file not yet live unless its commit removes it (a
    deletion-vector update). Stricter than Delta, an add with ``dataChange: false`` that its
    commit does not remove is not known: a compaction's new file and a live file re-added
    (statistics, a backfill) are told apart only by the live files, which are not read here.

    Args:
        before: The checksum of the version just before the first commit.
        commits: (version, actions) pairs, consecutive from ``before.version + 1``.

    Returns:
        The last commit's state; None when the commits do not follow ``before`` one by one, a
        ``remove`` lacks its size, a file is added with ``dataChange: false`` and not removed
        by its commit, or a ``metaData`` or ``protocol`` action does not parse.
    """
    if not commits or any(v != before.version + 1 + i for i, (v, _) in enumerate(commits)):
        return None
    files, size = before.num_files, before.table_size_bytes
    metadata, protocol = before.metadata, before.protocol
    try:
        for version, actions in commits:
            counted = _counted(actions)
            if counted is None:
                return None
            files, size = files + counted[0], size + counted[1]
            for action in actions:
                if (raw := action.get("metaData")) is not None:
                    metadata = parse_metadata(raw, f"{LOG_DIR}/{version:020d}.json")
                if (raw := action.get("protocol")) is not None:
                    protocol = parse_protocol(raw)
    except (DeltaLogError, TypeError, ValueError):
        return None
    if files < 0 or size < 0:
        return None  # a remove of a file that was not live: the log is not as Delta writes it
    return VersionChecksum(commits[-1][0], files, size, metadata, protocol)


def _counted(actions: Sequence[Mapping[str, Any]]) -> tuple[int, int] | None:
    """One commit's change to the live file count and bytes (None: not known).

    A path removed or added twice in one commit is not as Delta writes a commit: not known.
    """
    files = size = 0
    removed: set[Any] = set()
    added: set[Any] = set()
    for action in actions:
        if (remove := action.get("remove")) is None:
            continue
        if not isinstance(remove, Mapping) or remove.get("extendedFileMetadata") is not True:
            return None  # Delta's rule: a remove without its size is not counted incrementally
        if (removed_bytes := _count(remove, "size")) is None or remove.get("path") in removed:
            return None
        removed.add(remove.get("path"))
        files, size = files - 1, size - removed_bytes
    for action in actions:
        if (add := action.get("add")) is None:
            continue
        if not isinstance(add, Mapping) or (added_bytes := _count(add, "size")) is None:
            return None
        path = add.get("path")
        if path in added or (add.get("dataChange") is False and path not in removed):
            return None  # new (a compaction's) or live (re-added)? only the live files say
        added.add(path)
        files, size = files + 1, size + added_bytes
    return files, size
