"""dbt models as maintenance targets: from graph nodes (inside dbt) or ``target/manifest.json``.

Plain JSON and dicts: this module never imports dbt. Inside dbt the adapter passes the nodes of
``graph.nodes`` and a locator backed by the catalog; outside dbt (``python -m python_ops
maintain``) the nodes come from the manifest that ``dbt parse``/``dbt run`` wrote, and tables are
located the way the sparkdelta adapter places them: ``location_root/<alias>`` when the model sets
``location_root``, else the location recorded in the embedded engine's catalog journal
(``<warehouse>/_sparkdelta_catalog.json``), else ``<location_root>/<schema>/<alias>`` when the
profile target sets ``location_root``, else ``<warehouse>/<schema>/<alias>`` (warehouse and
location_root from the profile: ``python_ops.maintenance.dbt_profile``).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from python_ops.errors import ConfigError
from python_ops.maintenance.config import MaintenanceConfig, parse_config

MAINTAINED = ("table", "incremental")
JOURNAL_NAME = "_sparkdelta_catalog.json"  # written by dbt/adapters/sparkdelta/catalog_journal.py
HISTORY_NAME = "maintenance_history"

Locator = Callable[[str, str, Mapping[str, Any]], str | None]


@dataclass(frozen=True)
class ModelTarget:
    """A model whose Delta table is maintained.

    Attributes:
        name: The model name.
        location: Its table location.
        config: Its maintenance config.
        tags: Its dbt tags.
        fqn: Its dbt fully qualified name (project, folders..., name).
        unique_id: Its dbt unique id (``model.<package>.<name>``); '' when not known.
    """

    name: str
    location: str
    config: MaintenanceConfig
    tags: tuple[str, ...] = ()
    fqn: tuple[str, ...] = ()
    unique_id: str = ""


def _get(node: Any, key: str, default: Any = None) -> Any:
    if isinstance(node, Mapping):
        return node.get(key, default)
    return getattr(node, key, default)


def node_config(node: Any) -> dict[str, Any]:
    """A node's resolved config as a plain dict (dbt config objects or manifest dicts)."""
    config = _get(node, "config") or {}
    if not isinstance(config, Mapping):
        config = config.to_dict() if hasattr(config, "to_dict") else dict(config)
    return dict(config)


def targets_from_nodes(
    nodes: Iterable[Any], locate: Locator
) -> tuple[list[ModelTarget], dict[str, str]]:
    """Maintained models (table and incremental) with their configs and table locations.

    Args:
        nodes: dbt model nodes (``graph.nodes`` values or manifest entries).
        locate: (schema, alias, config) to the table's location, None when it is not built.

    Returns:
        (targets, model name to its file path); models not built yet are left out.

    Raises:
        ConfigError: For the first model with a bad maintenance setting.
    """
    targets, paths = [], {}
    for node in nodes:
        if _get(node, "resource_type", "model") != "model":
            continue
        config = node_config(node)
        if config.get("materialized") not in MAINTAINED or config.get("enabled") is False:
            continue
        name = str(_get(node, "name"))
        maintenance = parse_config(name, config)
        location = locate(str(_get(node, "schema")), str(_get(node, "alias") or name), config)
        if location is None:
            continue
        targets.append(
            ModelTarget(
                name=name,
                location=location,
                config=maintenance,
                tags=tuple(_get(node, "tags") or ()),
                fqn=tuple(_get(node, "fqn") or ()),
                unique_id=str(_get(node, "unique_id") or ""),
            )
        )
        paths[name] = str(_get(node, "original_file_path") or "")
    return targets, paths


def load_manifest(project_dir: str) -> dict[str, Any]:
    """Read ``<project_dir>/target/manifest.json``.

    Args:
        project_dir: The dbt project directory.

    Returns:
        The manifest.

    Raises:
        ConfigError: When there is no readable manifest.
    """
    path = os.path.join(project_dir, "target", "manifest.json")
    try:
        with open(path, encoding="utf-8") as handle:
            manifest: dict[str, Any] = json.load(handle)
    except FileNotFoundError as err:
        raise ConfigError(
            setting="project_dir",
            value=project_dir,
            fix=f"{path} does not exist. Run 'dbt parse' (or any dbt command) in the project "
            "first, or point --project-dir at a dbt project.",
        ) from err
    except (OSError, ValueError) as err:
        raise ConfigError(
            setting="project_dir",
            value=project_dir,
            fix=f"{path} cannot be read as JSON ({err}). Re-run 'dbt parse'.",
        ) from err
    return manifest


def manifest_models(manifest: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The model nodes of the root project and its packages, in manifest order."""
    nodes = manifest.get("nodes", {})
    return [n for n in nodes.values() if n.get("resource_type") == "model"]


def journal_tables(warehouse: str) -> dict[tuple[str, str], str]:
    """(schema, name) to location for every table in the warehouse's catalog journal."""
    path = os.path.join(warehouse, JOURNAL_NAME)
    try:
        with open(path, encoding="utf-8") as handle:
            state = json.load(handle)
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as err:
        raise ConfigError(
            setting="warehouse",
            value=warehouse,
            fix=f"the catalog journal {path} cannot be read ({err}); run dbt once to rewrite it.",
        ) from err
    return {
        (str(r["schema"]).lower(), str(r["name"]).lower()): str(r["location"])
        for r in state.get("relations", [])
        if r.get("kind") == "table" and r.get("location")
    }


def _is_delta_table(location: str) -> bool:
    if "://" in location and not location.startswith("file://"):
        return True  # object stores: let the op report a missing table
    return os.path.isdir(os.path.join(location.removeprefix("file://"), "_delta_log"))


def expected_location(
    warehouse: str | None,
    schema: str,
    alias: str,
    config: Mapping[str, Any],
    *,
    location_root: str | None = None,
    journal: Mapping[tuple[str, str], str] | None = None,
) -> str:
    """Where the sparkdelta adapter puts a model's table (built or not).

    The model's ``location_root``/<alias>; else the location the catalog journal recorded; else
    ``<profile location_root>/<schema>/<alias>``; else ``<warehouse>/<schema>/<alias>``.

    Args:
        warehouse: The embedded engine's warehouse directory (None: the target has none).
        schema: The model's schema.
        alias: The model's alias.
        config: The model's config (for ``location_root``).
        location_root: The profile target's ``location_root``, if set.
        journal: ``journal_tables(warehouse)``, if read.

    Returns:
        The table's location.
    """
    root = config.get("location_root")
    if root:
        return f"{str(root).rstrip('/')}/{alias}"
    key = (schema.lower(), alias.lower())
    recorded = (journal or {}).get(key)
    if recorded:
        return recorded
    if location_root or not warehouse:
        return f"{(location_root or '').rstrip('/')}/{key[0]}/{key[1]}"
    return os.path.join(warehouse, key[0], key[1])


def warehouse_locator(warehouse: str | None, *, location_root: str | None = None) -> Locator:
    """Locate model tables as the sparkdelta adapter places them (``expected_location``).

    Args:
        warehouse: The embedded engine's warehouse directory (None: the target has none, its
            tables are under ``location_root``).
        location_root: The profile target's ``location_root``, if set.

    Returns:
        A locator for ``targets_from_nodes``; it returns None for tables not built yet.
    """
    tables = journal_tables(warehouse) if warehouse else {}

    def locate(schema: str, alias: str, config: Mapping[str, Any]) -> str | None:
        location = expected_location(
            warehouse, schema, alias, config, location_root=location_root, journal=tables
        )
        return location if _is_delta_table(location) else None

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
    if location_root or not warehouse:
        return f"{(location_root or '').rstrip('/')}/{schema}/{HISTORY_NAME}"
    return os.path.join(warehouse, schema, HISTORY_NAME)
