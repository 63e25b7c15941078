"""Partition directories: which ``col=value`` directories a partition condition selects."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from python_ops.delta.state.snapshot import Snapshot
from python_ops.delta.table.partition_scope import parse_scope
from python_ops.errors import ConfigError
from python_ops.storage import Storage

NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"


def _discover(storage: Storage, partition_columns: tuple[str, ...]) -> list[dict[str, Any]]:
    """Walk ``col=value`` directories level by level; one row per leaf partition directory."""
    rows: list[dict[str, Any]] = [{"_path": ""}]
    for column in partition_columns:
        deeper = []
        for row in rows:
            for entry in storage.list_dir(row["_path"]):
                name = entry.path.rsplit("/", 1)[-1]
                if entry.is_dir and not entry.is_symlink and name.startswith(f"{column}="):
                    raw = unquote(name[len(column) + 1 :])
                    deeper.append(
                        {**row, "_path": entry.path, column: None if raw == NULL_PARTITION else raw}
                    )
        rows = deeper
    return rows


def matching_partition_dirs(storage: Storage, snapshot: Snapshot, predicate: str) -> list[str]:
    """The partition directories whose values satisfy ``predicate``.

    Args:
        storage: The table's storage.
        snapshot: The table's snapshot (schema and partition columns).
        predicate: SQL condition over partition columns
            (``python_ops.delta.table.partition_scope``).

    Returns:
        Leaf partition directories (relative paths) that match, possibly none.

    Raises:
        ConfigError: When the table is not partitioned, uses column mapping, or the condition
            is not a valid partition condition for it.
    """
    scope = parse_scope(
        predicate,
        partition_columns=snapshot.metadata.partition_columns,
        schema_fields=snapshot.metadata.schema_fields(),
        setting="partition_filter",
    )
    if snapshot.metadata.configuration.get("delta.columnMapping.mode", "none") != "none":
        raise ConfigError(
            setting="partition_filter",
            value=predicate,
            fix="The table uses column mapping, so its directories are not named by partition "
            "value; run without a partition filter.",
        )
    rows = _discover(storage, snapshot.metadata.partition_columns)
    return sorted(row["_path"] for row in rows if scope.matches(row))
