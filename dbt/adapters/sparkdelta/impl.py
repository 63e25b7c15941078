"""The adapter: the maintenance bridge, the engine, Python models, incremental models' DDL.

``SparkDeltaAdapter`` extends ``catalog_stats.CatalogStats`` (dbt-spark's adapter with the
maintenance bridge's methods and maintenance stats in ``dbt docs``) with the embedded engine,
Python models on the session, and the Delta DDL and partition helpers of incremental models.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Mapping
from typing import Any

from dbt.adapters.base.meta import available
from dbt.adapters.base.relation import BaseRelation
from dbt.adapters.spark.column import SparkColumn
from dbt.adapters.spark.impl import SparkConfig
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.sparkdelta import incremental
from dbt.adapters.sparkdelta.catalog_stats import CatalogStats
from dbt.adapters.sparkdelta.clustering import ClusteringMethods
from dbt.adapters.sparkdelta.connections import SparkDeltaConnectionManager
from dbt.adapters.sparkdelta.engines import EmbeddedEngine
from dbt.adapters.sparkdelta.incremental import string_literal
from dbt.adapters.sparkdelta.python_models import SessionPythonJobHelper
from python_ops.errors import TableNotFoundError
from python_ops.maintenance import (
    KEYS,
    TableDocs,
    add_nullable_columns,
    open_storage,
    read_snapshot,
    set_comments,
)

log = logging.getLogger(__name__)

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


# dbt-spark's model configs plus every maintenance key, declared so that dbt accepts them as
# adapter configs. The keys come from ``python_ops.maintenance.config.KEYS`` (declared once,
# with their types and defaults in ``MaintenanceConfig``); values are validated by
# ``parse_config``, once per model, so here every key is ``Any`` and unset by default.
SparkDeltaConfig: type[SparkConfig] = dataclasses.make_dataclass(
    "SparkDeltaConfig",
    [(key, Any, dataclasses.field(default=None)) for key in sorted(KEYS)],
    bases=(SparkConfig,),
)


class SparkDeltaAdapter(ClusteringMethods, CatalogStats):
    """dbt-spark with an embedded engine, Python models on the session, and maintenance ops."""

    ConnectionManager = SparkDeltaConnectionManager
    AdapterSpecificConfigs = SparkDeltaConfig

    @property
    def default_python_submission_method(self) -> str:  # noqa: D102
        return "session"

    @property
    def python_submission_helpers(self) -> dict[str, Any]:  # noqa: D102
        return {"session": SessionPythonJobHelper}

    def get_columns_in_relation(self, relation: BaseRelation) -> list[SparkColumn]:
        """Columns from ``DESCRIBE``; from the Delta log when the catalog has none.

        A table re-registered in a new embedded session has no column list in the catalog
        (so that its schema can never go stale); its schema is read from its Delta log.
        """
        columns: list[SparkColumn] = super().get_columns_in_relation(relation)
        if columns or relation.type == "view":
            return columns
        location = self.table_location(relation)
        if location is None:
            return columns
        try:
            fields = read_snapshot(location).metadata.schema_fields()
        except TableNotFoundError:
            return columns
        return [
            SparkColumn(
                table_database=None,
                table_schema=relation.schema,
                table_name=relation.identifier,
                table_type=relation.type,
                table_owner="",
                table_stats=None,
                column=field["name"],
                column_index=index,
                dtype=spark_type_name(field["type"]),
            )
            for index, field in enumerate(fields)
        ]

    # --- what the embedded engine lacks for dbt's incremental strategies ------------------

    def _embedded_engine(self) -> EmbeddedEngine | None:
        handle = self.connections.get_thread_connection().handle
        engine = getattr(getattr(handle, "handle", None), "engine", None)
        return engine if isinstance(engine, EmbeddedEngine) else None

    @available
    def is_embedded(self) -> bool:
        """True when this connection runs on the embedded Sail engine."""
        return self._embedded_engine() is not None

    def _source_partitions(
        self, source: BaseRelation, columns: list[str]
    ) -> list[tuple[str | None, ...]]:
        _, table = self.execute(incremental.distinct_values_sql(str(source), columns), fetch=True)
        return incremental.parse_partitions((str(row[0]) for row in table), len(columns))

    def _relation_location(self, relation: BaseRelation, op: str) -> str:
        location: str | None = self.table_location(relation)
        if location is None:
            raise DbtRuntimeError(f"{op}: {relation} has no table location")
        return location

    @available.parse_none
    def replace_where_predicate(
        self, source: BaseRelation, target: BaseRelation, partition_by: Any
    ) -> str | None:
        """The predicate selecting the target partitions that ``source`` holds rows for.

        ``insert into <target> replace where <predicate> select ... from <source>`` is Delta's
        dynamic partition overwrite (what ``insert_overwrite`` means with ``partition_by``).

        Args:
            source: The relation with the new rows (the model's temp view).
            target: The existing Delta table (gives the partition columns' types).
            partition_by: The model's ``partition_by`` config.

        Returns:
            The predicate, or None when ``source`` is empty (nothing is replaced).
        """
        columns = incremental.partition_columns(partition_by)
        types = {c.name.lower(): c.dtype for c in self.get_columns_in_relation(target)}
        missing = [c for c in columns if c.lower() not in types]
        if missing:
            raise DbtRuntimeError(
                f"insert_overwrite: partition column(s) {missing} are not columns of {target}"
            )
        partitions = self._source_partitions(source, columns)
        return incremental.replace_where_predicate(
            columns, [types[c.lower()] for c in columns], partitions
        )

    @available.parse_none
    def stale_partition_files(
        self, source: BaseRelation, target: BaseRelation, partition_by: Any
    ) -> list[str]:
        """Files of the (non-Delta) target in the partitions ``source`` holds rows for.

        Listed *before* the new rows are inserted and deleted after (``delete_table_files``),
        so a failed insert never loses the partitions' old rows.

        Returns:
            Paths relative to the table location.
        """
        columns = incremental.partition_columns(partition_by)
        partitions = self._source_partitions(source, columns)
        if not partitions:
            return []
        storage = open_storage(self._relation_location(target, "insert_overwrite"))
        files = [entry.path for entry in storage.list_tree() if not entry.is_dir]
        return incremental.stale_partition_files(files, columns, partitions)

    @available.parse_none
    def delete_table_files(self, target: BaseRelation, files: list[str]) -> None:
        """Delete data files of a (non-Delta) table, then its emptied partition directories.

        Raises:
            DbtRuntimeError: When some file could not be deleted.
        """
        if not files:
            return
        storage = open_storage(self._relation_location(target, "insert_overwrite"))
        failed = storage.delete_files(list(files))
        if failed:
            raise DbtRuntimeError(
                f"insert_overwrite of {target}: could not delete {len(failed)} replaced "
                f"file(s), e.g. {failed[0]}; the table holds both old and new rows of them"
            )
        for directory in sorted({f.rsplit("/", 1)[0] for f in files if "/" in f}, reverse=True):
            storage.delete_dir(directory)

    @available.parse_none
    def delta_add_columns(self, relation: BaseRelation, columns: list[Any]) -> None:
        """Add nullable columns to a Delta table through its log (Delta schema evolution).

        Args:
            relation: The Delta table.
            columns: dbt ``Column`` objects (``name``, ``data_type``).

        Raises:
            DbtRuntimeError: For a type that cannot be added this way.
        """
        location = self._relation_location(relation, "on_schema_change")
        try:
            fields = [
                (str(c.name).strip("`"), incremental.delta_field_type(c.data_type)) for c in columns
            ]
            add_nullable_columns(location, fields)
        except ValueError as err:
            raise DbtRuntimeError(f"on_schema_change of {relation}: {err}") from err
        engine = self._embedded_engine()
        if engine is not None and relation.schema and relation.identifier:
            engine.refresh_table(relation.schema, relation.identifier, location)

    @available.parse_none
    def delta_set_comments(
        self,
        relation: BaseRelation,
        description: str | None = None,
        column_comments: Mapping[str, str] | None = None,
    ) -> None:
        """Record docs in a Delta table's log: table description and column ``comment``s.

        Args:
            relation: The Delta table.
            description: The table description (None leaves it as it is).
            column_comments: Column name -> description (case-insensitive names).
        """
        location = self._relation_location(relation, "persist_docs")
        docs = set_comments(location, description, column_comments)
        engine = self._embedded_engine()
        if engine is not None and relation.schema and relation.identifier:
            engine.refresh_table(
                relation.schema, relation.identifier, location, **registration_ddl(docs)
            )
