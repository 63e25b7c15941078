"""Where a model's table is, from inside dbt: the catalog first, then where the adapter puts it.

The rule of where the adapter places tables, and the one answer to "is a Delta table there", are
``python_ops.maintenance.locations`` (the CLI and Python models use the same); this object adds
what only dbt's connection knows: the location the catalog reports for a built table, and the
location it gives a schema (where the maintenance history goes on a cluster).

Every look-up costs the same whatever the project's size: a relation by name is one dict look-up
in dbt's relation cache (``cached_relation``; dbt's own ``get_relation`` scans every cached
relation of the schema per call), the embedded engine's tables are found in its catalog journal
(recorded from the statement that created them), and a table neither knows is asked for alone
(``SHOW TABLE EXTENDED ... LIKE '<name>'``). A schema is listed as a whole at most once, and
only on engines without a journal; when that listing fails (one broken table can fail it), its
models are located one by one, so a broken table is its own model's problem.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from dbt.adapters.base.relation import BaseRelation
from dbt.adapters.reference_keys import _ReferenceKey
from dbt.adapters.spark.impl import SparkAdapter
from dbt_common.exceptions import DbtRuntimeError
from dbt_common.invocation import get_invocation_id

from dbt.adapters.sparkdelta.dbt_connection import DbtConnection
from dbt.adapters.sparkdelta.engines import EmbeddedEngine, location_from_information
from python_ops.maintenance import (
    Invocations,
    MaintenanceConfig,
    ModelTarget,
    is_delta_table,
    normalize_location,
    placed_location,
    targets_from_nodes,
)


def cached_relation(
    adapter: SparkAdapter, database: str | None, schema: str, identifier: str
) -> tuple[bool, BaseRelation | None]:
    """A relation from dbt's cache by its key: one dict look-up, no scan of the schema.

    Args:
        adapter: The dbt adapter (its ``cache`` and quoting config).
        database: The relation's database (None on Spark).
        schema: Its schema.
        identifier: Its name.

    Returns:
        ``(True, relation or None)`` when the cache holds the schema (so it knows every relation
        of it); ``(False, None)`` when it cannot answer: the schema is not cached, or quoting
        makes names case-sensitive (dbt's own matching decides then).
    """
    quoting = adapter.config.quoting
    if quoting.get("schema") or quoting.get("identifier") or quoting.get("database"):
        return False, None
    cache = adapter.cache
    if not schema or not identifier or (database, schema) not in cache:
        return False, None
    key = _ReferenceKey(database.lower() if database else None, schema.lower(), identifier.lower())
    cached = cache.relations.get(key)  # a dict read: atomic, no lock needed
    return True, (cached.inner if cached is not None else None)


@dataclass(frozen=True)
class RelationName:
    """A table's relation, made and rendered only when its name is asked for (``str``)."""

    locator: TableLocator
    schema: str
    identifier: str

    def __str__(self) -> str:
        return str(self.locator.relation(self.schema, self.identifier))


@dataclass
class Located:
    """What locating models found besides their locations.

    Attributes:
        names: Table location to the relation dbt's catalog knows it by (rendered as its name
            only when Delta's SQL needs it: most post-hooks run none).
        not_delta: Model alias to why it is not maintained (its table is not Delta).
        not_built: Model alias to why it is not maintained (it has no table yet).
        refused: Model name to its maintenance config error (every bad setting with its fix):
            that model is refused, the others are maintained.
    """

    names: dict[str, object] = field(default_factory=dict)
    not_delta: dict[str, str] = field(default_factory=dict)
    not_built: dict[str, str] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)

    def lines(self, width: int) -> str:
        """One line per model left out, for the end of a printed table (refused ones first)."""
        refused = "".join(
            f"\n{name:<{width}} refused (bad maintenance config): {reason}"
            for name, reason in sorted(self.refused.items())
        )
        left_out = {**self.not_built, **self.not_delta}
        return refused + "".join(
            f"\n{name:<{width}} not maintained: {reason}"
            for name, reason in sorted(left_out.items())
        )


class TableLocator:
    """Finds models' tables through dbt's connection.

    Args:
        adapter: The dbt adapter (for ``Relation`` and the credentials).
        connection: Its connection, as the bridge uses it.
        invocations: The current dbt invocation's memory (schema locations are asked once per
            invocation: a schema dropped and made again between two is found again).
    """

    def __init__(
        self, adapter: SparkAdapter, connection: DbtConnection, invocations: Invocations
    ) -> None:
        self._invocations = invocations
        self._adapter = adapter
        self._connection = connection
        self._unlistable: set[str] = set()  # schemas whose listing failed: asked per table

    def relation(self, schema: str, identifier: str) -> BaseRelation:
        """The adapter's relation of a table by schema and name."""
        return self._adapter.Relation.create(schema=schema, identifier=identifier)

    def model_location(
        self, schema: str, identifier: str, location_root: str | None = None
    ) -> str | None:
        """Where the adapter puts a model's table (None: the cluster's metastore decides)."""
        creds = self._connection.credentials
        known = self._invocations.get(get_invocation_id()).memo("warehouses")
        key = (*self._connection.key(), creds.warehouse)
        if key not in known:  # resolved once per dbt invocation, not per model
            known[key] = creds.resolved_warehouse()
        return placed_location(
            schema,
            identifier,
            model_root=location_root,
            profile_root=creds.location_root,
            warehouse=known[key],
        )

    def _cached(
        self, schema: str, alias: str, declared: str | None
    ) -> tuple[BaseRelation, str] | None:
        """The relation from dbt's cache and its location, when its catalog information gives it.

        dbt lists each schema once per invocation (SHOW TABLE EXTENDED: each table's Location),
        and a table's location stays what it was when its build replaces it; so a post-hook or
        a run-operation asks the catalog again only for a table the cache does not know, or
        whose declared ``location_root`` no longer matches what the catalog said. A schema dbt
        has not listed (a run-operation) is listed once here, except on the embedded engine
        (its journal knows every table); a failed listing is not repeated.
        """
        answered, cached = cached_relation(self._adapter, None, schema, alias)
        if not answered and self._journal() is None and schema.lower() not in self._unlistable:
            try:
                cached = self._adapter.get_relation(None, schema, alias)  # type: ignore[arg-type]
            except DbtRuntimeError:
                self._unlistable.add(schema.lower())  # no such schema, or a table that fails
        location = location_from_information(getattr(cached, "information", None))
        if cached is None or location is None:
            return None
        if declared is not None and location.rstrip("/") != declared.rstrip("/"):
            return None  # the model moved: ask the catalog
        return cached, location

    def _journal(self) -> EmbeddedEngine | None:
        """The embedded engine behind this thread's connection (its journal), if that is it."""
        try:
            engine = self._connection.session_engine()
        except DbtRuntimeError:  # a thread without a connection: ask through the catalog
            return None
        return engine if isinstance(engine, EmbeddedEngine) else None

    def _journal_location(self, schema: str, identifier: str) -> str | None:
        """The location the embedded engine's journal gives a table (None: no such record)."""
        engine = self._journal()
        return engine.journal.location(schema, identifier) if engine is not None else None

    def registered_location(self, schema: str, identifier: str) -> str | None:
        """Where the catalog already has a table, known without asking it (None: not known).

        From dbt's cache (its catalog information), else the embedded engine's journal.
        """
        _, cached = cached_relation(self._adapter, None, schema, identifier)
        location = location_from_information(getattr(cached, "information", None))
        return location if location is not None else self._journal_location(schema, identifier)

    def table_location(self, relation: BaseRelation) -> str | None:
        """The Delta location of an existing table as the catalog reports it (None: no table).

        In order: the catalog information dbt's cache holds, the embedded engine's journal
        (the location the table's CREATE gave), then the catalog, asked for this table alone.
        """
        cached = location_from_information(getattr(relation, "information", None))
        if cached is not None:
            return cached
        if relation.schema and relation.identifier:
            recorded = self._journal_location(relation.schema, relation.identifier)
            if recorded is not None:
                return recorded
        macro = self._connection.macro
        try:
            table = macro(
                "sparkdelta__show_table_extended",
                schema=relation.schema,
                identifier=relation.identifier,
            )
        except DbtRuntimeError:
            return None  # no such schema, or a table the catalog cannot read
        if len(table) == 0:
            return None  # no such table
        for row in table:
            if (location := location_from_information(row["information"])) is not None:
                return location
        # a catalog whose SHOW TABLE EXTENDED shows the table without its location
        try:
            table = macro("sparkdelta__describe_table_extended", relation=relation)
        except DbtRuntimeError:
            return None
        for row in table:
            if str(row[0]).strip() == "Location" and row[1]:
                return location_from_information(f"Location: {row[1]}")
        return None

    def schema_location(self, schema: str) -> str | None:
        """The catalog's location of a schema (``DESCRIBE SCHEMA EXTENDED``), asked once."""
        known = self._invocations.get(get_invocation_id()).memo("schema locations")
        key = (*self._connection.key(), schema.lower())
        if key not in known:
            location = None
            try:
                rows = list(
                    self._connection.macro("sparkdelta__describe_schema_extended", schema=schema)
                )
            except DbtRuntimeError:
                rows = []  # no such schema, or a catalog that does not answer this
            for row in rows:
                name, value = [*row, None, None][:2]
                if str(name).strip().lower() == "location" and value:
                    location = location_from_information(f"Location: {value}")
            known[key] = location
        location_found: str | None = known[key]
        return location_found

    def history_location(self, history: Mapping[str, Any]) -> str:
        """Where the history table lives: the var, else where a model of its name would go.

        That is ``location_root`` or the embedded warehouse, else (thrift, http, odbc, attach)
        the location the catalog gives the history's schema: ``<schema location>/<name>``, where
        the cluster would put a managed table of that name.

        Raises:
            DbtRuntimeError: When none of these gives a location.
        """
        schema, name = str(history["schema"]), str(history["name"])
        # asked by every post-hook: once per dbt invocation (it resolves the warehouse on disk)
        known = self._invocations.get(get_invocation_id()).memo("history locations")
        key = (schema, name, history.get("location"))
        if key not in known:
            known[key] = self._history_location(schema, name, history.get("location"))
        found: str = known[key]
        return found

    def _history_location(self, schema: str, name: str, declared: Any) -> str:
        location = declared or self.model_location(schema, name)
        if location is None:
            schema_location = self.schema_location(schema)
            if schema_location is not None:
                location = f"{schema_location.rstrip('/')}/{name.lower()}"
        if location is None:
            raise DbtRuntimeError(
                "maintenance history: set var 'maintenance_history_location' (the target has "
                f"no warehouse to put it in, and the catalog gives schema {schema} no location)."
            )
        return str(location)

    def locate(
        self,
        nodes: list[Any],
        *,
        parsed: Mapping[str, MaintenanceConfig] | None = None,
        logged: Collection[str] = (),
    ) -> tuple[list[ModelTarget], Located]:
        """Maintained models with the locations dbt's connection reports for their tables.

        A table's location comes from the catalog behind dbt's connection (SHOW/DESCRIBE TABLE
        EXTENDED); for a table the catalog does not know, from the ``location_root`` the model
        (or the profile) declares, when a Delta table is there. Never a guess. Tables without a
        Delta log are left out with the reason (``Located.not_delta``).

        Args:
            nodes: The model nodes.
            parsed: Their maintenance configs already parsed, by ``unique_id``.
            logged: Normalized locations whose log was just seen holding a commit (the build's
                start listed it): not asked again whether they hold a Delta table.

        Raises:
            Nothing for a model with a bad maintenance setting: it is left out and its error
            recorded in ``Located.refused`` (the caller fails the command after the others).
        """
        located = Located()
        profile_root = self._connection.credentials.location_root

        def locate(schema: str, alias: str, config: Mapping[str, Any]) -> str | None:
            declared = placed_location(
                schema, alias, model_root=config.get("location_root"), profile_root=profile_root
            )
            cached = self._cached(schema, alias, declared)
            location: str | None
            relation: object
            if cached is not None:
                relation, location = cached
            elif (location := self._journal_location(schema, alias)) is not None:
                relation = RelationName(self, schema, alias)  # made when Delta's SQL names it
            else:
                relation = self.relation(schema, alias)
                location = self.table_location(relation)
            if location is not None:
                located.names[location] = relation
            else:
                location = declared
                if location is None or not is_delta_table(location):
                    located.not_built[alias] = "not built yet (no table in the catalog)"
                    return None
                return location
            if logged and normalize_location(location) in logged:
                return location
            if not is_delta_table(location):
                located.not_delta[alias] = f"not a Delta table (no _delta_log at {location})"
                return None
            return location

        targets, _ = targets_from_nodes(nodes, locate, parsed=parsed, refused=located.refused)
        return targets, located
