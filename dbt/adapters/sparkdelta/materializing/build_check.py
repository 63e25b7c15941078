"""What a table or incremental model's materialization checks before its SQL runs.

A bad ``maintenance_*`` setting refuses the build with the model, the key, the value and the
fix, so the table is left as it was. That includes a VACUUM retention Delta's safety check
would refuse (below the table's ``delta.deletedFileRetentionDuration``, 168 h unless set)
without ``maintenance_vacuum_allow_short_retention``: found when the model is built, not days
later when VACUUM first becomes due.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.sparkdelta.bridge.locator import TableLocator
from python_ops.errors import MaintenanceError
from python_ops.maintenance import (
    DEFAULT_DELETED_FILE_RETENTION_HOURS,
    MAINTAINED,
    MaintenanceConfig,
    as_model_setting,
    checked_retention,
    node_config,
    node_value,
    parse_config,
    read_snapshot,
)

_FIX = "Fix the setting in its config() or in dbt_project.yml."


def _table_properties(model: Any, config: Mapping[str, Any], locator: TableLocator) -> Any:
    """The properties the model's table has (when built), else those its config gives it."""
    schema = node_value(model, "schema")
    alias = node_value(model, "alias") or node_value(model, "name")
    location = locator.table_location(locator.relation(str(schema), str(alias)))
    if location is not None:
        try:
            return read_snapshot(location).metadata.configuration, location
        except MaintenanceError:
            pass  # not (yet) a readable Delta table: the model's own properties decide
    properties = config.get("tblproperties") or {}
    return {str(k): str(v) for k, v in dict(properties).items()}, f"{schema}.{alias}"


def _check_retention(
    maintenance: MaintenanceConfig, model: Any, config: Mapping[str, Any], locator: TableLocator
) -> None:
    hours = maintenance.vacuum_retention_hours
    if (
        hours is None
        or not (maintenance.enabled and maintenance.vacuum_enabled)
        or maintenance.vacuum_allow_short_retention
        or (hours >= DEFAULT_DELETED_FILE_RETENTION_HOURS and not config.get("tblproperties"))
    ):
        return  # nothing VACUUM's check could refuse (the table's minimum is 168 h unless set)
    properties, where = _table_properties(model, config, locator)
    with as_model_setting(maintenance.model):  # the refusal names the model and its key
        checked_retention(properties, where, hours, allow_short_retention=False)


def check_before_build(model: Any, locator: TableLocator) -> MaintenanceConfig | None:
    """Refuse a model's build for a bad maintenance setting, before its SQL runs.

    Args:
        model: The model node (``model`` in the materialization's context).
        locator: Where its table is (for the retention check of a built table).

    Returns:
        The model's maintenance config (None: a materialization maintenance leaves alone).

    Raises:
        DbtRuntimeError: For every bad setting of the model at once, naming the model, the key,
            the value and the fix; the table is not touched.
    """
    config = node_config(model)
    if config.get("materialized") not in MAINTAINED:
        return None
    name = str(node_value(model, "name"))
    try:
        maintenance = parse_config(name, config)
        _check_retention(maintenance, model, config, locator)
    except MaintenanceError as err:
        kind = "snapshot" if node_value(model, "resource_type") == "snapshot" else "model"
        raise DbtRuntimeError(
            f"{err} The {kind} was not built: its table is unchanged. {_FIX}"
        ) from err
    return maintenance
