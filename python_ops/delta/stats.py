"""Delta file statistics (``numRecords``, ``minValues``, ``maxValues``, ``nullCount``).

Written the way Delta writers do, so every reader can skip files with them: timestamps at
millisecond precision (minimum rounded down, maximum rounded *up*, so the range still bounds
every value), dates as ``YYYY-MM-DD``, structs nested. Types Delta keeps no min/max for
(booleans, binary, lists, maps) and values JSON cannot carry (NaN, infinities) get only a
null count; a missing min/max never causes a wrong skip, only a missed one.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Iterable
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

_EPOCH = dt.datetime(1970, 1, 1)


def _timestamp(micros: int, *, utc: bool, round_up: bool) -> str:
    millis, rest = divmod(micros, 1000)
    if round_up and rest:
        millis += 1
    text = (_EPOCH + dt.timedelta(milliseconds=millis)).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3]
    return text + "Z" if utc else text


def _min_max(column: pa.ChunkedArray) -> tuple[Any, Any] | None:
    """JSON-ready (min, max) of a column, None where Delta keeps none or all values are null."""
    kind = column.type
    if column.null_count == len(column):
        return None
    if pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_decimal(kind):
        low, high = (v.as_py() for v in pc.min_max(column).values())
        if pa.types.is_decimal(kind):
            # exact only when the float round-trips; otherwise no stats rather than wrong ones
            if float(low) != low or float(high) != high:
                return None
            return float(low), float(high)
        if pa.types.is_floating(kind) and (
            not (math.isfinite(low) and math.isfinite(high)) or pc.any(pc.is_nan(column)).as_py()
        ):
            return None  # Spark orders NaN above every number; min_max ignores it
        return low, high
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        low, high = (v.as_py() for v in pc.min_max(column).values())
        return low, high
    if pa.types.is_date(kind):
        low, high = (v.as_py() for v in pc.min_max(column).values())
        return low.isoformat(), high.isoformat()
    if pa.types.is_timestamp(kind):
        micros = column.cast(pa.timestamp("us", kind.tz)).cast(pa.int64())
        low, high = (v.as_py() for v in pc.min_max(micros).values())
        utc = kind.tz is not None
        return (
            _timestamp(low, utc=utc, round_up=False),
            _timestamp(high, utc=utc, round_up=True),
        )
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
    return json.dumps(
        {"numRecords": table.num_rows, "minValues": mins, "maxValues": maxs, "nullCount": nulls},
        separators=(",", ":"),
    )
