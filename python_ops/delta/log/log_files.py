"""Names of the files in a ``_delta_log`` directory, classified the way the Delta protocol does."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from python_ops.storage import FileEntry

LOG_DIR = "_delta_log"
SIDECAR_DIR = f"{LOG_DIR}/_sidecars"
LAST_CHECKPOINT = "_last_checkpoint"

_COMMIT = re.compile(r"^(\d{20})\.json$")
_CHECKSUM = re.compile(r"^(\d{20})\.crc$")
_CLASSIC_CHECKPOINT = re.compile(r"^(\d{20})\.checkpoint\.parquet$")
_MULTIPART_CHECKPOINT = re.compile(r"^(\d{20})\.checkpoint\.(\d{10})\.(\d{10})\.parquet$")
_V2_CHECKPOINT = re.compile(r"^(\d{20})\.checkpoint\.([0-9a-fA-F-]{36})\.(json|parquet)$")
_COMPACTED = re.compile(r"^(\d{20})\.(\d{20})\.compacted\.json$")
# A writer's staged upload (object_store's local put writes "<name>#<n>", then links it into
# place); a process killed in between leaves it behind.
_STAGED = re.compile(r"^((\d{20})\..+|_last_checkpoint)#\d+$")
STAGED_MAX_AGE_MS = 3_600_000


class LogFileKind(StrEnum):
    """What a file in ``_delta_log`` is."""

    COMMIT = "commit"
    CHECKSUM = "checksum"
    CHECKPOINT = "checkpoint"
    COMPACTED = "compacted"
    STAGED = "staged"
    LAST_CHECKPOINT = "last_checkpoint"
    OTHER = "other"


@dataclass(frozen=True)
class LogFile:
    """One file of ``_delta_log`` with its parsed name.

    Attributes:
        name: File name inside ``_delta_log``.
        kind: Classification of the name.
        version: The table version the file belongs to (None for unversioned files).
        size_bytes: Size in bytes.
        modification_time_ms: Modification time, ms since the epoch.
        part: For multi-part checkpoints, this file's part number (1-based).
        num_parts: For checkpoints, the number of parts (1 for classic and v2 checkpoints).
        checkpoint_format: "classic", "multipart" or "v2" for checkpoints, else None.
    """

    name: str
    kind: LogFileKind
    version: int | None
    size_bytes: int
    modification_time_ms: int
    part: int = 1
    num_parts: int = 1
    checkpoint_format: str | None = None

    @property
    def path(self) -> str:
        """Path relative to the table root."""
        return f"{LOG_DIR}/{self.name}"


def classify(entry: FileEntry) -> LogFile:
    """Classify one entry of a ``_delta_log`` listing by its name.

    Args:
        entry: The listing entry (its ``name`` is used).

    Returns:
        The entry as a ``LogFile``.
    """
    name = entry.name
    size, mtime = entry.size_bytes, entry.modification_time_ms
    if m := _COMMIT.match(name):
        return LogFile(name, LogFileKind.COMMIT, int(m[1]), size, mtime)
    if m := _CHECKSUM.match(name):
        return LogFile(name, LogFileKind.CHECKSUM, int(m[1]), size, mtime)
    if m := _CLASSIC_CHECKPOINT.match(name):
        return LogFile(name, LogFileKind.CHECKPOINT, int(m[1]), size, mtime, 1, 1, "classic")
    if m := _MULTIPART_CHECKPOINT.match(name):
        return LogFile(
            name, LogFileKind.CHECKPOINT, int(m[1]), size, mtime, int(m[2]), int(m[3]), "multipart"
        )
    if m := _V2_CHECKPOINT.match(name):
        return LogFile(name, LogFileKind.CHECKPOINT, int(m[1]), size, mtime, 1, 1, "v2")
    if m := _COMPACTED.match(name):
        return LogFile(name, LogFileKind.COMPACTED, int(m[1]), size, mtime)
    if m := _STAGED.match(name):
        return LogFile(name, LogFileKind.STAGED, int(m[2]) if m[2] else None, size, mtime)
    if name == LAST_CHECKPOINT:
        return LogFile(name, LogFileKind.LAST_CHECKPOINT, None, size, mtime)
    return LogFile(name, LogFileKind.OTHER, None, size, mtime)


def complete_checkpoints(files: list[LogFile]) -> dict[int, list[LogFile]]:
    """Group checkpoint files by version, keeping only complete checkpoints.

    A classic or v2 checkpoint is one file; a multi-part checkpoint is complete when every part
    ``1..n`` of the same ``n`` is present. When a version has several complete checkpoints (for
    instance a classic and a v2 one), the v2 one is preferred, then classic, then multi-part.

    Args:
        files: Classified files of ``_delta_log``.

    Returns:
        Mapping from version to the files that make up one complete checkpoint of it.
    """
    by_version: dict[int, list[LogFile]] = {}
    for f in files:
        if f.kind is LogFileKind.CHECKPOINT and f.version is not None:
            by_version.setdefault(f.version, []).append(f)
    out: dict[int, list[LogFile]] = {}
    for version, group in by_version.items():
        v2 = sorted((f for f in group if f.checkpoint_format == "v2"), key=lambda f: f.name)
        classic = [f for f in group if f.checkpoint_format == "classic"]
        if v2:
            out[version] = [v2[0]]
            continue
        if classic:
            out[version] = classic
            continue
        parts_by_n: dict[int, dict[int, LogFile]] = {}
        for f in group:
            if f.checkpoint_format == "multipart":
                parts_by_n.setdefault(f.num_parts, {})[f.part] = f
        for n, parts in sorted(parts_by_n.items()):
            if set(parts) == set(range(1, n + 1)):
                out[version] = [parts[i] for i in range(1, n + 1)]
                break
    return out


def stale_staged_files(files: list[LogFile], *, latest_version: int, now_ms: int) -> list[LogFile]:
    """Staged uploads of killed writers that can never become part of the log.

    A staged file of a version the log already has lost its race (or its rename happened);
    any staged file older than an hour belongs to no live writer. A young staged file of the
    next version may be a commit in flight and is left alone.

    Args:
        files: Classified files of ``_delta_log``.
        latest_version: The newest committed version.
        now_ms: The current time in ms.

    Returns:
        The staged files that are safe to delete.
    """
    return [
        f
        for f in files
        if f.kind is LogFileKind.STAGED
        and (
            (f.version is not None and f.version <= latest_version)
            or now_ms - f.modification_time_ms > STAGED_MAX_AGE_MS
        )
    ]
