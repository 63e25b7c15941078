"""Pieces of dbt's incremental strategies that the embedded engine (Sail 0.7) lacks.

Plain functions on values (no dbt, no Spark): the adapter feeds them what it read and runs
the SQL or storage calls they describe.

- Dynamic partition overwrite (``insert_overwrite`` / ``microbatch`` with ``partition_by``):
  Sail refuses ``INSERT OVERWRITE ... PARTITION`` and the ``partitionOverwriteMode`` setting.
  On Delta the same result is ``INSERT INTO t REPLACE WHERE <the partitions the new rows hold>``
  (``replace_where_predicate``); on a Parquet table the new rows are inserted and the files of
  the replaced partitions are deleted afterwards (``stale_partition_files``).
- Added columns (``on_schema_change``): Sail refuses ``ALTER TABLE ... ADD COLUMNS``; Delta
  schema evolution through the log does it (``delta_field_type``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any
from urllib.parse import unquote

from python_ops.maintenance import TableDocs

HIVE_NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"

_DELTA_PRIMITIVES = {
    "string": "string",
    "varchar": "string",
    "char": "string",
    "bigint": "long",
    "long": "long",
    "int": "integer",
    "integer": "integer",
    "smallint": "short",
    "short": "short",
    "tinyint": "byte",
    "byte": "byte",
    "float": "float",
    "real": "float",
    "double": "double",
    "boolean": "boolean",
    "binary": "binary",
    "date": "date",
    "timestamp": "timestamp",
    "timestamp_ltz": "timestamp",
    "timestamp_ntz": "timestamp_ntz",
}
_DECIMAL = re.compile(r"^(?:decimal|numeric)\s*(?:\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?$")


def partition_columns(partition_by: str | Sequence[str] | None) -> list[str]:
    """A model's ``partition_by`` config as a list of bare column names."""
    if not partition_by:
        return []
    names = [partition_by] if isinstance(partition_by, str) else list(partition_by)
    return [name.strip().strip("`") for name in names]


def quote_identifier(name: str) -> str:
    """``name`` as a Spark SQL identifier in backticks."""
    return "`" + name.replace("`", "``") + "`"


def string_literal(value: str) -> str:
    """``value`` as a Spark SQL string literal (backslash escapes, as Spark parses them)."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def distinct_values_sql(source: str, columns: Sequence[str]) -> str:
    """SQL giving one JSON object per distinct partition of ``source``: ``{"c0": "<text>"}``.

    Values are cast to strings (exact for every partition type) and keyed by position; a null
    value is left out of its object (``to_json`` drops nulls).
    """
    fields = ", ".join(
        f"'c{i}', cast({quote_identifier(col)} as string)" for i, col in enumerate(columns)
    )
    return f"select distinct to_json(named_struct({fields})) as partition_json from {source}"


def parse_partitions(rows: Iterable[str], width: int) -> list[tuple[str | None, ...]]:
    """The partitions of ``distinct_values_sql`` rows, as tuples of strings (None for null)."""
    out = []
    for row in rows:
        record = json.loads(row)
        out.append(tuple(record.get(f"c{i}") for i in range(width)))
    return sorted(set(out), key=lambda p: tuple((v is None, v or "") for v in p))


def replace_where_predicate(
    columns: Sequence[str], types: Sequence[str], partitions: Sequence[tuple[str | None, ...]]
) -> str | None:
    """The predicate that selects exactly ``partitions`` (None when there are none).

    Args:
        columns: Partition column names.
        types: Their Spark SQL types, in the same order (each literal is cast to its type).
        partitions: The partitions to select, as from ``parse_partitions``.

    Returns:
        ``(a = cast('1' as int) and b is null) or (...)``, or None for no partitions.
    """
    if not partitions:
        return None
    terms = []
    for values in partitions:
        parts = [
            f"{quote_identifier(col)} is null"
            if value is None
            else f"{quote_identifier(col)} = cast({string_literal(value)} as {dtype})"
            for col, dtype, value in zip(columns, types, values, strict=True)
        ]
        terms.append("(" + " and ".join(parts) + ")")
    return " or ".join(terms)


def stale_partition_files(
    files: Iterable[str], columns: Sequence[str], partitions: Sequence[tuple[str | None, ...]]
) -> list[str]:
    """The data files (paths relative to the table root) that lie in one of ``partitions``.

    A file matches when the ``column=value`` directories on its path (Hive layout, values
    URL-escaped, null as ``__HIVE_DEFAULT_PARTITION__``) name one of the partitions; hidden
    files and directories (``_``/``.`` prefixes) never match.
    """
    wanted = {tuple(v for v in p) for p in partitions}
    lowered = [c.lower() for c in columns]
    out = []
    for path in files:
        segments = path.split("/")
        if any(s.startswith(("_", ".")) for s in segments):
            continue
        found: dict[str, str | None] = {}
        for segment in segments[:-1]:
            key, sep, raw = segment.partition("=")
            if sep and key.lower() in lowered:
                value = unquote(raw)
                found[key.lower()] = None if value == HIVE_NULL_PARTITION else value
        if len(found) != len(lowered):
            continue
        if tuple(found[c] for c in lowered) in wanted:
            out.append(path)
    return sorted(out)


def delta_field_type(spark_type: str) -> str:
    """The Delta schema type of a Spark SQL column type (primitive and decimal types).

    Raises:
        ValueError: For a type that has no primitive Delta equivalent (arrays, maps, structs).
    """
    text = spark_type.strip().lower()
    if text in _DELTA_PRIMITIVES:
        return _DELTA_PRIMITIVES[text]
    if text.startswith(("varchar(", "char(")):
        return "string"
    match = _DECIMAL.match(text)
    if match:
        precision = match.group(1) or "10"
        scale = match.group(2) or "0"
        return f"decimal({precision},{scale})"
    raise ValueError(
        f"cannot add a column of type {spark_type!r} through Delta schema evolution here "
        "(only primitive and decimal types)"
    )


_SIMPLE_TYPES = {"long": "bigint", "integer": "int", "short": "smallint", "byte": "tinyint"}


def spark_type_name(delta_type: Any) -> str:
    """Render a Delta schema type (JSON) as a Spark SQL type string."""
    if isinstance(delta_type, str):
        return _SIMPLE_TYPES.get(delta_type, delta_type)
    kind = delta_type.get("type")
    if kind == "array":
        return f"array<{spark_type_name(delta_type['elementType'])}>"
    if kind == "map":
        key, value = (
            spark_type_name(delta_type["keyType"]),
            spark_type_name(delta_type["valueType"]),
        )
        return f"map<{key},{value}>"
    if kind == "struct":
        fields = ",".join(f"{f['name']}:{spark_type_name(f['type'])}" for f in delta_type["fields"])
        return f"struct<{fields}>"
    return json.dumps(delta_type)


def registration_ddl(docs: TableDocs) -> dict[str, str | None]:
    """Column list and comment to register a Delta table with, so the catalog shows its docs.

    Sail's catalog shows the columns (and comments) a table was registered with. For a
    partitioned table no column list is given (Sail refused one whose partition column types
    differed in representation); its columns are then read from the log.
    """
    if docs.partition_columns:
        return {"columns": None, "comment": docs.description}
    columns = []
    for field in docs.fields:
        column = f"`{field['name']}` {spark_type_name(field['type'])}"
        if not field.get("nullable", True):
            column += " not null"
        comment = (field.get("metadata") or {}).get("comment")
        if comment:
            column += f" comment {string_literal(str(comment))}"
        columns.append(column)
    return {"columns": ", ".join(columns), "comment": docs.description}
