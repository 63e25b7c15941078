"""VACUUM's retention: the table's minimum and Delta's safety check against it.

Delta refuses a VACUUM retention below the table's ``delta.deletedFileRetentionDuration``
(168 h unless set) unless the check is turned off; so does this package, unless the caller
allows it (``allow_short_retention``: a model's ``maintenance_vacuum_allow_short_retention``,
the command line's ``--allow-short-retention``). The check runs where VACUUM runs, and at a
model's build. The op names the override by its own parameter; the caller says how its user
sets it: in the refusal (``RetentionTooShortError.attributed``) and in the warning of an allowed
override (``OverrideWords``).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta

from python_ops.delta.state.snapshot import Snapshot
from python_ops.delta.table.properties import DELETED_FILE_RETENTION, Retention, resolve_retention
from python_ops.errors import RetentionTooShortError
from python_ops.invocation import Invocation, warn
from python_ops.values import MAX_HOURS, checked_number, retention_text

log = logging.getLogger("python_ops.ops.vacuum")

OVERRIDE = "allow_short_retention"  # the parameter that allows a retention below the minimum


@dataclass(frozen=True)
class OverrideWords:
    """How the caller names the table and the override in the warning of an allowed override.

    Attributes:
        table: What the caller calls the table (None: its location).
        override: How the caller's user allowed it (a model's key, a command-line flag).
    """

    table: str | None = None
    override: str = OVERRIDE


def delta_round_hours(hours: float) -> int:
    """Whole hours as Delta rounds a requested retention: half up (Scala's ``math.round``).

    Python's ``round`` rounds half to even (0.5 h -> 0 h, 2.5 h -> 2 h); Delta keeps 1 h and
    3 h there, so a 40-minute-old file survives ``RETAIN 0.5 HOURS``.

    Args:
        hours: A non-negative number of hours.

    Returns:
        The nearest whole hour, halves rounded up.
    """
    whole = math.floor(hours)
    return whole + 1 if hours - whole >= 0.5 else whole


def vacuum_retention(
    snapshot: Snapshot,
    retention_hours: float | None,
    *,
    allow_short_retention: bool,
    invocation: Invocation | None = None,
    words: OverrideWords | None = None,
) -> tuple[Retention, bool]:
    """Decide VACUUM's retention for a table: ``checked_retention`` on its snapshot's properties.

    Args:
        snapshot: The table snapshot (for ``delta.deletedFileRetentionDuration``).
        retention_hours: Requested hours, or None for the table's setting.
        allow_short_retention: Allow a requested retention below the table's minimum.
        invocation: The command it runs in (its override warning is given once per command).
        words: How the caller names the table and the override in that warning.

    Returns:
        (retention, overridden), as ``checked_retention``.
    """
    return checked_retention(
        snapshot.metadata.configuration,
        snapshot.location,
        retention_hours,
        allow_short_retention=allow_short_retention,
        invocation=invocation,
        words=words,
    )


def checked_retention(
    configuration: Mapping[str, str],
    location: str,
    retention_hours: float | None,
    *,
    allow_short_retention: bool,
    invocation: Invocation | None = None,
    words: OverrideWords | None = None,
) -> tuple[Retention, bool]:
    """Delta's safety check of a VACUUM retention against a table's properties.

    Also what a model's build checks first (before the table exists, against the properties
    the model will give it): a retention VACUUM would refuse is refused at build time.

    Args:
        configuration: The table's properties (for ``delta.deletedFileRetentionDuration``).
        location: The table location, for messages.
        retention_hours: Requested hours, or None for the table's setting.
        allow_short_retention: Allow a requested retention below the table's minimum.
        invocation: The command it runs in: an allowed override is warned about once per
            command and table, however many checks meet it (None: every time).
        words: How the caller names the table and the override in that warning (None: the
            location and ``allow_short_retention``).

    Returns:
        (retention, overridden): overridden is True when the check was bypassed by the
        override.

    Raises:
        ConfigError: For a negative retention or an unparsable table property.
        RetentionTooShortError: When the requested retention is below the minimum, naming
            ``allow_short_retention`` as its override (the caller words how to set it).
    """
    table = resolve_retention(configuration, DELETED_FILE_RETENTION)
    minimum = table.hours
    if retention_hours is None:
        return table, False
    checked_number(retention_hours, setting="retention_hours", maximum=MAX_HOURS)
    hours = float(delta_round_hours(float(retention_hours)))
    retention = Retention(timedelta(hours=hours), "requested", float(retention_hours))
    overridden = hours < minimum
    if overridden:
        if not allow_short_retention:
            raise _too_short(configuration, location, retention_hours, minimum)
        said = words or OverrideWords()
        warn(
            invocation,
            log,
            "short retention",
            location,
            "vacuum %s: retention %s is below the table's minimum %s; allowed by %s",
            said.table or location,
            retention.hours_text,
            retention_text(minimum),
            said.override,
        )
    return retention, overridden


def _too_short(
    configuration: Mapping[str, str],
    location: str,
    retention_hours: float,
    minimum: float,
) -> RetentionTooShortError:
    """Delta's refusal of a retention below the table's minimum, naming the override."""
    prop = configuration.get(DELETED_FILE_RETENTION)
    return RetentionTooShortError(
        setting="retention_hours",
        value=retention_hours,
        fix=f"The minimum for table {location} is {retention_text(minimum)} "
        f"({DELETED_FILE_RETENTION}{'=' + prop if prop else ' default'}); files of writers "
        f"that have not committed yet could be deleted. Request at least "
        f"{retention_text(minimum)}, "
        "or",
        override=OVERRIDE,
    )
