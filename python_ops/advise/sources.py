"""What the advisor reads from dbt's manifest: the maintained models and their readers.

Plain JSON: this module never imports dbt. A reader's compiled SQL is ``compiled.CompiledSql``'s
(the manifest, else the files dbt wrote under ``target/``, never an earlier run's).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from python_ops.maintenance.selection.targets import load_manifest as read_manifest

# Nodes whose SQL reads other relations: every one of them is a reader of its upstream tables.
READER_TYPES = ("model", "snapshot", "test", "analysis")
# Materializations that leave a Delta table (the ones maintenance maintains).
MAINTAINED = ("table", "incremental", "snapshot")


def load_manifest(project_dir: str, target_path: str = "target") -> dict[str, Any]:
    """Read ``<project_dir>/<target_path>/manifest.json`` (``targets.load_manifest``).

    Raises:
        ConfigError: When there is no readable manifest.
    """
    return read_manifest(
        project_dir,
        target_path,
        missing="Run 'dbt compile' (or dbt run/build) in the project first: the advisor "
        "reads the compiled SQL of every model.",
    )


def node_config(node: Mapping[str, Any]) -> dict[str, Any]:
    """A manifest node's config as a dict."""
    return dict(node.get("config") or {})


def is_maintained(node: Mapping[str, Any]) -> bool:
    """Whether the node builds a Delta table that maintenance maintains."""
    config = node_config(node)
    return (
        node.get("resource_type") in ("model", "snapshot")
        and config.get("materialized") in MAINTAINED
        and config.get("enabled") is not False
    )


def readers_of(
    nodes: Mapping[str, Mapping[str, Any]], upstream: Iterable[str]
) -> dict[str, set[str]]:
    """Reader node -> the maintained models it reads, directly or through ephemeral models.

    Args:
        nodes: The manifest's nodes by unique id.
        upstream: The maintained models' unique ids.

    Returns:
        Every reader node (``READER_TYPES``) depending on one of ``upstream``.
    """
    wanted = set(upstream)
    memo: dict[str, set[str]] = {}

    def reached(uid: str, depth: int = 0) -> set[str]:
        if uid in memo or depth > 50:
            return memo.get(uid, set())
        node = nodes.get(uid) or {}
        out: set[str] = set()
        for dep in (node.get("depends_on") or {}).get("nodes") or []:
            if dep in wanted:
                out.add(dep)
            elif node_config(nodes.get(dep) or {}).get("materialized") in ("ephemeral", "view"):
                out |= reached(dep, depth + 1)
        memo[uid] = out
        return out

    found = {}
    for uid, node in nodes.items():
        if node.get("resource_type") in READER_TYPES:
            models = reached(uid) - {uid}
            if models:
                found[uid] = models
    return found
