"""Statistics values in exactly the JSON Delta writes (``to_json`` of its stats collector).

What Delta 4.4 writes, read from ``StatisticsCollection``/``DataSkippingReader`` and checked
against Delta's own ``StatisticsCollection.recompute`` (tests/integration/test_stats_oracle.py):

* string minimum: the first ``delta.dataSkippingStringPrefixLength`` (32) characters (Spark's
  ``substring``, counted in code points); maximum: ``truncateMaxStringAgg``, counted in UTF-16
  units as Java does, with ``U+007F`` or ``U+10FFFF`` appended as the tie-breaker and null when
  no such prefix exists within twice the length;
* timestamps truncated *down* to milliseconds, ``yyyy-MM-dd'T'HH:mm:ss.SSS`` plus ``Z`` (the UTC
  session time zone) for ``timestamp``, without a zone for ``timestamp_ntz``; Delta's reader adds
  one millisecond to a timestamp maximum before it compares (the protocol's footnote);
* dates ``yyyy-MM-dd``; decimals as JSON numbers with their scale (``BigDecimal.toString``);
  floats at float precision; NaN and infinities as the strings Jackson writes;
* a null min/max leaves the key out (``to_json`` drops nulls); a struct keeps its key (``{}``).
"""

from __future__ import annotations

import datetime as dt
import json
import math
from decimal import Decimal
from typing import Any

_EPOCH = dt.datetime(1970, 1, 1)
_ASCII_MAX = "\x7f"
_UTF8_MAX = "\U0010ffff"


class Raw(str):
    """JSON text written as it is (a number in Delta's spelling)."""

    __slots__ = ()


def dumps(value: Any) -> str:
    """Compact JSON of ``value``; ``Raw`` strings are inserted verbatim."""
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, dict):
        return "{" + ",".join(f"{dumps(str(k))}:{dumps(v)}" for k, v in value.items()) + "}"
    return json.dumps(value, ensure_ascii=False)


def _special(value: float) -> str | None:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return None


def double_value(value: float) -> Any:
    """A double as Delta writes it (a number, or ``"NaN"``/``"Infinity"``)."""
    return _special(value) or Raw(repr(float(value)))


def float_value(value: float) -> Any:
    """A float (32-bit) at its own precision: ``0.1``, not ``0.10000000149011612``."""
    import numpy as np  # only a float32 column needs it: the module loads without numpy

    return _special(value) or Raw(str(np.float32(value)))


def decimal_value(value: Decimal) -> Raw:
    """A decimal as ``BigDecimal.toString`` spells it (same rules as Python's ``str``)."""
    return Raw(str(value))


def timestamp_value(micros: int, *, utc: bool) -> str:
    """Microseconds since the epoch, truncated down to milliseconds, in Delta's format.

    Raises:
        OverflowError: Outside years 1-9999 (the caller refuses the file).
    """
    moment = _EPOCH + dt.timedelta(milliseconds=micros // 1000)
    text = (
        f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}T{moment.hour:02d}:"
        f"{moment.minute:02d}:{moment.second:02d}.{moment.microsecond // 1000:03d}"
    )
    return text + "Z" if utc else text


def string_min(value: str, prefix: int) -> str:
    """Delta's string minimum: the first ``prefix`` code points (``substring``)."""
    return value[: max(prefix, 0)]


def _units(value: str) -> list[int]:
    raw = value.encode("utf-16-le", "surrogatepass")
    return [raw[i] | raw[i + 1] << 8 for i in range(0, len(raw), 2)]


def _take(units: list[int], count: int) -> str:
    raw = b"".join(u.to_bytes(2, "little") for u in units[:count])
    return raw.decode("utf-16-le", "surrogatepass")


def string_max(value: str, prefix: int) -> str | None:
    """Delta's ``truncateMaxStringAgg``: a prefix plus a tie-breaker at least ``value``."""
    units = _units(value)
    if len(units) <= prefix:
        return value
    if prefix <= 0:
        return None
    high = 0xD800 <= units[prefix - 1] <= 0xDBFF and 0xDC00 <= units[prefix] <= 0xDFFF
    current = prefix + 1 if high else prefix
    while current <= 2 * prefix:
        if current >= len(units):
            return value
        if current + 1 < len(units) and units[current : current + 2] == [0xDBFF, 0xDFFF]:
            current += 2
        elif units[current] < ord(_ASCII_MAX):
            return _take(units, current) + _ASCII_MAX
        else:
            return _take(units, current) + _UTF8_MAX
    return None
