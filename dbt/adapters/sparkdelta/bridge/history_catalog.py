"""The maintenance history from the adapter's side: its store, and its place in dbt's catalog.

One store per history location per process (each caches its last runs). Once the history table
exists it is registered in the catalog behind dbt's connection, so a project can read it as
``source('maintenance', ...)``; a project that declares that source gets the (empty) table
before the first model builds.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from dbt.adapters.spark.impl import SparkAdapter
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.sparkdelta.bridge.dbt_connection import DbtConnection
from dbt.adapters.sparkdelta.bridge.locator import TableLocator
from dbt.adapters.sparkdelta.common import runtime
from python_ops.errors import MaintenanceError
from python_ops.maintenance import HistoryStore, is_delta_table

log = logging.getLogger(__name__)


def history_store(location: str) -> HistoryStore:
    """One store per history location per process (it caches the last runs)."""
    stores = runtime.HISTORY_STORES
    with stores.lock:
        if location not in stores.value:
            stores.value[location] = HistoryStore(location)
        return stores.value[location]


def flush_histories() -> int:
    """Write every store's deferred rows (post-hook skips, kept bounds) as a command ends.

    Returns:
        How many rows there were to write.
    """
    with runtime.HISTORY_STORES.lock:
        stores = list(runtime.HISTORY_STORES.value.values())
    rows = 0
    for store in stores:
        rows += store.deferred_count()
        try:
            store.flush()
        except MaintenanceError as err:  # the models' builds stand; say what was not recorded
            log.warning("maintenance history: %s", err)
    return rows


def history_is_a_source(sources: Iterable[Any], schema: str, name: str) -> bool:
    """True when one of a manifest's sources is the history table (schema and identifier).

    Args:
        sources: The manifest's source definitions.
        schema: The history's schema.
        name: The history's table name.

    Returns:
        Whether a source names that table (case-insensitive, as Spark's catalog).
    """
    return any(
        str(source.schema).lower() == schema.lower()
        and str(source.identifier).lower() == name.lower()
        for source in sources
    )


class HistoryCatalog:
    """The history table's store and its registration in the catalog.

    Args:
        adapter: The dbt adapter (for the manifest, the relation cache and the history macro).
        connection: Its connection, as the bridge uses it.
        locator: Where tables are.
    """

    def __init__(
        self, adapter: SparkAdapter, connection: DbtConnection, locator: TableLocator
    ) -> None:
        self._adapter = adapter
        self._connection = connection
        self._locator = locator

    def store(self, history: Mapping[str, Any]) -> HistoryStore:
        """The store of the history that ``history`` (the ``maintenance_history()`` macro) names.

        Raises:
            DbtRuntimeError: When there is no place for the history.
        """
        return history_store(self._locator.history_location(history))

    def register(self, history: Mapping[str, Any]) -> None:
        """Make the history table queryable (``source('maintenance', ...)``) once it exists.

        Where the engine behind dbt's connection cannot read Delta tables (Spark without
        delta-spark), the history stays a Delta table at its location (delta-rs writes it),
        unregistered; that is found out once per connection.
        """
        location = self._locator.history_location(history)
        if not is_delta_table(location):
            return
        registered = self._locator.registered_location(history["schema"], history["name"])
        if registered is not None and registered.rstrip("/") == location.rstrip("/"):
            return  # registered there already: no statement (the embedded server stays idle)
        key = self._connection.key()
        if key in runtime.NO_DELTA_TABLES.value:  # the engine refused before
            return
        try:
            self._connection.macro(
                "sparkdelta__register_delta_location",
                schema=history["schema"],
                identifier=history["name"],
                location=location,
            )
        except DbtRuntimeError as err:
            with runtime.NO_DELTA_TABLES.lock:
                runtime.NO_DELTA_TABLES.value.add(key)
            first = str(err).strip().splitlines()[0][:200] if str(err).strip() else ""
            log.info("maintenance history at %s not registered in the catalog: %s", location, first)

    def ensure_source(self) -> None:
        """Create (empty) and register the history table when the project declares it a source.

        A project that reads the history as ``source(...)`` must find the table before
        maintenance first writes to it. Only the source at the history's schema and name (vars
        ``maintenance_history_schema`` / ``_name``, read by the ``maintenance_history()`` macro
        as the post-hook does) triggers this; other projects get no table they did not ask for.
        """
        from dbt.contracts.graph.manifest import Manifest

        adapter = self._adapter
        manifest = adapter.get_macro_resolver()
        if not isinstance(manifest, Manifest) or not manifest.sources:
            return
        history = dict(adapter.execute_macro("maintenance_history"))
        schema, name = str(history["schema"]), str(history["name"])
        if not history_is_a_source(manifest.sources.values(), schema, name):
            return
        if adapter.get_relation(None, schema, name) is not None:  # type: ignore[arg-type]
            return  # already in the catalog
        try:
            location = self._locator.history_location(history)
            created = history_store(location).ensure_table()
        except (DbtRuntimeError, MaintenanceError) as err:
            log.info("maintenance history source %s.%s not created: %s", schema, name, err)
            return
        self.register(history)
        if created:
            log.info("created the empty maintenance history %s.%s at %s", schema, name, location)
        relation = adapter.Relation.create(
            schema=schema, identifier=name, type=adapter.Relation.get_relation_type.Table
        )
        if self._locator.table_location(relation) is not None:
            adapter.cache_added(relation)
