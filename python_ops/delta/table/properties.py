"""Delta table properties: every name this project reads or writes, defaults, retentions.

Interval values (``interval 1 week``) are parsed the way Delta parses them; ``resolve_retention``
is the one place a retention is decided (requested, else the table property, else Delta's
default), and ``Retention.cutoff_ms`` the one place its cutoff is computed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta

from python_ops.errors import ConfigError
from python_ops.values import retention_text

DELETED_FILE_RETENTION = "delta.deletedFileRetentionDuration"
LOG_RETENTION = "delta.logRetentionDuration"
ENABLE_EXPIRED_LOG_CLEANUP = "delta.enableExpiredLogCleanup"
CHECKPOINT_PROTECTION_VERSION = "delta.requireCheckpointProtectionBeforeVersion"
IN_COMMIT_TIMESTAMPS = "delta.enableInCommitTimestamps"
IN_COMMIT_TIMESTAMP_VERSION = "delta.inCommitTimestampEnablementVersion"
TARGET_FILE_SIZE = "delta.targetFileSize"
STATS_COLUMNS = "delta.dataSkippingStatsColumns"
INDEXED_COLUMNS = "delta.dataSkippingNumIndexedCols"

# Delta's defaults for the retention properties.
DEFAULT_RETENTION: dict[str, timedelta] = {
    DELETED_FILE_RETENTION: timedelta(weeks=1),
    LOG_RETENTION: timedelta(days=30),
}
DEFAULT_DELETED_FILE_RETENTION_HOURS = DEFAULT_RETENTION[DELETED_FILE_RETENTION] / timedelta(
    hours=1
)
DEFAULT_LOG_RETENTION_DAYS = DEFAULT_RETENTION[LOG_RETENTION] / timedelta(days=1)
_HOUR_MS = 3_600_000

_UNITS_MS = {
    "nanosecond": 1e-6,
    "microsecond": 1e-3,
    "millisecond": 1.0,
    "second": 1_000.0,
    "minute": 60_000.0,
    "hour": 3_600_000.0,
    "day": 86_400_000.0,
    "week": 7 * 86_400_000.0,
}
_MAX_MS = 100 * 365 * 86_400_000.0  # keeps every later time computation finite
_PART = re.compile(r"(-?\d+(?:\.\d+)?)\s*([a-z]+?)s?\b")


def parse_interval(text: str, *, setting: str = "interval") -> timedelta:
    """Parse a Delta/Spark calendar interval such as ``interval 1 week`` or ``30 days``.

    Months and years are refused, as Delta refuses them for retention settings (they have no
    fixed length). Several parts add up (``interval 1 day 12 hours``).

    Args:
        text: The interval text; the leading ``interval`` keyword is optional.
        setting: The name of the setting being parsed, used in error messages.

    Returns:
        The interval as a ``timedelta``.

    Raises:
        ConfigError: When the text is empty, has an unknown or variable-length unit, is
            negative or longer than 100 years.
    """
    body = text.strip().lower()
    if body.startswith("interval"):
        body = body[len("interval") :].strip()
    parts = _PART.findall(body)
    leftover = _PART.sub("", body).strip()
    if not parts or leftover:
        raise ConfigError(
            setting=setting,
            value=text,
            fix="Write it as 'interval <n> <unit>' with unit week, day, hour, minute or second.",
        )
    total_ms = 0.0
    for amount, unit in parts:
        if unit in ("month", "year", "mon"):
            raise ConfigError(
                setting=setting,
                value=text,
                fix="Months and years have no fixed length; use weeks or days instead.",
            )
        if unit not in _UNITS_MS:
            raise ConfigError(
                setting=setting,
                value=text,
                fix=f"Unknown unit '{unit}'; use one of {', '.join(sorted(_UNITS_MS))}.",
            )
        total_ms += float(amount) * _UNITS_MS[unit]
    if total_ms < 0:
        raise ConfigError(setting=setting, value=text, fix="Use a duration of zero or more.")
    if total_ms > _MAX_MS:
        raise ConfigError(setting=setting, value=text, fix="Use a duration of at most 100 years.")
    return timedelta(milliseconds=total_ms)


@dataclass(frozen=True)
class Retention:
    """A resolved retention period and where it came from.

    Attributes:
        period: How long removed files (or log entries) are kept.
        source: ``requested``, ``table property`` or ``default``.
        requested_hours: A requested VACUUM retention as asked for, before VACUUM rounded it
            to the whole hours of ``period`` (None: not requested, or not rounded).
    """

    period: timedelta
    source: str
    requested_hours: float | None = None

    @property
    def hours_text(self) -> str:
        """The retention in hours as every front end prints it (``values.retention_text``)."""
        if self.requested_hours is None:
            return retention_text(self.hours)
        return retention_text(self.requested_hours, applied=self.hours)

    @property
    def hours(self) -> float:
        """The period in hours."""
        return self.period / timedelta(hours=1)

    @property
    def days(self) -> float:
        """The period in days."""
        return self.period / timedelta(days=1)

    def cutoff_ms(self, now_ms: int) -> int:
        """The moment (ms since the epoch) before which an entry is older than the period."""
        return now_ms - int(self.hours * _HOUR_MS)


def resolve_retention(
    configuration: Mapping[str, str], prop: str, *, requested: timedelta | None = None
) -> Retention:
    """The retention for ``prop``: requested, else the table property, else Delta's default.

    Args:
        configuration: The table's properties.
        prop: ``DELETED_FILE_RETENTION`` or ``LOG_RETENTION``.
        requested: An explicitly requested period (already validated), or None.

    Returns:
        The retention and its source.

    Raises:
        ConfigError: When the table property cannot be parsed.
    """
    if requested is not None:
        return Retention(requested, "requested")
    text = configuration.get(prop)
    if text is not None:
        return Retention(parse_interval(text, setting=prop), "table property")
    return Retention(DEFAULT_RETENTION[prop], "default")
