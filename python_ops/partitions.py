"""Partition scope: which partition directories a SQL predicate on partition columns selects."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote

from python_ops.delta_log import Snapshot
from python_ops.errors import ConfigError
from python_ops.storage import Storage

NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"
_QUOTED = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
_IDENTIFIER = re.compile(r"`([^`]+)`|\b([A-Za-z_][A-Za-z0-9_]*)\b")


def referenced_columns(predicate: str, columns: list[str]) -> set[str]:
    """The table columns a predicate mentions (string literals ignored, case-insensitive).

    Args:
        predicate: A SQL boolean expression.
        columns: The table's column names.

    Returns:
        The subset of ``columns`` that appear in the predicate as identifiers.
    """
    by_lower = {c.lower(): c for c in columns}
    found = set()
    for quoted, bare in _IDENTIFIER.findall(_QUOTED.sub("''", predicate)):
        name = (quoted or bare).lower()
        if name in by_lower:
            found.add(by_lower[name])
    return found


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


def matching_partition_dirs(
    storage: Storage, snapshot: Snapshot, predicate: str, *, spark: Any
) -> list[str]:
    """The partition directories whose values satisfy ``predicate``.

    Args:
        storage: The table's storage.
        snapshot: The table's snapshot (schema and partition columns).
        predicate: SQL boolean expression over partition columns, e.g. ``day >= '2024-01-01'``.
        spark: The Spark session that evaluates the predicate.

    Returns:
        Leaf partition directories (relative paths) that match, possibly none.

    Raises:
        ConfigError: When the table is not partitioned, uses column mapping, or the predicate
            references anything but partition columns.
    """
    partition_columns = snapshot.metadata.partition_columns
    allowed = ", ".join(partition_columns) or "(none: the table is not partitioned)"
    if not partition_columns:
        raise ConfigError(
            setting="partition_filter",
            value=predicate,
            fix="The table is not partitioned; run without a partition filter.",
        )
    if snapshot.metadata.configuration.get("delta.columnMapping.mode", "none") != "none":
        raise ConfigError(
            setting="partition_filter",
            value=predicate,
            fix="The table uses column mapping, so its directories are not named by partition "
            "value; run without a partition filter.",
        )
    fields = {f["name"]: f for f in snapshot.metadata.schema_fields()}
    others = referenced_columns(predicate, list(fields)) - set(partition_columns)
    if others:
        raise ConfigError(
            setting="partition_filter",
            value=predicate,
            fix=f"It references non-partition column(s) {', '.join(sorted(others))}; only "
            f"partition columns may be used: {allowed}.",
        )
    rows = _discover(storage, partition_columns)
    if not rows:
        return []
    import pyarrow as pa
    from pyspark.sql import functions as F

    table = pa.table({name: [r[name] for r in rows] for name in ["_path", *partition_columns]})
    frame = spark.createDataFrame(table)
    typed = frame.select(
        "_path",
        *[F.col(f"`{c}`").cast(_cast_type(fields[c]["type"])).alias(c) for c in partition_columns],
    )
    try:
        matched = typed.where(F.expr(predicate)).select("_path").toArrow()
    except Exception as err:  # the engine's analysis error for a bad expression
        raise ConfigError(
            setting="partition_filter",
            value=predicate,
            fix=f"The engine cannot evaluate it ({str(err).splitlines()[0]}); write a SQL "
            f"condition over the partition columns: {allowed}.",
        ) from err
    return sorted(matched.column("_path").to_pylist())


def _cast_type(delta_type: Any) -> str:
    return delta_type if isinstance(delta_type, str) else "string"
