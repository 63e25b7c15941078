"""Typed results of the ops: frozen dataclasses with snake_case fields, JSON-friendly."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class TableHealth:
    """What a table's Delta log says about its state (no data file is listed or read).

    Attributes:
        location: The normalised table location.
        version: Current (latest) table version.
        checkpoint_version: Version of the newest complete checkpoint, None if there is none.
        num_files: Live data files.
        total_bytes: Sum of the live files' sizes.
        small_file_threshold_bytes: Files strictly smaller than this count as small.
        num_small_files: Live files below the threshold.
        small_file_share: ``num_small_files / num_files`` (0.0 for an empty table).
        num_partitions: Distinct partition-value combinations among live files.
        partition_columns: The table's partition columns.
        num_log_files: Files directly in ``_delta_log`` (commits, checkpoints, checksums ...).
        num_tombstones: ``remove`` actions not yet expired (newer than the retention cutoff).
        deleted_file_retention_hours: The retention used for ``num_tombstones``.
        read_ms: Time taken to read the log, in milliseconds.
    """

    location: str
    version: int
    checkpoint_version: int | None
    num_files: int
    total_bytes: int
    small_file_threshold_bytes: int
    num_small_files: int
    small_file_share: float
    num_partitions: int
    partition_columns: tuple[str, ...]
    num_log_files: int
    num_tombstones: int
    deleted_file_retention_hours: float
    read_ms: float

    def to_dict(self) -> dict[str, Any]:
        """The result as a plain dict (for JSON, Jinja and audit records)."""
        return to_dict(self)


def to_dict(result: Any) -> dict[str, Any]:
    """Convert a result dataclass into plain dicts/lists/scalars.

    Args:
        result: A dataclass instance from this module.

    Returns:
        A JSON-serialisable dict.
    """
    out: dict[str, Any] = dataclasses.asdict(result)
    for key, value in out.items():
        if isinstance(value, tuple):
            out[key] = list(value)
    return out
