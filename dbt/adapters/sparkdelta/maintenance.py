"""Bridge from dbt nodes and Jinja arguments to ``python_ops.maintain`` (thin: no op logic here)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from python_ops.config import parse_config
from python_ops.history import HistoryStore
from python_ops.maintain import ModelTarget

MAINTAINED = ("table", "incremental")
_stores: dict[str, HistoryStore] = {}
_stores_lock = threading.Lock()


def history_store(location: str) -> HistoryStore:
    """One store per history location per process (it caches the last runs)."""
    with _stores_lock:
        if location not in _stores:
            _stores[location] = HistoryStore(location)
        return _stores[location]


def _get(node: Any, key: str, default: Any = None) -> Any:
    if isinstance(node, Mapping):
        return node.get(key, default)
    return getattr(node, key, default)


def node_config(node: Any) -> dict[str, Any]:
    """A node's resolved config as a plain dict."""
    config = _get(node, "config") or {}
    if not isinstance(config, Mapping):
        config = config.to_dict() if hasattr(config, "to_dict") else dict(config)
    return dict(config)


def targets_from_nodes(
    nodes: Iterable[Any], locate: Callable[[str, str], str | None]
) -> tuple[list[ModelTarget], dict[str, str]]:
    """Maintained models (table and incremental) with their configs and table locations.

    Args:
        nodes: dbt model nodes (dicts from ``graph.nodes`` or the manifest).
        locate: (schema, alias) to the table's location, None when it is not built.

    Returns:
        (targets, model name to file path); models not built yet are left out.

    Raises:
        ConfigError: For the first model with a bad maintenance setting.
    """
    targets, paths = [], {}
    for node in nodes:
        if _get(node, "resource_type", "model") != "model":
            continue
        config = node_config(node)
        if config.get("materialized") not in MAINTAINED:
            continue
        name = str(_get(node, "name"))
        maintenance = parse_config(name, config)
        location = locate(str(_get(node, "schema")), str(_get(node, "alias") or name))
        if location is None:
            continue
        targets.append(
            ModelTarget(
                name=name,
                location=location,
                config=maintenance,
                tags=tuple(_get(node, "tags") or ()),
                fqn=tuple(_get(node, "fqn") or ()),
            )
        )
        paths[name] = str(_get(node, "original_file_path") or "")
    return targets, paths
