"""The adapter: one class, ``SparkDeltaAdapter``, dbt-spark's with what the macros call.

dbt collects ``@available`` methods from the adapter class only, so every method a macro calls is
declared here, each a call of a module that does the work: the maintenance macros' methods
(``maintenance_bridge.MaintenanceParts``: where tables are, one-table ops, the post-hook and the
run-operations), the liquid-clustering answers (``clustering``), maintenance stats in
``dbt docs`` (``catalog_stats``), the embedded engine, Python models on the session, and the
Delta DDL and partition helpers of incremental models (``incremental``).
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Iterable, Mapping
from functools import cached_property
from typing import Any

from dbt.adapters.base.meta import available
from dbt.adapters.base.relation import BaseRelation
from dbt.adapters.spark.column import SparkColumn
from dbt.adapters.spark.impl import SparkAdapter, SparkConfig
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.sparkdelta.bridge.history_catalog import flush_histories
from dbt.adapters.sparkdelta.bridge.locator import cached_relation
from dbt.adapters.sparkdelta.common import maintenance_events
from dbt.adapters.sparkdelta.configs.config_aliases import warn_unsupported_configs
from dbt.adapters.sparkdelta.configs.config_preflight import preflight_messages
from dbt.adapters.sparkdelta.configs.macro_arguments import unknown_arguments_text
from dbt.adapters.sparkdelta.connections import SparkDeltaConnectionManager
from dbt.adapters.sparkdelta.engines import EmbeddedEngine
from dbt.adapters.sparkdelta.materializing import clustering, incremental
from dbt.adapters.sparkdelta.materializing.build_check import check_before_build
from dbt.adapters.sparkdelta.materializing.incremental import registration_ddl, spark_type_name
from dbt.adapters.sparkdelta.operations.advisor_bridge import ProjectAdvisor
from dbt.adapters.sparkdelta.operations.catalog_stats import maintenance_stats
from dbt.adapters.sparkdelta.operations.maintenance_bridge import MaintenanceParts
from dbt.adapters.sparkdelta.operations.run_operations import CommandEnd
from dbt.adapters.sparkdelta.python_models import SessionPythonJobHelper
from python_ops.errors import TableNotFoundError
from python_ops.maintenance import (
    KEYS,
    add_nullable_columns,
    files_text,
    may_maintain,
    open_storage,
    read_snapshot,
    retention_text,
    set_comments,
    size_text,
)

log = logging.getLogger(__name__)

# dbt-spark's model configs plus every maintenance key, declared so that dbt accepts them as
# adapter configs. The keys come from ``python_ops.maintenance.configuration.config.KEYS``
# (declared once, with their types and defaults in ``MaintenanceConfig``); values are validated by
# ``parse_config``, once per model, so here every key is ``Any`` and unset by default.
SparkDeltaConfig: type[SparkConfig] = dataclasses.make_dataclass(
    "SparkDeltaConfig",
    [(key, Any, dataclasses.field(default=None)) for key in sorted(KEYS)],
    bases=(SparkConfig,),
)


class SparkDeltaAdapter(SparkAdapter):
    """dbt-spark with an embedded engine, Python models on the session, and maintenance ops."""

    ConnectionManager = SparkDeltaConnectionManager
    AdapterSpecificConfigs = SparkDeltaConfig

    @cached_property
    def maintenance(self) -> MaintenanceParts:
        """The maintenance objects the macros' methods call (built once per adapter)."""
        return MaintenanceParts(self)

    def cleanup_connections(self) -> None:
        """At the end of a dbt command: first what its post-hooks left for it, if any ran.

        The history rows the hooks kept (their skips): the hooks' cost, in their line.
        """
        started, cpu = time.perf_counter(), time.thread_time()
        rows = flush_histories()
        if "maintenance" in self.__dict__:  # built: this command ran maintenance (post-hooks)
            end = CommandEnd(rows, time.perf_counter() - started, time.thread_time() - cpu)
            self.maintenance.run_operations.report_hook_times(end)
        maintenance_events.release_python_ops_logs()  # held by the post-hooks, if any ran
        super().cleanup_connections()

    @property
    def default_python_submission_method(self) -> str:
        """Python models run on the adapter's own session."""
        return "session"

    @property
    def python_submission_helpers(self) -> dict[str, Any]:
        """The one submission method, ``session`` (``SessionPythonJobHelper``)."""
        return {"session": SessionPythonJobHelper}

    def get_relation(self, database: str, schema: str, identifier: str) -> BaseRelation | None:
        """The relation by name: by key in dbt's relation cache when it holds the schema.

        dbt's own scans every cached relation of the schema on each call (each model's
        materialization and post-hook call it): quadratic in the number of models.
        """
        if not self.Relation.get_default_include_policy().database:
            database = None  # type: ignore[assignment]
        answered, relation = cached_relation(self, database, schema, identifier)
        if answered:
            return relation
        found: BaseRelation | None = super().get_relation(database, schema, identifier)
        return found

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

    # --- where tables are ---------------------------------------------------------------------

    @available
    def model_location(
        self, schema: str, identifier: str, location_root: str | None = None
    ) -> str | None:
        """Where a model's table is created (None: the cluster's metastore decides).

        Args:
            schema: The model's schema.
            identifier: The model's alias.
            location_root: The model's ``location_root`` config, if set.

        Returns:
            ``<location_root>/<alias>``, else the engine's managed location, else None.
        """
        return self.maintenance.locator.model_location(schema, identifier, location_root)

    @available.parse_none
    def table_location(self, relation: BaseRelation) -> str | None:
        """The Delta location of an existing table, as the catalog reports it.

        Args:
            relation: The table.

        Returns:
            The normalised location, or None when the relation does not exist or has none.
        """
        return self.maintenance.locator.table_location(relation)

    # --- one op on one model's table (the *_table macros) --------------------------------------

    @available.parse_none
    def table_health(
        self, relation: BaseRelation, small_file_threshold_bytes: int | None = None
    ) -> dict[str, Any]:
        """Health of a model's Delta table, read from its log (see ``python_ops.ops.health``).

        Args:
            relation: The model's relation.
            small_file_threshold_bytes: Files below this size count as small (default 32 MiB).

        Returns:
            ``TableHealth`` as a dict, plus ``relation``; for a relation without a table,
            ``relation`` and ``missing`` (the catalog knows it, its files are gone) or
            ``not_built`` (never built), each the sentence to print.

        Raises:
            DbtRuntimeError: When the table's log cannot be read.
        """
        return self.maintenance.table_ops.health(relation, small_file_threshold_bytes)

    @available.parse_none
    def vacuum(self, relation: BaseRelation, **options: Any) -> dict[str, Any]:
        """VACUUM a model's Delta table (``python_ops.ops.vacuum.vacuum``); a dry run by default.

        Args:
            relation: The model's relation.
            **options: The op's keyword arguments (``retention_hours``, ``dry_run``,
                ``partition_filter``, ``allow_short_retention``, ...).

        Returns:
            ``VacuumResult`` as a dict (with every selected path), plus ``relation``.

        Raises:
            DbtRuntimeError: With the op's message when it refuses or fails, or for an option
                the op does not take.
        """
        return self.maintenance.table_ops.invoke("vacuum", relation, options)

    @available.parse_none
    def cleanup_logs(self, relation: BaseRelation, **options: Any) -> dict[str, Any]:
        """Delete a model's expired Delta log files (``python_ops.ops.log_cleanup``).

        Args:
            relation: The model's relation.
            **options: The op's keyword arguments (``retention_days``, ``dry_run``, ``force``,
                ...) and ``deleted_file_retention_hours``.

        Returns:
            ``LogCleanupResult`` as a dict (with every selected file), plus ``relation``.

        Raises:
            DbtRuntimeError: With the op's message when it refuses or fails.
        """
        return self.maintenance.table_ops.cleanup_logs(relation, options)

    @available.parse_none
    def optimize(self, relation: BaseRelation, **options: Any) -> dict[str, Any]:
        """OPTIMIZE a model's Delta table (``python_ops.ops.optimize.optimize``).

        Args:
            relation: The model's relation.
            **options: The op's keyword arguments (``zorder_by``, ``where``, ``full``,
                ``target_size_bytes``, ``min_small_files``, ``dry_run``, ...).

        Returns:
            ``OptimizeResult`` as a dict, plus ``relation``.

        Raises:
            DbtRuntimeError: With the op's message when it refuses or fails.
        """
        return self.maintenance.table_ops.invoke("optimize", relation, options)

    # --- across models (post-hook and run-operations) ------------------------------------------

    @available
    def maintain_after_build(self, model: Any, invocation_id: str, history: Any) -> str:
        """Post-hook: run the maintenance that is due for the model just built (``RunOperations``).

        Args:
            model: The model node (``model`` in the hook's context).
            invocation_id: dbt's invocation id.
            history: ``{schema, name, location}`` of the maintenance history table, or the
                ``maintenance_history`` macro uncalled (called once per invocation).

        Returns:
            A one-line summary ('' when nothing ran).
        """
        return self.maintenance.run_operations.after_build(model, invocation_id, history)

    @available
    def maintenance_selection(
        self, select: Any = None, exclude: Any = None, selector: Any = None, state: Any = None
    ) -> dict[str, Any]:
        """Resolve a dbt selection with dbt's selector on this invocation's manifest.

        Args:
            select: dbt selection strings (as ``dbt ls --select``), a string or a list.
            exclude: dbt selection strings to leave out.
            selector: A selector of the project's ``selectors.yml`` (alone).
            state: An artifacts directory for ``state:`` methods.

        Returns:
            ``{unique_ids: [...] or None (everything), warnings: [...], selector}``.
        """
        return self.maintenance.run_operations.selection(select, exclude, selector, state)

    @available
    def maintain_models(
        self,
        nodes: list[Any],
        request: dict[str, Any],
        invocation_id: str = "",
        history: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Run ops on the given models (``vacuum_all`` and its siblings, after the selection).

        Args:
            nodes: The selected models.
            request: The run-operation's arguments: ``ops``, ``only_due``, ``dry_run``,
                ``retention_hours``, ``threads``, ``time_budget_s`` (checked once, by the
                session's ``RunOptions``).
            invocation_id: dbt's invocation.
            history: The maintenance history's settings.

        Returns:
            The run as a dict, plus ``table`` (the printed per-model table).
        """
        return self.maintenance.run_operations.maintain(
            nodes,
            ops=request.get("ops"),
            only_due=bool(request.get("only_due", False)),
            dry_run=bool(request.get("dry_run", False)),
            retention_hours=request.get("retention_hours"),
            threads=request.get("threads", 1),
            time_budget_s=request.get("time_budget_s"),
            invocation_id=invocation_id,
            history=history or {},
        )

    @available
    def maintenance_report(self, nodes: list[Any], history: dict[str, Any] | None = None) -> str:
        """Per model: health, reclaimable bytes, last run of each op; as a printed table."""
        return self.maintenance.run_operations.report(nodes, history or {})

    @available
    def maintenance_report_run(
        self, nodes: list[Any], history: dict[str, Any] | None = None, html: Any = None
    ) -> dict[str, Any]:
        """The report's text and the models it could not report (the run-operation then fails).

        Args:
            nodes: The selected model nodes (``maintenance_nodes``).
            history: The history's node (``maintenance_history``).
            html: A file to write the history as charts to, instead of the table (None).

        Returns:
            ``text`` and ``problems`` (``RunOperations.report_run``).
        """
        return self.maintenance.run_operations.report_run(nodes, history or {}, html)

    @available
    def maintenance_advise(self, nodes: list[Any], as_json: bool = False) -> str:
        """The advisor's clustering columns per model, with evidence and files per lookup.

        Args:
            nodes: The selected model nodes (``maintenance_nodes``).
            as_json: JSON instead of text.

        Returns:
            The advice (``python_ops.advise``), printed by ``maintenance_advise``.
        """
        ids = [str(n.get("unique_id") if isinstance(n, dict) else n.unique_id) for n in nodes]
        advisor = ProjectAdvisor(self, self.maintenance.locator)
        return advisor.advise(ids, as_json=bool(as_json))

    # --- the materializations' config check and the macros' text helpers -----------------------

    @available
    def validate_maintenance_config(self, model: Any, post_hook: Any = True) -> str:
        """Check a model's ``maintenance_*`` config before its SQL runs (the materializations).

        When the model's post-hook may maintain it (``post_hook``, the var
        ``maintenance_post_hook``, is on; the model has a post-hook and a maintenance op
        enabled), the build's start is recorded for it (``build_clock``); else nothing more is
        done, so a project without the post-hook pays only for the check.

        Args:
            model: The model node (``model`` in the materialization's context).
            post_hook: The var ``maintenance_post_hook`` (false: no post-hook maintains).

        Returns:
            '' (so that ``{{ }}`` renders nothing).

        Raises:
            DbtRuntimeError: For misspelt keys (naming the nearest valid one), bad values and a
                VACUUM retention Delta's check would refuse, all at once, naming the model, the
                key, the value and the fix; the table is not touched (``build_check``).
        """
        maintenance = check_before_build(model, self.maintenance.locator)
        if maintenance is not None and post_hook and may_maintain(maintenance):
            # the build starts now: its post-hook reads the commits made from here
            self.maintenance.run_operations.build_clock.start(model, maintenance)
        return ""

    @available
    def files_text(self, count: Any, size_bytes: Any, noun: str = "file") -> str:
        """Files and their size for printing: ``12 files (4.56 MB)``, ``1 log file (512 B)``."""
        return files_text(int(count or 0), int(size_bytes or 0), noun)

    @available
    def retention_text(self, hours: Any, requested: Any = None) -> str:
        """A VACUUM retention for printing, as every front end words it: ``168 h``, ``0.01 h``.

        Args:
            hours: The retention VACUUM applied (a result's ``retention_hours``).
            requested: The retention as requested before VACUUM rounded it to whole hours (a
                result's ``retention_requested_hours``); None: the table's own.

        Returns:
            E.g. ``0.01 h (rounded to 0 h, as Delta's VACUUM does)``.
        """
        if requested is None:
            return retention_text(float(hours))
        return retention_text(float(requested), applied=float(hours))

    @available
    def unknown_arguments_text(self, caller_name: str, given: Any, valid: Any) -> str:
        """A run-operation's refusal of arguments it does not take (``macro_arguments``).

        Args:
            caller_name: The run-operation.
            given: The arguments it does not take (the macro's ``kwargs``).
            valid: The arguments it takes.

        Returns:
            E.g. ``maintain_all: unknown argument 'selct' (did you mean 'select'?). ...``.
        """
        return unknown_arguments_text(caller_name, list(given), list(valid))

    @available
    def fail_run_operation(self, message: str) -> None:
        """End a run-operation that ran but failed: dbt's runtime error, exit 1.

        A failed op, a model refused for its config or a table missing is no compilation
        problem: ``exceptions.raise_compiler_error`` printed "Compilation Error in macro
        maintain_all ... > in macro run_maintenance" although nothing failed to compile.

        Raises:
            DbtRuntimeError: Always, with ``message``.
        """
        raise DbtRuntimeError(message)

    @available
    def size_text(self, size_bytes: Any) -> str:
        """A size for printing in scaled units: ``512 B``, ``12.3 KB``, ``4.56 MB``."""
        return size_text(int(size_bytes or 0))

    def set_relations_cache(
        self,
        relation_configs: Any,
        clear: bool = False,
        required_schemas: Any = None,
    ) -> None:
        """Fill dbt's relation cache (before run, build, test, show...), then the history source.

        This is the one adapter call every dbt command that runs nodes makes before the first
        one (unless ``--no-populate-cache``), so a model selecting from the history source works
        on the first build of a fresh warehouse; and the place to show every maintenance config
        problem of the project at once (``config_preflight``).
        """
        super().set_relations_cache(
            relation_configs, clear=clear, required_schemas=required_schemas
        )
        self.maintenance.history.ensure_source()
        warn_unsupported_configs(relation_configs)
        for message in preflight_messages(relation_configs):
            maintenance_events.warn(message)

    def _get_columns_for_catalog(self, relation: BaseRelation) -> Iterable[dict[str, Any]]:
        """dbt-spark's catalog rows of a relation, each with its maintenance stats."""
        stats = maintenance_stats(self, self.maintenance, relation)
        for column in super()._get_columns_for_catalog(relation):
            yield {**column, **stats}

    # --- liquid clustering (the materializations) ---------------------------------------------

    @available
    def clustering_columns(self, model: Any) -> list[str]:
        """The model's clustering columns (``maintenance_cluster_by``), validated.

        Raises:
            DbtRuntimeError: For a bad value, or clustering together with ``partition_by``.
        """
        return clustering.clustering_columns(model)

    @available
    def warn_cannot_cluster(self, model: Any) -> str:
        """Warn that this engine builds the model's table without clustering; renders ''."""
        return clustering.warn_cannot_cluster(model)

    @available
    def column_list(self, value: Any) -> list[str]:
        """``DESCRIBE DETAIL``'s ``clusteringColumns`` as a list, whatever the connection."""
        return clustering.column_list(value)
