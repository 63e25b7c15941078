"""dbt models as maintenance targets: from graph nodes (inside dbt) or ``target/manifest.json``.

Plain JSON and dicts: this module never imports dbt. Inside dbt the adapter passes the nodes of
``graph.nodes`` and a locator backed by the catalog; outside dbt (``python -m python_ops
maintain``) the nodes come from the manifest that ``dbt parse``/``dbt run`` wrote, and tables are
located the way the sparkdelta adapter places them (``python_ops.maintenance.selection.locations``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from python_ops.errors import ConfigError
from python_ops.maintenance.configuration.config import MaintenanceConfig, parse_config
from python_ops.maintenance.selection.locations import Locator

MAINTAINED = ("table", "incremental", "snapshot")  # materializations with a Delta table
RESOURCE_TYPES = ("model", "snapshot")  # dbt nodes that build one


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
        build_scope: After a build (the post-hook), a predicate selecting the partitions the
            build wrote (``build_writes``): OPTIMIZE is decided and run there only. None: the
            whole table.
    """

    name: str
    location: str
    config: MaintenanceConfig
    tags: tuple[str, ...] = ()
    fqn: tuple[str, ...] = ()
    unique_id: str = ""
    build_scope: str | None = None

    def scoped(self, build_scope: str | None) -> ModelTarget:
        """The same model with OPTIMIZE's scope after a build.

        Made directly, not through ``dataclasses.replace`` (which looks at every field): every
        post-hook makes one.
        """
        return ModelTarget(
            self.name, self.location, self.config, self.tags, self.fqn, self.unique_id, build_scope
        )


def node_value(node: Any, key: str, default: Any = None) -> Any:
    """A node's field, from a manifest's dict or a dbt node object.

    Args:
        node: The node (or its config).
        key: The field.
        default: What a node without it gives.
    """
    # a dict first: Mapping's check is an ABC's (a Python call), and nodes are mostly dicts
    if type(node) is dict or isinstance(node, Mapping):
        return node.get(key, default)
    return getattr(node, key, default)


def builds_maintained_table(node: Any, config: Any) -> bool:
    """Whether a node builds a table maintenance looks after (an enabled Delta model or snapshot).

    Args:
        node: The node.
        config: Its config: a dict, or dbt's (whose ``get`` reads it too).
    """
    return (
        node_value(node, "resource_type", "model") in RESOURCE_TYPES
        and config.get("materialized") in MAINTAINED
        and config.get("enabled") is not False
    )


def node_config(node: Any) -> dict[str, Any]:
    """A node's resolved config as a plain dict (dbt config objects or manifest dicts)."""
    config = node_value(node, "config") or {}
    if type(config) is not dict and not isinstance(config, Mapping):
        config = config.to_dict() if hasattr(config, "to_dict") else dict(config)
    return dict(config)


def targets_from_nodes(
    nodes: Iterable[Any],
    locate: Locator,
    *,
    parsed: Mapping[str, MaintenanceConfig] | None = None,
    refused: dict[str, str] | None = None,
) -> tuple[list[ModelTarget], dict[str, str]]:
    """Maintained models (table and incremental) with their configs and table locations.

    Args:
        nodes: dbt model nodes (``graph.nodes`` values or manifest entries).
        locate: (schema, alias, config) to the table's location, None when it is not built.
        parsed: Configs already parsed from these very nodes, by ``unique_id`` (the post-hook's:
            its materialization parsed it when the build began); the others are parsed here.
        refused: When given, a model with a bad maintenance setting is that model's problem:
            it is left out and its error (every bad setting, with the fix) recorded here by
            model name, and the other models go on (as ``dbt build`` refuses only that model).

    Returns:
        (targets, model name to its file path); models not built yet are left out.

    Raises:
        ConfigError: For the first model with a bad maintenance setting, when ``refused`` is
            None.
    """
    targets, paths = [], {}
    for node in nodes:
        if node_value(node, "resource_type", "model") not in RESOURCE_TYPES:
            continue  # a test or a seed: its config is not copied
        config = node_config(node)
        if not builds_maintained_table(node, config):
            continue
        name = str(node_value(node, "name"))
        unique_id = str(node_value(node, "unique_id") or "")
        maintenance = (parsed or {}).get(unique_id)
        if maintenance is None:
            try:
                maintenance = parse_config(name, config)
            except ConfigError as err:
                if refused is None:
                    raise
                refused[name] = str(err)
                continue
        alias = str(node_value(node, "alias") or name)
        location = locate(str(node_value(node, "schema")), alias, config)
        if location is None:
            continue
        targets.append(
            ModelTarget(
                name=name,
                location=location,
                config=maintenance,
                tags=tuple(node_value(node, "tags") or ()),
                fqn=tuple(node_value(node, "fqn") or ()),
                unique_id=unique_id,
            )
        )
        paths[name] = str(node_value(node, "original_file_path") or "")
    return targets, paths


def load_manifest(
    project_dir: str,
    target_path: str = "target",
    *,
    missing: str = "Run 'dbt parse' (or any dbt command) in the project first, or point "
    "--project-dir at a dbt project.",
) -> dict[str, Any]:
    """Read ``<project_dir>/<target_path>/manifest.json``.

    Args:
        project_dir: The dbt project directory.
        target_path: dbt's target path, relative to the project.
        missing: What to do when there is none (the fix the error names).

    Returns:
        The manifest.

    Raises:
        ConfigError: When there is no readable manifest.
    """
    path = os.path.join(project_dir, target_path, "manifest.json")
    try:
        with open(path, encoding="utf-8") as handle:
            manifest: dict[str, Any] = json.load(handle)
    except FileNotFoundError as err:
        raise ConfigError(
            setting="project_dir", value=project_dir, fix=f"{path} does not exist. {missing}"
        ) from err
    except (OSError, ValueError) as err:
        raise ConfigError(
            setting="project_dir",
            value=project_dir,
            fix=f"{path} cannot be read as JSON ({err}). Re-run 'dbt parse'.",
        ) from err
    return manifest


def manifest_models(manifest: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The model and snapshot nodes of the root project and its packages, in manifest order."""
    nodes = manifest.get("nodes", {})
    return [n for n in nodes.values() if n.get("resource_type") in RESOURCE_TYPES]
