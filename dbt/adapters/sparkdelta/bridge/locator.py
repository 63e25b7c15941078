"""Where a model's table is, from inside dbt: the catalog first, then where the adapter puts it.

The rule of where the adapter places tables, and the one answer to "is a Delta table there", are
``python_ops.maintenance.selection.locations`` (the CLI and Python models use the same); this
object adds what only dbt's connection knows: the location the catalog reports for a built table,
and the location it gives a schema (where the maintenance history goes on a cluster).

Every look-up costs the same whatever the project's size: a relation by name is one dict look-up
in dbt's relation cache (``cached_relation``; dbt's own ``get_relation`` scans every cached
relation of the schema per call), the embedded engine's tables are found in its catalog journal
(recorded from the statement that created them), and a table neither knows is asked for alone
(``SHOW TABLE EXTENDED ... LIKE '<name>'``). A schema is listed as a whole at most once, and
only on engines without a journal; when that listing fails (one broken table can fail it), its
models are located one by one, so a broken table is its own model's problem.
"""

from __future__ import annotations

import json
import os
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from dbt.adapters.base.relation import BaseRelation
from dbt.adapters.reference_keys import _ReferenceKey
from dbt.adapters.spark.impl import SparkAdapter
from dbt_common.exceptions import DbtRuntimeError
from dbt_common.invocation import get_invocation_id

from dbt.adapters.sparkdelta.bridge.dbt_connection import DbtConnection
from dbt.adapters.sparkdelta.common import maintenance_events
from dbt.adapters.sparkdelta.engines import EmbeddedEngine, location_from_information
from python_ops.maintenance import (
    JOURNAL_NAME,
    LOG_NAME,
    Invocations,
    MaintenanceConfig,
    ModelTarget,
    is_delta_table,
    is_remote,
    normalize_location,
    placed_location,
    targets_from_nodes,
)

NOT_BUILT = "not built yet (no table in the catalog)"


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
        missing: Model alias to why its table is missing: the catalog knows (or its journal
            knew) the table, and nothing is at its location any more (files deleted by hand).
            With ``on_error: fail`` the model stays a target, so its ops fail and so does the
            command; with ``warn`` it is left out with a dbt warning.
    """

    names: dict[str, object] = field(default_factory=dict)
    not_delta: dict[str, str] = field(default_factory=dict)
    not_built: dict[str, str] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)
    missing: dict[str, str] = field(default_factory=dict)

    def lines(self, width: int) -> str:
        """One line per model left out or missing, for the end of a printed table.

        Refused ones first, then missing ones, then those not maintained.
        """
        refused = "".join(
            f"\n{name:<{width}} refused (bad maintenance config): {reason}"
            for name, reason in sorted(self.refused.items())
        )
        refused += "".join(
            f"\n{name:<{width}} missing: {reason}" for name, reason in sorted(self.missing.items())
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

    def missing_table(
        self, schema: str, alias: str, location: str | None
    ) -> tuple[str, str] | None:
        """Where a table the catalog knows (or knew) was, and why it is missing; None if not.

        Missing: the catalog gives the table a local location where nothing is any more (no
        such path, or an empty directory), or, with no location from the catalog, the embedded
        engine's journal recorded the table and has since forgotten it (the engine forgets a
        table whose Delta log is gone when it starts) and no Delta table is where it was. A
        model that was never built has neither, and is not missing.

        Args:
            schema: The table's schema.
            alias: Its name.
            location: Where the catalog has it (None: the catalog does not know it).

        Returns:
            ``(location, reason)``: the reason names the table, its location and the fix.
        """
        if location is None:
            location = self._forgotten_location(schema, alias)
            if location is None or is_delta_table(location):
                return None
        elif is_remote(location) or not _nothing_at(location):
            return None
        return location, (
            f"table {schema}.{alias} was built at {location}, but nothing is there now (its "
            "files were deleted, or the table dropped, outside dbt); build the model again "
            "(dbt run) to re-create it"
        )

    def _forgotten_location(self, schema: str, alias: str) -> str | None:
        """Where the embedded engine's journal last had a table it has since forgotten."""
        engine = self._journal()
        warehouse = engine.warehouse if engine is not None else None
        if not warehouse:
            return None
        known = self._invocations.get(get_invocation_id()).memo("forgotten tables")
        if warehouse not in known:  # one read of the journal per dbt invocation
            try:
                known[warehouse] = _forgotten_tables(warehouse)
            except (OSError, ValueError, KeyError, TypeError, AttributeError):
                known[warehouse] = {}  # an unreadable journal proves nothing
        forgotten: dict[tuple[str, str], str] = known[warehouse]
        return forgotten.get((schema.lower(), alias.lower()))

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
        Delta log are left out with the reason (``Located.not_delta``); tables the catalog knows
        (or knew) whose files are gone are missing (``Located.missing``), not "not built yet".

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
        missing_at: dict[str, str] = {}  # location of a missing table -> its alias

        def locate(schema: str, alias: str, config: Mapping[str, Any]) -> str | None:
            location = self._located(located, schema, alias, config, logged)
            if alias in located.missing and location is not None:
                missing_at[location] = alias
            return location

        targets, _ = targets_from_nodes(nodes, locate, parsed=parsed, refused=located.refused)
        return _kept_when_missing(targets, located, missing_at), located

    def _located(
        self,
        located: Located,
        schema: str,
        alias: str,
        config: Mapping[str, Any],
        logged: Collection[str],
    ) -> str | None:
        """One model's table location for ``locate`` (None: left out, with the reason)."""
        declared = placed_location(
            schema,
            alias,
            model_root=config.get("location_root"),
            profile_root=self._connection.credentials.location_root,
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
                return _not_found(located, alias, self.missing_table(schema, alias, None))
            return location
        if logged and normalize_location(location) in logged:
            return location
        if not is_delta_table(location):
            if (missing := self.missing_table(schema, alias, location)) is not None:
                located.missing[alias] = missing[1]
                return location  # kept for now: on_error decides (``_kept_when_missing``)
            located.not_delta[alias] = f"not a Delta table (no _delta_log at {location})"
            return None
        return location


def _not_found(located: Located, alias: str, missing: tuple[str, str] | None) -> str | None:
    """A table nowhere to be found: missing when the catalog knew it, else not built yet.

    Returns:
        Where a missing table was (on_error decides later whether it is a target); None for
        a model not built yet.
    """
    if missing is None:
        located.not_built[alias] = NOT_BUILT
        return None
    located.missing[alias] = missing[1]
    return missing[0]


def _kept_when_missing(
    targets: list[ModelTarget], located: Located, missing_at: Mapping[str, str]
) -> list[ModelTarget]:
    """The targets, less the missing tables of models with ``on_error: warn`` (warned about).

    A missing table of a model with ``on_error: fail`` stays a target: its ops fail on it, and
    so does the command; with ``warn`` it is reported (the printed table's ``missing`` line and
    a dbt warning) and not maintained. A model whose maintenance is off stays a target too (its
    rows say so; nothing fails, nothing is warned about).
    """
    kept = []
    for target in targets:
        alias = missing_at.get(target.location)
        if alias is None or target.config.on_error == "fail" or not target.config.enabled:
            kept.append(target)
            continue
        maintenance_events.warn(
            f"model {target.name} is not maintained (on_error: warn): its table is missing: "
            f"{located.missing[alias]}"
        )
    return kept


def _nothing_at(location: str) -> bool:
    """Whether nothing is at a local location: no such path, or an empty directory."""
    path = location.removeprefix("file://")
    if not os.path.lexists(path):
        return True
    try:
        return os.path.isdir(path) and not os.path.islink(path) and not os.listdir(path)
    except OSError:
        return False


def _forgotten_tables(warehouse: str) -> dict[tuple[str, str], str]:
    """Tables the embedded engine's journal had and has forgotten since, with their locations.

    Read from the journal's snapshot and log (``python_ops.maintenance.selection.catalog_file``'s
    files): a table whose last record is a ``forget`` (a ``DROP TABLE``, or the engine finding its
    Delta log gone at start) or the drop of its schema. The log is emptied when the journal is
    compacted, so a table forgotten before the last compaction is no longer known to have been.

    Returns:
        ``(schema, name)`` (lower case) to the location the table had.
    """
    try:
        with open(os.path.join(warehouse, JOURNAL_NAME), encoding="utf-8") as handle:
            snapshot = json.load(handle).get("relations", [])
    except FileNotFoundError:
        snapshot = []
    had: dict[tuple[str, str], str] = {
        (str(e["schema"]).lower(), str(e["name"]).lower()): str(e["location"])
        for e in snapshot
        if e.get("kind") == "table" and e.get("location")
    }
    forgotten: dict[tuple[str, str], str] = {}
    for record in _log_records(warehouse):
        op = record.get("op")
        key = (str(record.get("schema")).lower(), str(record.get("name")).lower())
        if op == "put":
            entry = record["entry"]
            key = (str(entry["schema"]).lower(), str(entry["name"]).lower())
            forgotten.pop(key, None)
            if entry.get("kind") == "table" and entry.get("location"):
                had[key] = str(entry["location"])
            else:
                had.pop(key, None)
        elif op == "forget" and key in had:
            forgotten[key] = had.pop(key)
        elif op == "forget_schema":
            for gone in [k for k in had if k[0] == key[0]]:
                forgotten[gone] = had.pop(gone)
        elif op == "rename":
            moved = had.pop(key, None)
            new = (str(record.get("new_schema")).lower(), str(record.get("new_name")).lower())
            if moved is not None:
                had[new] = moved
                forgotten.pop(new, None)
    return forgotten


def _log_records(warehouse: str) -> Iterator[dict[str, Any]]:
    """The journal log's records in order; a line that is not whole JSON is skipped."""
    try:
        with open(os.path.join(warehouse, LOG_NAME), encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except FileNotFoundError:
        return
    for line in lines:
        try:
            record = json.loads(line) if line.strip() else None
        except ValueError:
            continue  # a torn append, as the journal's own reader skips it
        if isinstance(record, dict):
            yield record
