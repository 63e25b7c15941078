"""What the advisor reads: dbt's manifest and each node's compiled SQL, as files.

Plain JSON and text: this module never imports dbt. A node's compiled SQL is the manifest's
``compiled_code`` (written by ``dbt compile``, ``run``, ``build``), else the file dbt wrote under
``target/compiled/``; a node with neither, a Python model, and SQL with Jinja left in it are
answered with the reason the advisor cannot read them (never guessed).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from python_ops.maintenance.selection.targets import load_manifest as read_manifest

# Nodes whose SQL reads other relations: every one of them is a reader of its upstream tables.
READER_TYPES = ("model", "snapshot", "test", "analysis")
# Materializations that leave a Delta table (the ones maintenance maintains).
MAINTAINED = ("table", "incremental", "snapshot")
_JINJA = re.compile(r"\{\{|\{%|\{#")


@dataclass(frozen=True)
class NodeSql:
    """A node's compiled SQL, or why there is none to read.

    Attributes:
        unique_id: The dbt node.
        sql: The compiled SQL (None when it cannot be read).
        problem: Why there is no SQL to parse ('' when there is).
    """

    unique_id: str
    sql: str | None
    problem: str = ""


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


def compiled_sql(node: Mapping[str, Any], project_dir: str, target_path: str = "target") -> NodeSql:
    """The node's compiled SQL from the manifest or ``target/compiled``, or why not.

    Args:
        node: A manifest node.
        project_dir: The dbt project directory.
        target_path: dbt's target path, relative to it.

    Returns:
        The SQL, or the problem that keeps the advisor from reading it.
    """
    uid = str(node.get("unique_id"))
    if node.get("language") == "python":
        return NodeSql(uid, None, "a Python model: its DataFrame code is not SQL the advisor reads")
    sql = node.get("compiled_code") if node.get("compiled") else None
    if not sql:
        path = node.get("compiled_path") or os.path.join(
            target_path,
            "compiled",
            str(node.get("package_name")),
            str(node.get("original_file_path")),
        )
        full = path if os.path.isabs(path) else os.path.join(project_dir, path)
        try:
            with open(full, encoding="utf-8") as handle:
                sql = handle.read()
        except OSError:
            return NodeSql(
                uid, None, "not compiled yet (no compiled SQL in the manifest or target/compiled)"
            )
    if _JINJA.search(sql):
        return NodeSql(uid, None, "Jinja left uncompiled in its SQL")
    return NodeSql(uid, sql)


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
