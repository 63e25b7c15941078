"""Retention properties the package records on a table, and which of them are floors.

Log cleanup records a model's retentions as table properties (``delta.logRetentionDuration``,
``delta.deletedFileRetentionDuration``) so that other engines and later runs see them. Beside each
it records the value it wrote under ``sparkdelta.recorded.<name>``: a property whose value equals
its marker is the package's and follows the model's config; any other value was set by someone
else (``tblproperties``, ``ALTER TABLE``, another engine) and is a floor the package never
overwrites. A VACUUM retention below Delta's 168 h default is recorded only on request
(``policy_properties``' ``record_short_retention``): recorded, it would lower the retention every
other engine's plain ``VACUUM`` uses.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta

from python_ops.delta.table.properties import (
    DEFAULT_RETENTION,
    DELETED_FILE_RETENTION,
    LOG_RETENTION,
)
from python_ops.errors import ConfigError
from python_ops.values import MAX_DAYS, MAX_HOURS, checked_number, retention_text

RECORDED_PREFIX = "sparkdelta.recorded."
RETENTION_PROPERTIES = (DELETED_FILE_RETENTION, LOG_RETENTION)
# The model setting that lets a VACUUM retention below Delta's default be recorded on the table.
RECORD_SHORT_SETTING = "maintenance_vacuum_record_short_retention"
DEFAULT_DELETED_FILE_HOURS = DEFAULT_RETENTION[DELETED_FILE_RETENTION] / timedelta(hours=1)


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


def short_deleted_file_retention(hours: float | None) -> bool:
    """Whether a VACUUM retention is below Delta's default (168 h).

    Recorded as ``delta.deletedFileRetentionDuration``, such a retention would lower the one a
    plain ``VACUUM`` of every other engine uses and let it pass Delta's safety check, without
    the warning the package gives its own VACUUM; it is recorded only when the model asks
    (``maintenance_vacuum_record_short_retention``).
    """
    return hours is not None and float(hours) < DEFAULT_DELETED_FILE_HOURS


def unrecorded_short_retention_note(hours: float) -> str:
    """The words an op's output says once when it leaves a short VACUUM retention unrecorded."""
    return (
        f"VACUUM retention {retention_text(hours)} is not recorded as {DELETED_FILE_RETENTION}: "
        f"it is below Delta's {retention_text(DEFAULT_DELETED_FILE_HOURS)} default, so other "
        f"engines' VACUUM keeps the table's own retention (set '{RECORD_SHORT_SETTING}: true' "
        "to record it for them too)"
    )


def policy_properties(
    *,
    log_retention_days: float | None,
    deleted_file_retention_hours: float | None,
    record_short_retention: bool = False,
) -> dict[str, str]:
    """Table properties that express a model's retention policy, each with its marker.

    Args:
        log_retention_days: The model's log retention, if set.
        deleted_file_retention_hours: The model's VACUUM retention, if set.
        record_short_retention: Also record a VACUUM retention below Delta's 168 h default
            (``short_deleted_file_retention``); without it such a retention is left out, as if
            unset: the table keeps a value someone else set, and one the package recorded goes
            back to Delta's default (``policy_changes``).

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
        short = prop == DELETED_FILE_RETENTION and short_deleted_file_retention(value)
        if short and not record_short_retention:
            continue
        literal = interval_literal(value, unit, setting=setting)
        props[prop] = props[recorded_marker(prop)] = literal
    return props


# Units a Delta interval literal may name, largest first, with their length in microseconds.
_LITERAL_UNITS = (
    ("days", 86_400_000_000),
    ("hours", 3_600_000_000),
    ("minutes", 60_000_000),
    ("seconds", 1_000_000),
    ("milliseconds", 1_000),
    ("microseconds", 1),
)


def interval_literal(value: float, unit: str, *, setting: str) -> str:
    """``value`` ``unit`` as an interval literal every engine reads: a whole number of a unit.

    Delta 4.4 accepts ``interval 1.5 days``; delta-rs and Sail (delta-kernel's parser) accept
    only ``interval <integer> <unit>`` and then refuse every later write of the table. So the
    value is written exactly, in the largest unit that makes it whole (1.5 days as
    ``interval 36 hours``, 0.01 hours as ``interval 36 seconds``).

    Args:
        value: The amount (its decimal spelling is taken exactly).
        unit: ``days`` or ``hours``.
        setting: The config setting it came from, for the error.

    Returns:
        The literal, e.g. ``interval 36 hours``.

    Raises:
        ConfigError: When the value is not a whole number of microseconds.
    """
    from fractions import Fraction

    scale = dict(_LITERAL_UNITS)[unit]
    micros = Fraction(repr(float(value))) * scale
    if micros.denominator != 1:
        raise ConfigError(
            setting=setting,
            value=value,
            fix=f"Use a {unit} value that is a whole number of microseconds (at most "
            f"{len(str(scale)) - 1} decimals).",
        )
    whole = int(micros)
    for name, length in _LITERAL_UNITS:
        if length <= scale and whole % length == 0:
            return f"interval {whole // length} {name}"
    return f"interval {whole} microseconds"
