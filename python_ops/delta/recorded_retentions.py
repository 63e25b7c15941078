"""Retention properties the package records on a table, and which of them are floors.

Log cleanup records a model's retentions as table properties (``delta.logRetentionDuration``,
``delta.deletedFileRetentionDuration``) so that other engines and later runs see them. Beside each
it records the value it wrote under ``sparkdelta.recorded.<name>``: a property whose value equals
its marker is the package's and follows the model's config; any other value was set by someone
else (``tblproperties``, ``ALTER TABLE``, another engine) and is a floor the package never
overwrites.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta

from python_ops.delta.properties import DEFAULT_RETENTION, DELETED_FILE_RETENTION, LOG_RETENTION
from python_ops.values import MAX_DAYS, MAX_HOURS, checked_number

RECORDED_PREFIX = "sparkdelta.recorded."
RETENTION_PROPERTIES = (DELETED_FILE_RETENTION, LOG_RETENTION)


def recorded_marker(prop: str) -> str:
    """The property under which the package notes the value it recorded for ``prop``."""
    return RECORDED_PREFIX + prop.removeprefix("delta.")


def recorded_by_package(configuration: Mapping[str, str], prop: str) -> bool:
    """True when the table's ``prop`` holds the value the package itself recorded."""
    value = configuration.get(prop)
    return value is not None and configuration.get(recorded_marker(prop)) == value


def user_properties(configuration: Mapping[str, str]) -> dict[str, str]:
    """The table properties without the retentions the package recorded (and their markers).

    What is left are the floors a user set; the package's own values follow the model's config
    instead of bounding it.
    """
    out = {k: v for k, v in configuration.items() if not k.startswith(RECORDED_PREFIX)}
    for prop in RETENTION_PROPERTIES:
        if recorded_by_package(configuration, prop):
            del out[prop]
    return out


def policy_changes(configuration: Mapping[str, str], policy: Mapping[str, str]) -> dict[str, str]:
    """The property writes that make the package's recorded retentions follow ``policy``.

    Args:
        configuration: The table's current properties.
        policy: The model's whole policy (``policy_properties`` of its current config; a
            retention it leaves out is unset in the config).

    Returns:
        Properties (with their markers) to record: a retention the config sets, where the table
        has none or the package's own; Delta's default where the config no longer sets one and
        the table holds the package's (delta-rs cannot remove a property; the default has the
        same effect). A property someone else set is left alone. Empty when nothing changes.
    """
    changes: dict[str, str] = {}
    for prop in RETENTION_PROPERTIES:
        current = configuration.get(prop)
        wanted = policy.get(prop)
        # a value equal to the package's own wording of the config is adopted as the package's
        # (tables whose policy was recorded before the markers existed)
        ours = recorded_by_package(configuration, prop) or (
            wanted is not None and current == wanted
        )
        if current is not None and not ours:
            continue  # a user's floor
        if wanted is None:
            if current is None:
                continue
            wanted = _default_wording(prop)
        marker = recorded_marker(prop)
        if current != wanted or configuration.get(marker) != wanted:
            changes[prop] = changes[marker] = wanted
    return changes


def _default_wording(prop: str) -> str:
    hours = DEFAULT_RETENTION[prop] / timedelta(hours=1)
    return f"interval {hours / 24:g} days" if prop == LOG_RETENTION else f"interval {hours:g} hours"


def policy_properties(
    *, log_retention_days: float | None, deleted_file_retention_hours: float | None
) -> dict[str, str]:
    """Table properties that express a model's retention policy, each with its marker.

    Args:
        log_retention_days: The model's log retention, if set.
        deleted_file_retention_hours: The model's VACUUM retention, if set.

    Returns:
        ``delta.logRetentionDuration`` / ``delta.deletedFileRetentionDuration`` values, and
        for each the ``sparkdelta.recorded.*`` marker that says the package recorded it.

    Raises:
        ConfigError: For negative values.
    """
    props = {}
    for setting, value, prop, unit in (
        ("log_retention_days", log_retention_days, LOG_RETENTION, "days"),
        (
            "deleted_file_retention_hours",
            deleted_file_retention_hours,
            DELETED_FILE_RETENTION,
            "hours",
        ),
    ):
        if value is None:
            continue
        maximum = MAX_DAYS if unit == "days" else MAX_HOURS
        value = checked_number(value, setting=setting, maximum=maximum)
        props[prop] = props[recorded_marker(prop)] = f"interval {value:g} {unit}"
    return props
