"""A model's retention policy on its table: the properties the package records follow the config.

Log cleanup records a model's retentions as ``delta.deletedFileRetentionDuration`` /
``delta.logRetentionDuration`` so that every engine follows them, and notes each value it wrote
(``python_ops.ops.log_cleanup.recorded_marker``). Those values are the package's, not floors:
when the model's config changes (lowered, or removed), the next log cleanup rewrites them, and
until then the maintenance decides and runs with the properties a user set only
(``effective_snapshot``). A property someone else set stays a floor and is never overwritten.
A VACUUM retention below Delta's 168 h default is the package's VACUUM's only: it is not
recorded (other engines would use it without any warning) unless the model sets
``maintenance_vacuum_record_short_retention``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from python_ops.delta.state.file_paths import FilePaths
from python_ops.delta.state.snapshot import Snapshot
from python_ops.delta.table.features import Op
from python_ops.delta.table.protocol import check_protocol
from python_ops.delta.table.recorded_retentions import (
    RETENTION_PROPERTIES,
    policy_changes,
    policy_properties,
    recorded_by_package,
    short_deleted_file_retention,
    unrecorded_short_retention_note,
    user_properties,
)
from python_ops.errors import UnsupportedFeatureError
from python_ops.maintenance.configuration.config import MaintenanceConfig


def effective_snapshot(snapshot: Snapshot) -> Snapshot:
    """The snapshot as the model's ops should see it: without the retentions the package recorded.

    Args:
        snapshot: The table's snapshot.

    Returns:
        The same snapshot, its configuration holding only properties a user set (the snapshot
        itself when there is nothing to drop).
    """
    configuration = snapshot.metadata.configuration
    mine = user_properties(configuration)
    if mine == configuration:
        return snapshot
    metadata = dataclasses.replace(snapshot.metadata, configuration=mine)
    return dataclasses.replace(snapshot, metadata=metadata)


def effective_paths(paths: FilePaths) -> FilePaths:
    """``effective_snapshot`` for the log's paths (``read_file_paths``): the same columns."""
    head = effective_snapshot(paths.head)
    return paths if head is paths.head else dataclasses.replace(paths, head=head)


def model_policy(config: MaintenanceConfig) -> dict[str, str]:
    """The retention properties (with their markers) the model's config asks for.

    Raises:
        ConfigError: For negative values.
    """
    return policy_properties(
        log_retention_days=config.log_retention_days,
        deleted_file_retention_hours=config.vacuum_retention_hours,
        record_short_retention=config.vacuum_record_short_retention,
    )


def unrecorded_note(config: MaintenanceConfig) -> str:
    """What log cleanup's output says when the model's short VACUUM retention is not recorded.

    Returns:
        The note, or '' when the retention is recorded (or not short, or unset).
    """
    hours = config.vacuum_retention_hours
    if hours is None or config.vacuum_record_short_retention:
        return ""
    return unrecorded_short_retention_note(hours) if short_deleted_file_retention(hours) else ""


def pending_policy(snapshot: Snapshot, config: MaintenanceConfig) -> dict[str, str]:
    """The property writes that would bring the table's recorded retentions to the config.

    Args:
        snapshot: The table's snapshot.
        config: The model's config.

    Returns:
        Properties to record; empty when they already follow the config, or when the table's
        features do not let the package record properties at all.
    """
    return _pending(snapshot.protocol, snapshot.metadata.configuration, snapshot.location, config)


def _pending(
    protocol: Mapping[str, Any],
    configuration: Mapping[str, str],
    location: str,
    config: MaintenanceConfig,
) -> dict[str, str]:
    try:
        check_protocol(protocol, Op.PROPERTIES, location=location)
    except UnsupportedFeatureError:
        return {}
    return policy_changes(configuration, model_policy(config))


def stale_policy(snapshot: Snapshot, config: MaintenanceConfig) -> dict[str, str]:
    """``pending_policy`` limited to retentions the package recorded and the config changed.

    A retention the table has never had is recorded at the next log cleanup that is due anyway;
    one the package recorded and the config has since lowered or dropped makes log cleanup due.
    """
    return stale_policy_of(
        snapshot.protocol, snapshot.metadata.configuration, snapshot.location, config
    )


def stale_policy_of(
    protocol: Mapping[str, Any],
    configuration: Mapping[str, str],
    location: str,
    config: MaintenanceConfig,
) -> dict[str, str]:
    """``stale_policy`` from the table's protocol and properties alone (no snapshot).

    Args:
        protocol: The table's ``protocol`` action.
        configuration: The table's properties.
        location: The table, for errors.
        config: The model's config.

    Returns:
        The property writes, when some retention the package recorded is stale; else empty.
    """
    # only a retention the package recorded can be stale: most tables hold none (every
    # post-hook asks), and then neither the protocol nor the config is looked at
    if not configuration or not any(
        recorded_by_package(configuration, prop) for prop in RETENTION_PROPERTIES
    ):
        return {}
    changes = _pending(protocol, configuration, location, config)
    stale = {
        prop
        for prop in changes
        if prop.startswith("delta.") and recorded_by_package(configuration, prop)
    }
    return changes if stale else {}


def describe_changes(snapshot: Snapshot, changes: dict[str, str]) -> str:
    """``delta.deletedFileRetentionDuration interval 336 hours -> interval 200 hours``, ..."""
    configuration = snapshot.metadata.configuration
    return ", ".join(
        f"{prop} {configuration.get(prop, 'unset')} -> {value}"
        for prop, value in sorted(changes.items())
        if prop.startswith("delta.")
    )
