"""Schema and docs edits of a Delta table through delta-rs: new nullable columns, comments.

dbt's incremental models add columns (``on_schema_change``) and ``persist_docs`` records the
table description and column comments; both are commits of the table's metadata, made here with
delta-rs so that the adapter never calls ``deltalake`` itself. What the catalog should show
afterwards (the schema as written) is returned as plain data.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from python_ops.delta.writing.writer import open_delta


@dataclass(frozen=True)
class TableDocs:
    """A table's schema and docs as its log holds them after an edit.

    Attributes:
        fields: The schema's fields as Delta's JSON (``name``, ``type``, ``nullable``,
            ``metadata``).
        partition_columns: The partition columns.
        description: The table description, if any.
    """

    fields: tuple[dict[str, Any], ...]
    partition_columns: tuple[str, ...]
    description: str | None


def _docs(table: Any) -> TableDocs:
    metadata = table.metadata()
    return TableDocs(
        fields=tuple(json.loads(table.schema().to_json())["fields"]),
        partition_columns=tuple(metadata.partition_columns),
        description=metadata.description,
    )


def add_nullable_columns(location: str, columns: Sequence[tuple[str, str]]) -> TableDocs:
    """Add nullable columns to a Delta table (Delta schema evolution), one metadata commit.

    Args:
        location: The table.
        columns: (name, Delta primitive type name such as ``long`` or ``decimal(10,2)``).

    Returns:
        The schema and docs after the commit.

    Raises:
        ValueError: For a type name delta-rs does not know as a primitive type.
    """
    from deltalake import Field
    from deltalake.schema import PrimitiveType

    fields = [Field(name, PrimitiveType(kind), nullable=True) for name, kind in columns]
    table = open_delta(location)
    table.alter.add_columns(fields)
    return _docs(table)


def set_comments(
    location: str, description: str | None, column_comments: Mapping[str, str] | None
) -> TableDocs:
    """Record the table description and column ``comment``s in the table's log.

    Args:
        location: The table.
        description: The table description (None or '' leaves it as it is).
        column_comments: Column name -> comment; names match case-insensitively, unknown names
            are left out.

    Returns:
        The schema and docs after the commits.
    """
    table = open_delta(location)
    if description:
        table.alter.set_table_description(description)
    names = {field.name.lower(): field.name for field in table.schema().fields}
    for name, comment in (column_comments or {}).items():
        field = names.get(str(name).strip("`").lower())
        if field is not None:
            table.alter.set_column_metadata(field, {"comment": comment})
    return _docs(table)
