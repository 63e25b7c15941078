"""The table's ``metaData`` and ``protocol`` actions, parsed and checked as Delta reads them.

``TableMetadata`` is a ``metaData`` action (schema, partition columns, properties) with what the
ops ask of it: physical column names under column mapping, and a refusal to rewrite a table
whose action has no schema. ``parse_protocol`` checks a ``protocol`` action's shape; which
features it enables is ``delta.table.protocol``'s.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from python_ops.delta.log.actions import optional_int, require_str
from python_ops.delta.log.json_text import loads
from python_ops.errors import DeltaLogError

# Delta's Metadata.schema for an action without schemaString: the empty struct
EMPTY_SCHEMA = '{"type":"struct","fields":[]}'


@dataclass(frozen=True)
class TableMetadata:
    """The table's ``metaData`` action.

    Attributes:
        table_id: The table's unique id.
        schema_string: The table schema as Delta's JSON schema string.
        partition_columns: Partition columns, in order.
        configuration: Table properties (``delta.*`` and user properties).
        schema_missing: True when the action has no ``schemaString`` (some old writers, and
            Delta's own test tables): read as an empty schema, as Delta reads it; the ops that
            rewrite data refuse such a table (see ``require_schema``).
    """

    table_id: str
    schema_string: str
    partition_columns: tuple[str, ...]
    configuration: dict[str, str]
    schema_missing: bool = False

    def require_schema(self, op: str, location: str) -> None:
        """Refuse a rewrite of a table whose ``metaData`` has no schema.

        Delta reads such a table with an empty schema, so a rewrite would write files without
        any column: every value would be lost. VACUUM, log cleanup and health need no schema.

        Args:
            op: The op, for the message.
            location: The table, for the message.

        Raises:
            DeltaLogError: When ``schemaString`` is missing.
        """
        if self.schema_missing:
            raise DeltaLogError(
                f"{location}: {op} refused: the table's metaData action has no schemaString, "
                "which Delta reads as an empty schema, so rewriting its files would drop every "
                "column. VACUUM and log cleanup work on it; give the table a schema (rewrite "
                "it with Delta) before compacting it."
            )

    def schema_fields(self) -> list[dict[str, Any]]:
        """The top-level fields of the schema (name, type, nullable, metadata)."""
        fields: list[dict[str, Any]] = json.loads(self.schema_string).get("fields", [])
        return fields

    def column_mapping_mode(self) -> str:
        """``delta.columnMapping.mode``: ``none`` (also when unset), ``name`` or ``id``."""
        return self.configuration.get("delta.columnMapping.mode", "none")

    def physical(self, columns: Iterable[str]) -> list[str]:
        """Top-level columns by the names the data files use (physical under column mapping).

        Args:
            columns: Logical (the table's) column names.

        Returns:
            Each column's physical name, in order; a name the schema lacks stays as it is.
        """
        by_logical = {logical: physical for physical, logical in self.logical_names().items()}
        return [by_logical.get(c, c) for c in columns]

    def logical_names(self) -> dict[str, str]:
        """Physical to logical top-level column names under column mapping (else empty).

        The log keys partition values by physical name (``col-<uuid>`` under column mapping);
        Delta's SQL takes logical names (``DELTA_NON_PARTITION_COLUMN_REFERENCE`` otherwise).
        """
        names = {}
        for column in self.schema_fields():
            physical = (column.get("metadata") or {}).get("delta.columnMapping.physicalName")
            if isinstance(physical, str):
                names[physical] = str(column["name"])
        return names


def _string_list(raw: Mapping[str, Any], name: str) -> None:
    value = raw.get(name)
    if value is not None and (
        not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value)
    ):
        raise DeltaLogError(f"malformed 'protocol' action: '{name}' must be a list of names")


def parse_protocol(raw: Mapping[str, Any]) -> dict[str, Any]:
    """A ``protocol`` action, checked (versions present, feature lists of strings).

    Raises:
        DeltaLogError: For a malformed action.
    """
    reader, writer = raw.get("minReaderVersion"), raw.get("minWriterVersion")
    if len(raw) == 2 and type(reader) is int and type(writer) is int and reader >= 0 <= writer:
        return dict(raw)  # the versions alone (most tables; every post-hook reads one): valid
    optional_int(raw, "minReaderVersion", "protocol", required=True)
    optional_int(raw, "minWriterVersion", "protocol", required=True)
    _string_list(raw, "readerFeatures")
    _string_list(raw, "writerFeatures")
    return {k: list(v) if isinstance(v, tuple) else v for k, v in raw.items()}


def parse_metadata(raw: Mapping[str, Any], where: str) -> TableMetadata:
    """A ``metaData`` action as ``TableMetadata`` (``where``: its file, for errors).

    Raises:
        DeltaLogError: For a malformed action.
    """
    try:
        config = raw.get("configuration") or {}
        if not isinstance(config, Mapping):  # parquet map -> list of pairs
            config = dict(config)
        missing = raw.get("schemaString") is None
        # Delta's Metadata.schema: a missing schemaString is the empty struct
        schema_string = EMPTY_SCHEMA if missing else require_str(raw, "schemaString", "metaData")
        schema = loads(schema_string)
        if not isinstance(schema, dict) or not isinstance(schema.get("fields"), list):
            raise DeltaLogError("malformed 'metaData' action: schemaString is not a struct schema")
        partition_columns = raw.get("partitionColumns")
        if not isinstance(partition_columns, (list, tuple)) or not all(
            isinstance(c, str) for c in partition_columns
        ):
            raise DeltaLogError(
                "malformed 'metaData' action: 'partitionColumns' must be a list of names"
            )
        if not all(isinstance(v, str) for v in config.values()):
            raise DeltaLogError("malformed 'metaData' action: configuration values must be strings")
        return TableMetadata(
            table_id=str(raw.get("id") or ""),
            schema_string=schema_string,
            partition_columns=tuple(partition_columns),
            configuration={str(k): str(v) for k, v in config.items()},
            schema_missing=missing,
        )
    except (TypeError, ValueError, DeltaLogError) as err:  # JSONDecodeError is a ValueError
        raise DeltaLogError(f"{where}: {err}") from err
