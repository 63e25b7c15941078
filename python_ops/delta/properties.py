"""Parse Delta's interval strings (``interval 1 week``) the way Delta's table properties do."""

from __future__ import annotations

import re
from datetime import timedelta

from python_ops.errors import ConfigError

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
