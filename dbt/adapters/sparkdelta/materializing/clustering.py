"""Liquid clustering for models: the columns a model asks for, and what an engine can do.

A model names its clustering columns with ``maintenance_cluster_by`` (dbt-databricks'
``liquid_clustered_by`` is an alias, resolved while dbt parses). The macros in
``liquid_clustering.sql`` build the SQL: ``CLUSTER BY`` when the table is created, ``ALTER
TABLE ... CLUSTER BY`` when the columns change; this mixin answers the questions they ask.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.sparkdelta.common import maintenance_events
from python_ops.errors import MaintenanceError
from python_ops.maintenance import node_config, parse_config


def _name(model: Any) -> str:
    return str(model.get("name") if isinstance(model, Mapping) else model.name)


def clustering_columns(model: Any) -> list[str]:
    """The model's clustering columns (``maintenance_cluster_by``), validated.

    Args:
        model: The model node.

    Returns:
        The columns; empty when the model asks for none.

    Raises:
        DbtRuntimeError: For a bad value, or clustering together with ``partition_by``
            (Delta refuses a table both partitioned and clustered).
    """
    config = node_config(model)
    if not config.get("maintenance_cluster_by"):
        return []
    name = _name(model)
    try:
        columns = list(parse_config(name, config).cluster_by)
    except MaintenanceError as err:
        raise DbtRuntimeError(f"{err} The model was not built.") from err
    if config.get("partition_by"):
        raise DbtRuntimeError(
            f"model '{name}': setting 'maintenance_cluster_by' has bad value {columns!r}: "
            f"the model is also partitioned (partition_by: {config['partition_by']!r}) and "
            "Delta refuses a table that is both. Drop partition_by (clustering replaces it) "
            "or maintenance_cluster_by. The model was not built."
        )
    return columns


def warn_cannot_cluster(model: Any) -> str:
    """Warn that this engine builds the model's table without clustering.

    Args:
        model: The model node.

    Returns:
        '' (so that ``{{ }}`` renders nothing).
    """
    maintenance_events.warn(
        f"model '{_name(model)}': maintenance_cluster_by is not applied on the embedded "
        "engine (Sail cannot create a clustered table: 'CLUSTER BY in CREATE TABLE AS "
        "SELECT statement' is not supported), so its table is not clustered and OPTIMIZE "
        "only compacts it. Build it on an engine with Delta (mode: local or attach, a "
        "Thrift or Spark Connect server with Delta's jars) to cluster it."
    )
    return ""


def column_list(value: Any) -> list[str]:
    """``DESCRIBE DETAIL``'s ``clusteringColumns`` as a list, whatever the connection.

    Args:
        value: A list (Spark sessions), JSON text (Thrift) or None.

    Returns:
        The column names.
    """
    if value is None:
        return []
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return []
        value = json.loads(text) if text.startswith("[") else text.split(",")
    return [str(v).strip() for v in value]
