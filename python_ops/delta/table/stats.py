"""Delta file statistics (``numRecords``, ``minValues``, ``maxValues``, ``nullCount``).

Written the way Delta writers do, so every reader can skip files with them (compared with what
Delta 4.4 writes for the same values, tests/integration/test_zorder_extremes.py):

* timestamps at millisecond precision, ``yyyy-MM-ddTHH:mm:ss.SSS`` (four-digit years, so year 1
  is ``0001``), with ``Z`` when the column has a time zone; the minimum rounded down, the
  maximum rounded *up* so the range still bounds every value, except that no bound goes past
  ``9999-12-31T23:59:59.999``, the last one Delta writes (Delta's reader adds one millisecond to
  a timestamp maximum before it compares, as the protocol says);
* dates ``yyyy-MM-dd`` (``0001-01-01`` to ``9999-12-31``);
* decimals as exact JSON numbers with their scale (``decimal(38,0)`` at its maximum included);
* integers as JSON integers (64-bit extremes exact); floating zeros as ``0.0`` (never ``-0.0``);
* structs nested.

Types Delta keeps no min/max for (booleans, binary, lists, maps), floating columns holding NaN
or an infinity (JSON numbers cannot carry them), and temporal values outside years 1-9999 get
only a null count; a missing min/max never causes a wrong skip, only a missed one. Floating
numbers are written as their shortest ``repr`` through ``Decimal``, so a statistics document
read back with ``loads_stats`` and written with ``dumps_stats`` keeps its exact text.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Iterable
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_ORDINAL = dt.date(1970, 1, 1).toordinal()
_MS_PER_DAY = 86_400_000
# the first and last millisecond Delta writes a timestamp bound for (years 1 and 9999)
_LOW_MS = (dt.datetime(1, 1, 1) - _EPOCH) // dt.timedelta(milliseconds=1)
_HIGH_MS = (dt.datetime(9999, 12, 31, 23, 59, 59, 999_000) - _EPOCH) // dt.timedelta(milliseconds=1)
# a timestamp unit's value in milliseconds: times the first number, divided by the second
_TO_MS = {"s": (1000, 1), "ms": (1, 1), "us": (1, 1000), "ns": (1, 1_000_000)}


def dumps_stats(document: Any) -> str:
    """Compact JSON of a statistics document; ``Decimal`` values as exact JSON numbers.

    Args:
        document: Dicts, strings, integers, ``Decimal`` numbers (no floats, no NaN).

    Returns:
        The JSON text.
    """
    if isinstance(document, dict):
        items = (f"{json.dumps(str(k))}:{dumps_stats(v)}" for k, v in document.items())
        return "{" + ",".join(items) + "}"
    if isinstance(document, Decimal):
        return str(document)
    return json.dumps(document, allow_nan=False)


def loads_stats(text: str) -> Any:
    """A statistics document with its fractional numbers as ``Decimal`` (exact, as written)."""
    return json.loads(text, parse_float=Decimal)


def _timestamp_text(millis: int, *, utc: bool) -> str:
    """A millisecond since the epoch in Delta's format (four-digit year)."""
    moment = _EPOCH + dt.timedelta(milliseconds=millis)
    text = (
        f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}T{moment.hour:02d}:"
        f"{moment.minute:02d}:{moment.second:02d}.{moment.microsecond // 1000:03d}"
    )
    return text + "Z" if utc else text


def _timestamp_bounds(column: pa.ChunkedArray) -> tuple[str, str] | None:
    """(min rounded down, max rounded up) to milliseconds; None outside years 1-9999."""
    kind = column.type
    low, high = (v.as_py() for v in pc.min_max(column.cast(pa.int64())).values())
    times, per = _TO_MS[kind.unit]
    low_ms = low * times // per
    high_floor = high * times // per
    high_ms = -(-high * times // per)
    if low_ms < _LOW_MS or high_floor > _HIGH_MS:
        return None  # Delta writes no bound there; Python's datetime has none either
    utc = kind.tz is not None
    return (
        _timestamp_text(low_ms, utc=utc),
        _timestamp_text(min(high_ms, _HIGH_MS), utc=utc),
    )


def _date_bounds(column: pa.ChunkedArray) -> tuple[str, str] | None:
    """ISO dates of the minimum and maximum; None outside years 1-9999."""
    date64 = pa.types.is_date64(column.type)
    storage = column.cast(pa.int64() if date64 else pa.int32())  # days, or ms for date64
    per_day = _MS_PER_DAY if date64 else 1
    low, high = (v.as_py() // per_day for v in pc.min_max(storage).values())
    first, last = dt.date.min.toordinal(), dt.date.max.toordinal()
    if not first <= _EPOCH_ORDINAL + low <= _EPOCH_ORDINAL + high <= last:
        return None
    return (
        dt.date.fromordinal(_EPOCH_ORDINAL + low).isoformat(),
        dt.date.fromordinal(_EPOCH_ORDINAL + high).isoformat(),
    )


def _number_bounds(column: pa.ChunkedArray) -> tuple[Any, Any] | None:
    """Exact JSON-ready (min, max) of an integer, floating or decimal column."""
    kind = column.type
    low, high = (v.as_py() for v in pc.min_max(column).values())
    if pa.types.is_decimal(kind):
        return low, high  # Decimal: written exactly, with its scale (as Delta writes it)
    if pa.types.is_floating(kind):
        if not (math.isfinite(low) and math.isfinite(high)) or pc.any(pc.is_nan(column)).as_py():
            return None  # Spark orders NaN above every number; min_max ignores it
        # + 0.0 makes -0.0 zero, as Delta writes it (Arrow's min of -0.0 and 0.0 is the first)
        return Decimal(repr(float(low) + 0.0)), Decimal(repr(float(high) + 0.0))
    return int(low), int(high)


def _min_max(column: pa.ChunkedArray) -> tuple[Any, Any] | None:
    """JSON-ready (min, max) of a column, None where Delta keeps none or all values are null."""
    kind = column.type
    if column.null_count == len(column):
        return None
    if pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_decimal(kind):
        return _number_bounds(column)
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        low, high = (v.as_py() for v in pc.min_max(column).values())
        return low, high
    if pa.types.is_date(kind):
        return _date_bounds(column)
    if pa.types.is_timestamp(kind):
        return _timestamp_bounds(column)
    return None


def _column_stats(
    column: pa.ChunkedArray,
) -> tuple[Any, Any | None, Any | None]:
    """(null count, min, max) of one column; structs recurse into their fields."""
    if pa.types.is_struct(column.type):
        nulls: dict[str, Any] = {}
        mins: dict[str, Any] = {}
        maxs: dict[str, Any] = {}
        for i in range(column.type.num_fields):
            name = column.type.field(i).name
            child = pa.chunked_array(
                [chunk.field(i) for chunk in column.chunks], type=column.type.field(i).type
            )
            nulls[name], low, high = _column_stats(child)
            if low is not None:
                mins[name], maxs[name] = low, high
        return nulls, mins or None, maxs or None
    bounds = _min_max(column)
    low, high = bounds if bounds is not None else (None, None)
    return column.null_count, low, high


def delta_stats(table: pa.Table, columns: Iterable[str]) -> str:
    """The ``stats`` JSON of an ``add`` action for a file holding ``table``.

    Args:
        table: The rows of the file.
        columns: Top-level columns to collect statistics for (Delta's indexed columns).

    Returns:
        The statistics as a JSON string.
    """
    nulls: dict[str, Any] = {}
    mins: dict[str, Any] = {}
    maxs: dict[str, Any] = {}
    for name in columns:
        if name not in table.column_names:
            continue
        nulls[name], low, high = _column_stats(table.column(name))
        if low is not None:
            mins[name], maxs[name] = low, high
    return dumps_stats(
        {"numRecords": table.num_rows, "minValues": mins, "maxValues": maxs, "nullCount": nulls}
    )
