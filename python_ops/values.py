"""One validation of numeric inputs, whether they come from the CLI, a run-operation or a config.

Schedulers pass odd values (``nan``, ``inf``, ``-1``, ``"a week"``); each is refused here with a
``ConfigError`` naming the setting, the value and what to write instead, before any op starts.
"""

from __future__ import annotations

import math
from typing import Any

from python_ops.errors import ConfigError

# Upper bounds keep time arithmetic finite (timedelta tops out near 2.7 million years).
MAX_HOURS = 100 * 365 * 24.0
MAX_DAYS = 100 * 365.0


def checked_number(
    value: Any,
    *,
    setting: str,
    minimum: float = 0.0,
    above_minimum: bool = False,
    maximum: float | None = None,
    whole: bool = False,
) -> float:
    """A finite number within bounds, or a ``ConfigError`` that says what to write.

    Args:
        value: The input: a number, or a string holding one (dbt configs, CLI text).
        setting: The setting's name as the user wrote it.
        minimum: The smallest allowed value.
        above_minimum: When True the value must be strictly above ``minimum``.
        maximum: The largest allowed value, if any.
        whole: Require a whole number.

    Returns:
        The value as a float.

    Raises:
        ConfigError: For a non-number, NaN, an infinity, or a value out of bounds.
    """
    bound = f"greater than {minimum:g}" if above_minimum else f"of {minimum:g} or more"
    if maximum is not None:
        bound += f" and at most {maximum:g}"
    kind = "a whole number" if whole else "a number"
    fix = f"Use {kind} {bound}."
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ConfigError(setting=setting, value=value, fix=fix)
    try:
        number = float(value)
    except (ValueError, OverflowError) as err:
        raise ConfigError(setting=setting, value=value, fix=fix) from err
    if (
        not math.isfinite(number)
        or number < minimum
        or (above_minimum and number == minimum)
        or (maximum is not None and number > maximum)
        or (whole and not number.is_integer())
    ):
        raise ConfigError(setting=setting, value=value, fix=fix)
    return number


def optional_number(value: Any, **rules: Any) -> float | None:
    """``checked_number`` for optional inputs: None stays None.

    Args:
        value: The input or None.
        **rules: The keyword arguments of ``checked_number``.

    Returns:
        The checked value, or None.
    """
    return None if value is None else checked_number(value, **rules)


def retention_text(hours: float, *, applied: float | None = None) -> str:
    """A VACUUM retention in hours, worded once for every front end: exact, never ``0 h``.

    The post-hook's and the run-operations' lines, the ops table, the report, the CLI and the
    warnings all print a retention with this function, so ``0.01`` reads the same everywhere.

    Args:
        hours: The retention as set: a model's setting, an argument, a table's property.
        applied: The retention VACUUM applies, when it may differ: a requested retention is
            rounded to whole hours, halves up, as Delta rounds ``RETAIN n HOURS``.

    Returns:
        ``168 h``, ``1.5 h``, ``0.01 h``; where ``applied`` differs,
        ``0.01 h (rounded to 0 h, as Delta's VACUUM does)``.
    """
    text = f"{_hours_number(hours)} h"
    if applied is not None and applied != hours:
        text += f" (rounded to {_hours_number(applied)} h, as Delta's VACUUM does)"
    return text


def _hours_number(hours: float) -> str:
    """Hours as a plain decimal, exact to 12 places (``168``, ``0.01``), never a bare ``0``."""
    text = f"{float(hours):.12f}".rstrip("0").rstrip(".")
    return text if text != "0" or hours == 0 else f"{hours:g}"
