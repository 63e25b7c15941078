"""Maintenance state in ``dbt docs``: table stats of each maintained model in dbt's catalog.

``dbt docs generate`` asks the adapter for every relation's columns, and dbt-spark adds the
table's statistics to each column row (``stats:<id>:label/value/description/include``). Here a
maintained model (table, incremental, snapshot) gets the rows of ``maintenance_report`` as
stats too: live files and the small-file share, size, log files, bytes VACUUM would reclaim,
what is due next, the last VACUUM / OPTIMIZE / log cleanup, and the files admitted per lookup
before and after the last ``auto`` clustering. The docs site shows them on the
model's page. Reading them never fails the catalog: an error is itself the stat.
"""

from __future__ import annotations

from typing import Any

from dbt.adapters.base.relation import BaseRelation
from dbt.adapters.spark.impl import SparkAdapter
from dbt_common.exceptions import DbtRuntimeError
from dbt_common.invocation import get_invocation_id

from dbt.adapters.sparkdelta.common import maintenance_events
from dbt.adapters.sparkdelta.operations.maintenance_bridge import MaintenanceParts
from python_ops.errors import MaintenanceError
from python_ops.maintenance import (
    MAINTAINED,
    RESOURCE_TYPES,
    node_config,
    report_rows,
    size_text,
)

# (stat id, label, description, how to show the report row's value)
_STATS: tuple[tuple[str, str, str, Any], ...] = (
    ("maintenance_files", "Delta files", "live data files in the table's log", None),
    ("maintenance_small_files", "small files", "share of files below 32 MiB", "share"),
    ("maintenance_bytes", "Delta size", "bytes of the live data files", "size"),
    ("maintenance_log_files", "log files", "files in _delta_log", None),
    ("maintenance_reclaimable_bytes", "VACUUM would free", "bytes of expired files", "size"),
    ("maintenance_next", "maintenance due", "the next op, and when", None),
    ("maintenance_vacuum", "last VACUUM", "the last real run and its status", None),
    ("maintenance_optimize", "last OPTIMIZE", "the last real run and its status", None),
    ("maintenance_cleanup_logs", "last log cleanup", "the last real run and its status", None),
    (
        "maintenance_files_per_lookup",
        "files per lookup",
        "files admitted per lookup on the auto clustering columns, before -> after",
        None,
    ),
)


def _stat(key: str, label: str, value: Any, description: str) -> dict[str, Any]:
    return {
        f"stats:{key}:label": label,
        f"stats:{key}:value": value,
        f"stats:{key}:description": description,
        f"stats:{key}:include": True,
    }


def stats_from_row(row: dict[str, Any]) -> dict[str, Any]:
    """A ``maintenance_report`` row as dbt catalog stats.

    Args:
        row: One row of ``python_ops.maintenance.running.report.report_rows``.

    Returns:
        ``stats:<id>:label/value/description/include`` keys.
    """
    if "error" in row:
        return _stat("maintenance_error", "maintenance", row["error"], "the table's log")
    out: dict[str, Any] = {}
    for key, label, description, shown in _STATS:
        field = key.removeprefix("maintenance_")
        value = row.get(field)
        if shown == "share":
            files, small = int(row.get("files") or 0), int(value or 0)
            value = f"{small} of {files} ({small / files:.0%})" if files else "0"
        elif shown == "size":
            value = size_text(int(value)) if value is not None else "-"
        out.update(_stat(key, label, value, description))
    return out


def _maintained_node(adapter: SparkAdapter, relation: BaseRelation) -> Any | None:
    """The maintained model or snapshot whose table ``relation`` is, if any."""
    manifest = adapter.get_macro_resolver()
    schema, name = str(relation.schema).lower(), str(relation.identifier).lower()
    for node in getattr(manifest, "nodes", {}).values():
        if (
            node.resource_type in RESOURCE_TYPES
            and str(node.schema).lower() == schema
            and str(node.alias or node.name).lower() == name
            and node_config(node).get("materialized") in MAINTAINED
        ):
            return node
    return None


def maintenance_stats(
    adapter: SparkAdapter, parts: MaintenanceParts, relation: BaseRelation
) -> dict[str, Any]:
    """The catalog stats of a relation's maintenance ({} when it is no maintained table).

    Args:
        adapter: The dbt adapter (its manifest, the history macro).
        parts: Its maintenance objects.
        relation: The relation dbt's catalog asks about.

    Returns:
        ``stats:<id>:...`` keys; an error reading them is itself the stat.
    """
    node = _maintained_node(adapter, relation)
    if node is None:
        return {}
    try:
        targets, _ = parts.locator.locate([node])
        if not targets:
            return {}
        history = parts.history.store(dict(adapter.execute_macro("maintenance_history")))
        with maintenance_events.python_ops_logs_to_dbt():
            (row,) = report_rows(
                targets,
                spark=parts.connection.ops_spark(),
                history=history,
                vacuum_engine=parts.connection.vacuum_engine(),
                invocation=parts.invocations.get(get_invocation_id()),
            )
    except (DbtRuntimeError, MaintenanceError) as err:  # the catalog must not fail
        return _stat("maintenance_error", "maintenance", str(err), "reading the table")
    return stats_from_row(row)
