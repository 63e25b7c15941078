"""The adapter's maintenance bridge: Jinja-callable methods that run ``python_ops``.

``SparkDeltaAdapter`` (impl.py) extends this class with the engine, Python models and the Delta
DDL of incremental models; here is what maintenance needs from dbt: where a model's table is,
the ops (``vacuum``, ``optimize``, ``cleanup_logs``, ``table_health``) on a relation, the
post-hook (``maintain_after_build``), the run-operations (``maintain_models``,
``maintenance_report``, ``maintenance_selection``), the config check the materializations call
first, and the maintenance history (its location and its registration as a dbt source). Each
method is a thin call of ``python_ops``; failures become dbt errors or warnings.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from pathlib import Path
from typing import Any

from dbt.adapters.base.meta import available
from dbt.adapters.base.relation import BaseRelation
from dbt.adapters.spark.impl import SparkAdapter
from dbt_common.exceptions import DbtRuntimeError
from deltalake import DeltaTable

from dbt.adapters.sparkdelta import maintenance_events
from dbt.adapters.sparkdelta.config_aliases import warn_unsupported_configs
from dbt.adapters.sparkdelta.engine import (
    Engine,
    get_ops_engine,
    location_from_information,
)
from dbt.adapters.sparkdelta.history_stores import history_is_a_source, history_store
from dbt.adapters.sparkdelta.python_models import model_location
from python_ops.delta.recorded_retentions import policy_properties
from python_ops.errors import MaintenanceError
from python_ops.maintenance.config import parse_config
from python_ops.maintenance.registry import Status, check_ops, op_spec
from python_ops.maintenance.report import render_report, report_rows
from python_ops.maintenance.runner import Maintainer, OpOutcome
from python_ops.maintenance.targets import MAINTAINED, node_config, targets_from_nodes
from python_ops.maintenance.wording import files_text, size_text
from python_ops.ops.health import DEFAULT_SMALL_FILE_THRESHOLD_BYTES, table_health
from python_ops.spark_sessions import DeltaSql, Rows, session_sql
from python_ops.storage import delta_storage_options, is_remote

log = logging.getLogger(__name__)


# connections whose engine refused to register a Delta table (Spark without delta-spark)
_NO_DELTA_TABLES: set[tuple[Any, ...]] = set()
# (connection, schema) -> the schema's location in the catalog (None: it gives none)
_SCHEMA_LOCATIONS: dict[tuple[Any, ...], str | None] = {}


@dataclass
class _Located:
    """What locating models found besides their locations.

    Attributes:
        names: Table location to the relation name dbt's catalog knows it by.
        not_delta: Model alias to why it is not maintained (its table is not Delta).
        not_built: Model alias to why it is not maintained (it has no table yet).
    """

    names: dict[str, str] = dataclass_field(default_factory=dict)
    not_delta: dict[str, str] = dataclass_field(default_factory=dict)
    not_built: dict[str, str] = dataclass_field(default_factory=dict)

    def lines(self, width: int) -> str:
        """One 'not maintained' line per model left out, for the end of a printed table."""
        left_out = {**self.not_built, **self.not_delta}
        return "".join(
            f"\n{name:<{width}} not maintained: {reason}"
            for name, reason in sorted(left_out.items())
        )


def _has_delta_log(location: str) -> bool:
    if is_remote(location):
        return bool(
            DeltaTable.is_deltatable(location, storage_options=delta_storage_options(location))
        )
    return os.path.isdir(os.path.join(location, "_delta_log"))


class MaintenanceBridge(SparkAdapter):
    """dbt-spark's adapter with the maintenance methods (see the module docstring)."""

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
        creds = self.config.credentials
        return model_location(creds, schema, identifier, location_root=location_root)

    @available.parse_none
    def table_location(self, relation: BaseRelation) -> str | None:
        """The Delta location of an existing table, as the catalog reports it.

        Args:
            relation: The table.

        Returns:
            The normalised location, or None when the relation does not exist or has none.
        """
        # dbt's relation cache already holds SHOW TABLE EXTENDED output for listed schemas.
        cached = location_from_information(getattr(relation, "information", None))
        if cached is not None:
            return cached
        sql = f"show table extended in {relation.schema} like '{relation.identifier}'"
        try:
            _, table = self.execute(sql, fetch=True)
        except DbtRuntimeError:
            return None  # no such schema
        if len(table) == 0:
            return None  # no such table
        for row in table:
            if (location := location_from_information(row["information"])) is not None:
                return location
        # a catalog whose SHOW TABLE EXTENDED shows the table without its location
        try:
            _, table = self.execute(f"describe table extended {relation}", fetch=True)
        except DbtRuntimeError:
            return None
        for row in table:
            if str(row[0]).strip() == "Location" and row[1]:
                return location_from_information(f"Location: {row[1]}")
        return None

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
        threshold = int(small_file_threshold_bytes or DEFAULT_SMALL_FILE_THRESHOLD_BYTES)
        return self._run_op(
            relation,
            "table_health",
            lambda location: table_health(location, small_file_threshold_bytes=threshold),
        )

    # --- where the ops run (README, "Where maintenance runs") ---------------------------------

    def _session_engine(self) -> Engine | None:
        """The in-process engine of ``method: session`` (None for thrift, http, odbc)."""
        handle = self.connections.get_thread_connection().handle
        engine = getattr(getattr(handle, "handle", None), "engine", None)
        return engine if isinstance(engine, Engine) else None

    def _ops_spark(self) -> Any:
        """The Spark session the ops use: the connection's own, else the embedded ops engine.

        With thrift/http/odbc there is no session in this process: the ops get the process-wide
        embedded engine, which starts (once) only when an op really uses Spark.
        """
        engine = self._session_engine()
        if engine is not None:
            return engine.spark
        creds = self.config.credentials
        return get_ops_engine(dict(creds.server_side_parameters)).spark

    def _vacuum_engine(self) -> str:
        """Where VACUUM's selection runs: on the Spark the profile attaches to, else ``auto``.

        ``auto`` selects in this process (Arrow); an attached Spark (Connect or classic) is a
        cluster the user chose for the work, so the selection's DataFrame program runs there.
        """
        engine = self._session_engine()
        return "spark" if engine is not None and engine.mode == "attach" else "auto"

    def _connection_rows(self, statement: str) -> Rows:
        """Run a statement over dbt's connection (any thread) and return its rows as dicts."""

        def run() -> Rows:
            _, table = self.execute(statement, fetch=True)
            return [dict(zip(table.column_names, row, strict=True)) for row in table]

        with self._one_connection():
            return run()

    def _one_connection(self) -> AbstractContextManager[Any]:
        """This thread's dbt connection, opened for the block when it has none (a worker).

        A thread's connection may have been closed since (dbt releases a worker's connection
        after each statement block, and a failed statement closes it): it is re-armed in place
        to reopen on its next statement, never used closed ("Transport not open") and never
        released inside a block that must keep one session for its settings.
        """
        conn = self.connections.get_if_exists()
        if conn is not None:
            if conn.state != "open":
                self.connections.set_connection_name(conn.name)  # reopens on first use
            return nullcontext()
        return self.connection_named("sparkdelta maintenance")  # a maintenance worker thread

    def _delta_sql(self, names: Mapping[str, str] | None = None) -> DeltaSql:
        """Where Delta's own SQL runs: the connection's session, else dbt's connection.

        Whether it has Delta is asked once per engine (``DeltaSql.has_delta``).
        """
        engine = self._session_engine()
        if engine is not None:
            return session_sql(engine.spark).named(names or {})
        creds = self.config.credentials
        where = f"the {creds.method} connection to {creds.host}"
        return DeltaSql(
            self._connection_rows,
            where=where,
            key=self._connection_key(),
            names=names,
            session=self._one_connection,  # session settings and OPTIMIZE on one connection
        )

    def _run_op(
        self, relation: BaseRelation, op: str, call: Callable[[str], Any]
    ) -> dict[str, Any]:
        """Find the relation's Delta location, run one op on it, return its result as a dict.

        Raises:
            DbtRuntimeError: When the relation has no table, or with the op's own message.
        """
        location: str | None = self.table_location(relation)
        if location is None:
            raise DbtRuntimeError(
                f"{op}: {relation} has no table location; build the model first "
                "(views have no Delta table)."
            )
        try:
            with maintenance_events.python_ops_logs_to_dbt():
                result = call(location)
        except MaintenanceError as err:
            raise DbtRuntimeError(f"{op} of {relation}: {err}") from err
        return {"relation": str(relation), **result.to_dict()}

    def _invoke_op(
        self, op: str, relation: BaseRelation, options: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Run one registered op on a model's table with the caller's keyword options."""
        try:
            spec = op_spec(op)
        except MaintenanceError as err:
            raise DbtRuntimeError(str(err)) from err
        spark = self._ops_spark() if spec.needs_spark else None
        sql = self._delta_sql() if spec.takes_sql else None
        if op == "vacuum":
            options = {"engine": self._vacuum_engine(), **options}
        return self._run_op(
            relation,
            op,
            lambda location: spec.invoke(
                location,
                spark=spark,
                sql=sql.named({location: str(relation)}) if sql is not None else None,
                model=relation.identifier,
                **dict(options),
            ),
        )

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
        return self._invoke_op("vacuum", relation, options)

    @available.parse_none
    def cleanup_logs(self, relation: BaseRelation, **options: Any) -> dict[str, Any]:
        """Delete a model's expired Delta log files (``python_ops.ops.log_cleanup``).

        ``deleted_file_retention_hours`` and ``retention_days`` are recorded as the table's
        ``delta.deletedFileRetentionDuration`` / ``delta.logRetentionDuration`` first (real
        runs only), so every engine that touches the table follows the same policy.

        Args:
            relation: The model's relation.
            **options: The op's keyword arguments (``retention_days``, ``dry_run``, ``force``,
                ...) and ``deleted_file_retention_hours``.

        Returns:
            ``LogCleanupResult`` as a dict (with every selected file), plus ``relation``.

        Raises:
            DbtRuntimeError: With the op's message when it refuses or fails.
        """
        policy = policy_properties(
            log_retention_days=options.get("retention_days"),
            deleted_file_retention_hours=options.get("deleted_file_retention_hours"),
        )
        chosen = {k: v for k, v in options.items() if k != "deleted_file_retention_hours"}
        return self._invoke_op("cleanup_logs", relation, {**chosen, "record_policy": policy})

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
        return self._invoke_op("optimize", relation, options)

    # --- maintenance across models (post-hook and run-operations) -------------------------

    def _history_location(self, history: dict[str, Any]) -> str:
        """Where the history table lives: the var, else where a model of its name would go.

        That is ``location_root`` or the embedded warehouse, else (thrift, http, odbc, attach)
        the location the catalog gives the history's schema: ``<schema location>/<name>``, where
        the cluster would put a managed table of that name.

        Raises:
            DbtRuntimeError: When none of these gives a location.
        """
        location = history.get("location") or model_location(
            self.config.credentials, history["schema"], history["name"]
        )
        if location is None:
            schema_location = self._schema_location(str(history["schema"]))
            if schema_location is not None:
                location = f"{schema_location.rstrip('/')}/{str(history['name']).lower()}"
        if location is None:
            raise DbtRuntimeError(
                "maintenance history: set var 'maintenance_history_location' (the target has "
                f"no warehouse to put it in, and the catalog gives schema {history['schema']} "
                "no location)."
            )
        return str(location)

    def _schema_location(self, schema: str) -> str | None:
        """The catalog's location of a schema (``DESCRIBE SCHEMA EXTENDED``), asked once."""
        key = (*self._connection_key(), schema.lower())
        if key not in _SCHEMA_LOCATIONS:
            location = None
            try:
                rows = self._connection_rows(f"describe schema extended {schema}")
            except DbtRuntimeError:
                rows = []  # no such schema, or a catalog that does not answer this
            for row in rows:
                name, value = [*row.values(), None, None][:2]
                if str(name).strip().lower() == "location" and value:
                    location = location_from_information(f"Location: {value}")
            _SCHEMA_LOCATIONS[key] = location
        return _SCHEMA_LOCATIONS[key]

    def _maintainer(
        self,
        history: dict[str, Any],
        invocation_id: str,
        located: _Located,
        on_model: Callable[[int, int, str, list[OpOutcome]], None] | None = None,
    ) -> Maintainer:
        location = self._history_location(history)
        store = history_store(location)
        return Maintainer(
            spark=self._ops_spark(),
            sql=self._delta_sql(located.names),
            vacuum_engine=self._vacuum_engine(),
            history=store,
            invocation_id=str(invocation_id),
            on_model=on_model,
            log_failures=False,  # reported as dbt warnings (_warn_failures), with context
        )

    @available
    def files_text(self, count: Any, size_bytes: Any, noun: str = "file") -> str:
        """Files and their size for printing: ``12 files (4.56 MB)``, ``1 log file (512 B)``.

        Args:
            count: How many.
            size_bytes: Their bytes (in scaled units: B, KB, MB, GB, TB).
            noun: What they are.

        Returns:
            The text.
        """
        return files_text(int(count or 0), int(size_bytes or 0), noun)

    @available
    def size_text(self, size_bytes: Any) -> str:
        """A size for printing in scaled units: ``512 B``, ``12.3 KB``, ``4.56 MB``."""
        return size_text(int(size_bytes or 0))

    @available
    def validate_maintenance_config(self, model: Any) -> str:
        """Check a model's ``maintenance_*`` config before its SQL runs (the materializations).

        Args:
            model: The model node (``model`` in the materialization's context).

        Returns:
            '' (so that ``{{ }}`` renders nothing).

        Raises:
            DbtRuntimeError: For a misspelt key (naming the nearest valid one) or a bad value,
                naming the model, the key, the value and the fix; the table is not touched.
        """
        config = node_config(model)
        if config.get("materialized") not in MAINTAINED:
            return ""
        name = str(model.get("name") if isinstance(model, Mapping) else model.name)
        try:
            parse_config(name, config)
        except MaintenanceError as err:
            raise DbtRuntimeError(
                f"{err} The model was not built: its table is unchanged. Fix the setting in the "
                "model's config() or in dbt_project.yml."
            ) from err
        return ""

    @staticmethod
    def _warn_failures(outcomes: list[OpOutcome], node: Any = None) -> None:
        """One dbt warning per failed op of a model with ``on_error: warn``, with its reason."""
        for o in outcomes:
            if o.status is Status.FAILED and o.on_error != "fail":
                maintenance_events.warn(
                    f"maintenance {o.op} of model {o.model} failed (on_error: warn, so the "
                    f"model itself succeeded): {o.detail}",
                    node=node,
                )

    def _connection_key(self) -> tuple[Any, ...]:
        """The engine behind dbt's connection, for answers kept per connection."""
        c = self.config.credentials
        return ("dbt", str(c.method), c.host, c.port, c.cluster, c.endpoint, c.mode, c.connect_url)

    def _register_history(self, history: dict[str, Any]) -> None:
        """Make the history table queryable (``source('maintenance', ...)``) once it exists.

        Where the engine behind dbt's connection cannot read Delta tables (Spark without
        delta-spark), the history stays a Delta table at its location (delta-rs writes it),
        unregistered; that is found out once per connection.
        """
        location = self._history_location(history)
        if not DeltaTable.is_deltatable(location, storage_options=delta_storage_options(location)):
            return
        key = self._connection_key()
        if key in _NO_DELTA_TABLES:
            return
        try:
            self.execute(f"create schema if not exists {history['schema']}")
            self.execute(
                f"create table if not exists {history['schema']}.{history['name']} using delta "
                f"location '{location}'"
            )
        except DbtRuntimeError as err:
            _NO_DELTA_TABLES.add(key)
            first = str(err).strip().splitlines()[0][:200] if str(err).strip() else ""
            log.info("maintenance history at %s not registered in the catalog: %s", location, first)

    def set_relations_cache(
        self,
        relation_configs: Any,
        clear: bool = False,
        required_schemas: Any = None,
    ) -> None:
        """Fill dbt's relation cache (before run, build, test, show...), then the history source.

        This is the one adapter call every dbt command that runs nodes makes before the first
        one (unless ``--no-populate-cache``), so a model selecting from the history source works
        on the first build of a fresh warehouse.
        """
        super().set_relations_cache(
            relation_configs, clear=clear, required_schemas=required_schemas
        )
        self._ensure_history_source()
        warn_unsupported_configs(relation_configs)

    def _ensure_history_source(self) -> None:
        """Create (empty) and register the history table when the project declares it a source.

        A project that reads the history as ``source(...)`` must find the table before
        maintenance first writes to it. Only the source at the history's schema and name (vars
        ``maintenance_history_schema`` / ``_name``, read by the ``maintenance_history()`` macro
        as the post-hook does) triggers this; other projects get no table they did not ask for.
        """
        from dbt.contracts.graph.manifest import Manifest

        manifest = self.get_macro_resolver()
        if not isinstance(manifest, Manifest) or not manifest.sources:
            return
        history = dict(self.execute_macro("maintenance_history"))
        schema, name = str(history["schema"]), str(history["name"])
        if not history_is_a_source(manifest.sources.values(), schema, name):
            return
        if self.get_relation(None, schema, name) is not None:  # type: ignore[arg-type]
            return  # already in the catalog
        try:
            location = self._history_location(history)
            created = history_store(location).ensure_table()
        except (DbtRuntimeError, MaintenanceError) as err:
            log.info("maintenance history source %s.%s not created: %s", schema, name, err)
            return
        self._register_history(history)
        if created:
            log.info("created the empty maintenance history %s.%s at %s", schema, name, location)
        relation = self.Relation.create(
            schema=schema, identifier=name, type=self.Relation.get_relation_type.Table
        )
        if self.table_location(relation) is not None:
            self.cache_added(relation)

    def _declared_location(self, schema: str, alias: str, config: Mapping[str, Any]) -> str | None:
        """Where the model's ``location_root`` (or the profile's) puts its table; None if unset."""
        root = config.get("location_root")
        if root:
            return f"{str(root).rstrip('/')}/{alias}"
        creds = self.config.credentials
        if creds.location_root:
            return f"{creds.location_root.rstrip('/')}/{schema.lower()}/{alias.lower()}"
        return None

    def _targets(self, nodes: list[Any]) -> tuple[list[Any], dict[str, str], _Located]:
        """Maintained models with the locations dbt's connection reports for their tables.

        A table's location comes from the catalog behind dbt's connection (SHOW/DESCRIBE TABLE
        EXTENDED); for a table the catalog does not know, from the ``location_root`` the model
        (or the profile) declares, when a Delta table is there. Never a guess. Tables without a
        Delta log are left out with the reason (``_Located.not_delta``).
        """
        located = _Located()

        def locate(schema: str, alias: str, config: Mapping[str, Any]) -> str | None:
            relation = self.Relation.create(schema=schema, identifier=alias)
            location: str | None = self.table_location(relation)
            if location is not None:
                located.names[location] = str(relation)
            else:
                location = self._declared_location(schema, alias, config)
                if location is None or not _has_delta_log(location):
                    located.not_built[alias] = "not built yet (no table in the catalog)"
                    return None
            if not _has_delta_log(location):
                located.not_delta[alias] = f"not a Delta table (no _delta_log at {location})"
                return None
            return location

        try:
            targets, paths = targets_from_nodes(nodes, locate)
        except MaintenanceError as err:
            raise DbtRuntimeError(str(err)) from err
        return targets, paths, located

    @available
    def maintain_after_build(self, model: Any, invocation_id: str, history: dict[str, Any]) -> str:
        """Post-hook: run the maintenance that is due for the model just built.

        Args:
            model: The model node (``model`` in the hook's context).
            invocation_id: dbt's invocation id.
            history: ``{schema, name, location}`` of the maintenance history table.

        Returns:
            A one-line summary ('' when nothing ran).

        Raises:
            DbtRuntimeError: For a bad setting, or a failed op with ``on_error: fail``.
        """
        targets, _, located = self._targets([model])
        if not targets:
            reasons = list(located.not_delta.values())
            return f"skipped: {reasons[0]}" if reasons else ""
        try:
            maintainer = self._maintainer(history, invocation_id, located)
        except (DbtRuntimeError, MaintenanceError) as err:
            # e.g. no place for the history (a catalog that gives schemas no location): a setup
            # problem of maintenance, not of the model, so on_error decides as for a failed op
            if targets[0].config.on_error == "fail":
                raise
            maintenance_events.warn(
                f"maintenance of model {targets[0].config.model} did not run (on_error: warn, "
                f"so the model itself succeeded): {err}",
                node=model,
            )
            return "not run: maintenance could not start (see the warning)"
        with maintenance_events.python_ops_logs_to_dbt():
            outcomes = maintainer.maintain_model(targets[0])
        ran = [o for o in outcomes if o.ran]
        if ran:
            self._register_history(history)
        failed = [o for o in ran if o.status is Status.FAILED]
        if failed and targets[0].config.on_error == "fail":
            raise DbtRuntimeError(
                "; ".join(f"maintenance {o.op} of {o.model} failed: {o.detail}" for o in failed)
            )
        self._warn_failures(outcomes, node=model)
        return ", ".join(f"{o.op} {o.summary} in {o.duration_s:.1f} s" for o in ran)

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

        Raises:
            DbtRuntimeError: For a selection dbt rejects, or no manifest to select from.
        """
        from dbt.contracts.graph.manifest import Manifest
        from dbt.contracts.state import PreviousState

        from dbt.adapters.sparkdelta.selection import select_models

        manifest = self.get_macro_resolver()
        if not isinstance(manifest, Manifest):
            raise DbtRuntimeError("maintenance selection: dbt's manifest is not loaded")
        previous = None
        if state:
            root = Path(self.config.project_root)
            previous = PreviousState(
                state_path=Path(str(state)),
                target_path=root / self.config.target_path,
                project_root=root,
            )
        selection = select_models(
            manifest,
            select=select,
            exclude=exclude,
            selector=str(selector) if selector else None,
            selectors=getattr(self.config, "selectors", None),
            previous_state=previous,
        )
        return selection.to_dict()

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

        Raises:
            DbtRuntimeError: For bad arguments or settings.
        """
        try:
            op_names = check_ops(ops)
        except MaintenanceError as err:
            raise DbtRuntimeError(str(err)) from err
        targets, _, located = self._targets(nodes)
        label = op_names[0] if len(op_names) == 1 else "maintenance"

        def progress(done: int, total: int, name: str, outcomes: list[OpOutcome]) -> None:
            did = [f"{o.op} {o.summary}" for o in outcomes if o.ran]
            idle = [o for o in outcomes if not o.ran]
            words = "; ".join(did) or (idle[0].detail if idle else "nothing to do")
            maintenance_events.info(f"{label} {done}/{total} {name}: {words}")

        maintainer = self._maintainer(history or {}, invocation_id, located, on_model=progress)
        if targets:
            dry = " (dry run: nothing is deleted or written)" if dry_run else ""
            maintenance_events.info(
                f"{label}: {len(targets)} model(s) on {int(threads)} thread(s){dry}"
            )
        try:
            with maintenance_events.python_ops_logs_to_dbt():
                run = maintainer.maintain(
                    targets,
                    ops=op_names,
                    only_due=only_due,
                    dry_run=dry_run,
                    retention_hours=retention_hours,
                    threads=int(threads),
                    time_budget_s=time_budget_s,
                )
        except MaintenanceError as err:  # a bad argument, refused before any op ran
            raise DbtRuntimeError(str(err)) from err
        self._register_history(history or {})
        self._warn_failures(list(run.outcomes))
        table = run.table() + located.lines(28)
        return {
            **run.to_dict(),
            "table": table,
            "not_delta": dict(located.not_delta),
            "not_built": dict(located.not_built),
        }

    @available
    def maintenance_report(
        self,
        nodes: list[Any],
        history: dict[str, Any] | None = None,
    ) -> str:
        """Per model: health, reclaimable bytes, last run of each op; as a printed table."""
        chosen, _, located = self._targets(nodes)
        store = history_store(self._history_location(history or {}))
        rows = report_rows(
            chosen, spark=self._ops_spark(), history=store, vacuum_engine=self._vacuum_engine()
        )
        return render_report(rows) + located.lines(26)
