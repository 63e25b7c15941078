"""The adapter's maintenance bridge: the Jinja-callable methods the maintenance macros call.

dbt collects ``@available`` methods from adapter classes only, so they are declared here, each
a one-line call of a small object the adapter holds:

- ``DbtConnection`` (dbt_connection.py): the engine behind dbt's connection, the ops' Spark
  session, where Delta's SQL runs, the catalog macros;
- ``TableLocator`` (locator.py): where a model's table is;
- ``TableOps`` (table_ops.py): one op on one relation (``vacuum``, ``optimize``...);
- ``HistoryCatalog`` (history_catalog.py): the history's store and its catalog registration;
- ``RunOperations`` (run_operations.py): the post-hook and the run-operations.

Besides, the config check the materializations call first and the text helpers of the macros.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

from dbt.adapters.base.meta import available
from dbt.adapters.base.relation import BaseRelation
from dbt.adapters.spark.impl import SparkAdapter

from dbt.adapters.sparkdelta import maintenance_events
from dbt.adapters.sparkdelta.build_check import check_before_build
from dbt.adapters.sparkdelta.config_aliases import warn_unsupported_configs
from dbt.adapters.sparkdelta.config_preflight import preflight_messages
from dbt.adapters.sparkdelta.dbt_connection import DbtConnection
from dbt.adapters.sparkdelta.history_catalog import HistoryCatalog
from dbt.adapters.sparkdelta.locator import TableLocator, cached_relation
from dbt.adapters.sparkdelta.run_operations import RunOperations
from dbt.adapters.sparkdelta.table_ops import TableOps
from python_ops.maintenance.wording import files_text, size_text


class MaintenanceBridge(SparkAdapter):
    """dbt-spark's adapter with the maintenance methods (see the module docstring)."""

    @cached_property
    def maintenance_connection(self) -> DbtConnection:
        """The connection as the maintenance objects use it."""
        return DbtConnection(self)

    @cached_property
    def locator(self) -> TableLocator:
        """Where models' tables are."""
        return TableLocator(self, self.maintenance_connection)

    @cached_property
    def table_ops(self) -> TableOps:
        """One op on one relation."""
        return TableOps(self.maintenance_connection, self.locator)

    @cached_property
    def history_catalog(self) -> HistoryCatalog:
        """The maintenance history's store and registration."""
        return HistoryCatalog(self, self.maintenance_connection, self.locator)

    @cached_property
    def run_operations(self) -> RunOperations:
        """The post-hook and the run-operations."""
        return RunOperations(self, self.maintenance_connection, self.locator, self.history_catalog)

    # --- where tables are ---------------------------------------------------------------------

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
        return self.locator.model_location(schema, identifier, location_root)

    @available.parse_none
    def table_location(self, relation: BaseRelation) -> str | None:
        """The Delta location of an existing table, as the catalog reports it.

        Args:
            relation: The table.

        Returns:
            The normalised location, or None when the relation does not exist or has none.
        """
        return self.locator.table_location(relation)

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
            ``TableHealth`` as a dict, plus ``relation``.

        Raises:
            DbtRuntimeError: When the relation has no Delta table or its log cannot be read.
        """
        return self.table_ops.health(relation, small_file_threshold_bytes)

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
        return self.table_ops.invoke("vacuum", relation, options)

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
        return self.table_ops.cleanup_logs(relation, options)

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
        return self.table_ops.invoke("optimize", relation, options)

    # --- across models (post-hook and run-operations) ------------------------------------------

    @available
    def maintain_after_build(self, model: Any, invocation_id: str, history: dict[str, Any]) -> str:
        """Post-hook: run the maintenance that is due for the model just built (``RunOperations``).

        Args:
            model: The model node (``model`` in the hook's context).
            invocation_id: dbt's invocation id.
            history: ``{schema, name, location}`` of the maintenance history table.

        Returns:
            A one-line summary ('' when nothing ran).
        """
        return self.run_operations.after_build(model, invocation_id, history)

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
        return self.run_operations.selection(select, exclude, selector, state)

    @available
    def maintain_models(
        self,
        nodes: list[Any],
        ops: Any = None,
        only_due: bool = False,
        dry_run: bool = False,
        retention_hours: float | None = None,
        threads: int = 1,
        time_budget_s: float | None = None,
        invocation_id: str = "",
        history: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Run ops on the given models (``vacuum_all`` and its siblings, after the selection).

        Returns:
            The run as a dict, plus ``table`` (the printed per-model table).
        """
        return self.run_operations.maintain(
            nodes,
            ops=ops,
            only_due=only_due,
            dry_run=dry_run,
            retention_hours=retention_hours,
            threads=int(threads),
            time_budget_s=time_budget_s,
            invocation_id=invocation_id,
            history=history or {},
        )

    @available
    def maintenance_report(self, nodes: list[Any], history: dict[str, Any] | None = None) -> str:
        """Per model: health, reclaimable bytes, last run of each op; as a printed table."""
        return self.run_operations.report(nodes, history or {})

    # --- the materializations' config check and the macros' text helpers -----------------------

    @available
    def validate_maintenance_config(self, model: Any) -> str:
        """Check a model's ``maintenance_*`` config before its SQL runs (the materializations).

        Args:
            model: The model node (``model`` in the materialization's context).

        Returns:
            '' (so that ``{{ }}`` renders nothing).

        Raises:
            DbtRuntimeError: For misspelt keys (naming the nearest valid one), bad values and a
                VACUUM retention Delta's check would refuse, all at once, naming the model, the
                key, the value and the fix; the table is not touched (``build_check``).
        """
        check_before_build(model, self.locator)
        return ""

    @available
    def files_text(self, count: Any, size_bytes: Any, noun: str = "file") -> str:
        """Files and their size for printing: ``12 files (4.56 MB)``, ``1 log file (512 B)``."""
        return files_text(int(count or 0), int(size_bytes or 0), noun)

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
        self.history_catalog.ensure_source()
        warn_unsupported_configs(relation_configs)
        for message in preflight_messages(relation_configs):
            maintenance_events.warn(message)
