"""Where a model's table is, and whether a Delta table is there: one answer for every caller.

The sparkdelta adapter places a model's table at ``<model location_root>/<alias>`` when the
model sets ``location_root``; else where the embedded engine's catalog journal recorded it
(``<warehouse>/_sparkdelta_catalog.json``); else ``<profile location_root>/<schema>/<alias>``
when the target sets ``location_root``; else ``<warehouse>/<schema>/<alias>`` (the embedded
engine's managed location). With none of these (a cluster's metastore places its tables) there
is no answer here: inside dbt the adapter asks the catalog instead.

The adapter (its locator and Python models), the embedded engine and the CLI (``python -m
python_ops maintain``) all call these functions. Plain Python: never imports dbt.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from python_ops.errors import ConfigError
from python_ops.maintenance.selection.catalog_file import JOURNAL_NAME, read_catalog
from python_ops.storage import delta_storage_options, is_remote

HISTORY_NAME = "maintenance_history"

Locator = Callable[[str, str, Mapping[str, Any]], str | None]


def managed_location(warehouse: str, schema: str, name: str) -> str:
    """Where the embedded engine keeps a table it manages: ``<warehouse>/<schema>/<name>``.

    Args:
        warehouse: The engine's warehouse directory.
        schema: The table's schema.
        name: The table's name.

    Returns:
        The location (schema and name lower-cased, as Spark's catalog keys them).
    """
    return os.path.join(warehouse, schema.lower(), name.lower())


def placed_location(
    schema: str,
    alias: str,
    *,
    model_root: str | None = None,
    profile_root: str | None = None,
    warehouse: str | None = None,
    journal: Mapping[tuple[str, str], str] | None = None,
) -> str | None:
    """Where the sparkdelta adapter puts a model's table (built or not).

    Args:
        schema: The model's schema.
        alias: The model's alias.
        model_root: The model's ``location_root`` config, if set.
        profile_root: The profile target's ``location_root``, if set.
        warehouse: The embedded engine's warehouse directory, if the target has one.
        journal: ``journal_tables(warehouse)``, if read.

    Returns:
        The location, or None when the cluster's metastore decides.
    """
    if model_root:
        return f"{str(model_root).rstrip('/')}/{alias}"
    recorded = (journal or {}).get((schema.lower(), alias.lower()))
    if recorded:
        return recorded
    if profile_root:
        return f"{profile_root.rstrip('/')}/{schema.lower()}/{alias.lower()}"
    return managed_location(warehouse, schema, alias) if warehouse else None


def is_delta_table(location: str) -> bool:
    """Whether a Delta table is at ``location`` (its ``_delta_log`` exists).

    Local paths are checked on disk; object-store locations are asked through delta-rs with the
    location's storage options (a request, not a listing of the table).

    Args:
        location: A table location (path or URI).

    Returns:
        True when the location holds a Delta log.
    """
    if is_remote(location):
        from deltalake import DeltaTable  # only object stores need delta-rs for this

        options = delta_storage_options(location)
        return bool(DeltaTable.is_deltatable(location, storage_options=options))
    return os.path.isdir(os.path.join(location.removeprefix("file://"), "_delta_log"))


def journal_tables(warehouse: str) -> dict[tuple[str, str], str]:
    """(schema, name) to location for every table in the warehouse's catalog journal.

    Args:
        warehouse: The embedded engine's warehouse directory.

    Returns:
        The recorded table locations (empty when there is no journal).

    Raises:
        ConfigError: When the journal exists but cannot be read.
    """
    try:
        catalog, _ = read_catalog(warehouse)
    except (OSError, ValueError) as err:
        path = os.path.join(warehouse, JOURNAL_NAME)
        raise ConfigError(
            setting="warehouse",
            value=warehouse,
            fix=f"the catalog journal {path} cannot be read ({err}); run dbt once to rewrite it.",
        ) from err
    return catalog.tables()


def warehouse_locator(warehouse: str | None, *, location_root: str | None = None) -> Locator:
    """Locate model tables as the sparkdelta adapter places them (``placed_location``).

    Args:
        warehouse: The embedded engine's warehouse directory (None: the target has none, its
            tables are under ``location_root``).
        location_root: The profile target's ``location_root``, if set.

    Returns:
        A locator for ``targets_from_nodes``; it returns None for tables not built yet.
    """
    tables = journal_tables(warehouse) if warehouse else {}

    def locate(schema: str, alias: str, config: Mapping[str, Any]) -> str | None:
        location = placed_location(
            schema,
            alias,
            model_root=config.get("location_root"),
            profile_root=location_root,
            warehouse=warehouse,
            journal=tables,
        )
        return location if location is not None and is_delta_table(location) else None

    return locate


def default_history_location(
    warehouse: str | None, models: Iterable[Mapping[str, Any]], *, location_root: str | None = None
) -> str:
    """Where the dbt side keeps the history table unless vars say otherwise.

    The table registered in the journal under the name ``maintenance_history`` when there is one;
    else ``<location_root or warehouse>/<schema>/maintenance_history`` with the schema most
    models use (the target schema, which is the default of var ``maintenance_history_schema``).

    Args:
        warehouse: The warehouse directory.
        models: The project's model nodes.
        location_root: The profile target's ``location_root``, if set.

    Returns:
        The history table's location.
    """
    journal = journal_tables(warehouse) if warehouse else {}
    registered = [loc for (_, name), loc in journal.items() if name == HISTORY_NAME]
    if len(registered) == 1:
        return registered[0]
    schemas = Counter(str(m.get("schema", "default")).lower() for m in models)
    schema = schemas.most_common(1)[0][0] if schemas else "default"
    location = placed_location(
        schema, HISTORY_NAME, profile_root=location_root, warehouse=warehouse
    )
    return location or f"/{schema}/{HISTORY_NAME}"
