"""One file's statistics: from its Parquet footer where that is exact, else from its rows.

Exact from the footer: ``numRecords`` (the row groups' row counts), a column's ``nullCount``
(the sum of its row groups' null counts; a struct field's count includes the rows whose struct
is null, as Spark's ``s.f IS NULL`` does) and the min/max of integers and dates (Parquet's
signed order is theirs). Read from the rows: strings (a footer may hold truncated bounds, and
pyarrow does not say whether they are exact), floats (Parquet leaves NaN out of its bounds;
Spark orders NaN above every number), decimals, timestamps (INT96 has no statistics), lists
and maps, and any column whose footer statistics are missing. Deletion vectors are not applied:
the statistics describe the file's physical rows (``numRecords`` must, by the protocol).

Under column mapping a column is looked up by its physical name; in ``id`` mode the file's
Parquet field id of that column must also be the schema's ``delta.columnMapping.id`` (Delta
reads such tables by field id), else the op refuses rather than guess which column is meant.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from python_ops.errors import StatsUnsupportedError
from python_ops.ops.stats.columns import StatsField
from python_ops.ops.stats.delta_json import (
    decimal_value,
    double_value,
    float_value,
    string_max,
    string_min,
    timestamp_value,
)

_FOOTER_MIN_MAX = frozenset({"byte", "short", "integer", "long", "date"})
_FOOTER_LOGICAL = ("None", "Int", "Date")
_FIELD_ID = b"PARQUET:field_id"


@dataclass(frozen=True)
class LeafStats:
    """A leaf column's statistics in Delta's JSON values (None: no min/max)."""

    null_count: int
    low: Any = None
    high: Any = None


@dataclass(frozen=True)
class FileStats:
    """One file's statistics tree and where they came from.

    Attributes:
        num_records: Physical rows.
        leaves: Column path (tuple of names) to its statistics.
        from_footer: Every value came from the footer (no row was read).
    """

    num_records: int
    leaves: dict[tuple[str, ...], LeafStats]
    from_footer: bool


def _leaf_paths(
    fields: Sequence[StatsField], parent: tuple[str, ...] = ()
) -> list[tuple[tuple[str, ...], StatsField]]:
    out = []
    for f in fields:
        path = (*parent, f.stored)
        out.extend(_leaf_paths(f.children, path) if f.is_struct else [(path, f)])
    return out


def _footer_leaf(meta: Any, path: tuple[str, ...], field: StatsField) -> LeafStats | None:
    """A leaf's statistics from the row groups' footer statistics, None when not exact."""
    dotted = ".".join(path)
    nulls = 0
    low: Any = None
    high: Any = None
    index = next((i for i in range(meta.num_columns) if meta.schema.column(i).path == dotted), None)
    for rg in range(meta.num_row_groups):
        group = meta.row_group(rg)
        chunk = None if index is None else group.column(index)
        if chunk is None or chunk.statistics is None or not chunk.statistics.has_null_count:
            return None
        stats = chunk.statistics
        nulls += stats.null_count
        if not field.has_min_max or stats.null_count == group.num_rows:
            continue
        if field.delta_type not in _FOOTER_MIN_MAX or not stats.has_min_max:
            return None
        if str(stats.logical_type).split("(")[0] not in _FOOTER_LOGICAL or (
            str(stats.logical_type).startswith("Int") and "false" in str(stats.logical_type)
        ):
            return None
        low = stats.min if low is None else min(low, stats.min)
        high = stats.max if high is None else max(high, stats.max)
    if field.has_min_max and low is not None:
        if field.delta_type == "date":
            return LeafStats(nulls, low.isoformat(), high.isoformat())
        return LeafStats(nulls, int(low), int(high))
    return LeafStats(nulls)


def _plain(values: pa.ChunkedArray) -> pa.ChunkedArray:
    kind = values.type
    if pa.types.is_dictionary(kind):
        return values.cast(kind.value_type)
    if pa.types.is_string_view(kind) or pa.types.is_string(kind):
        return values.cast(pa.large_string())
    return values


def _micros(values: pa.ChunkedArray) -> pa.ChunkedArray:
    factor = {"s": 1_000_000, "ms": 1000, "us": 1}[values.type.unit]
    return pc.multiply(values.cast(pa.int64()), factor)


def _ns_to_micros(values: pa.ChunkedArray) -> list[int]:
    # floor division, as Spark reads nanoseconds (INT96) into microseconds
    return [v // 1000 for v in values.cast(pa.int64()).to_pylist() if v is not None]


def _data_leaf(values: pa.ChunkedArray, field: StatsField, prefix: int) -> LeafStats:
    """A leaf's statistics from its values (Spark's min/max and null count)."""
    nulls = values.null_count
    if not field.has_min_max or nulls == len(values):
        return LeafStats(nulls)
    values = _plain(values)
    kind = field.delta_type
    if kind in ("float", "double"):
        present = pc.drop_null(values)
        nan = pc.is_nan(present)
        numbers = pc.filter(present, pc.invert(nan))
        as_json = float_value if kind == "float" else double_value
        high_nan = bool(pc.any(nan).as_py())
        if len(numbers) == 0:
            return LeafStats(nulls, as_json(float("nan")), as_json(float("nan")))
        low, high = (v.as_py() for v in pc.min_max(numbers).values())
        return LeafStats(nulls, as_json(low), as_json(float("nan") if high_nan else high))
    if kind in ("timestamp", "timestamp_ntz"):
        if values.type.unit == "ns":
            micros = _ns_to_micros(values)
            low_us, high_us = min(micros), max(micros)
        else:
            low_us, high_us = (v.as_py() for v in pc.min_max(_micros(values)).values())
        utc = kind == "timestamp"
        return LeafStats(nulls, timestamp_value(low_us, utc=utc), timestamp_value(high_us, utc=utc))
    low, high = (v.as_py() for v in pc.min_max(values).values())
    if kind == "string":
        return LeafStats(nulls, string_min(low, prefix), string_max(high, prefix))
    if kind == "date":
        return LeafStats(nulls, low.isoformat(), high.isoformat())
    if kind.startswith("decimal"):
        return LeafStats(nulls, decimal_value(low), decimal_value(high))
    return LeafStats(nulls, int(low), int(high))


def _column_at(table: pa.Table, path: tuple[str, ...]) -> pa.ChunkedArray | None:
    """The values at ``path``, a struct field's nulls including its parent's (``flatten``)."""
    if path[0] not in table.column_names:
        return None
    column: pa.ChunkedArray = table.column(path[0])
    for name in path[1:]:
        kind = column.type
        if not pa.types.is_struct(kind) or kind.get_field_index(name) < 0:
            return None
        index = kind.get_field_index(name)
        column = pa.chunked_array(
            [chunk.flatten()[index] for chunk in column.chunks], type=kind.field(index).type
        )
    return column


def _field_id(field: pa.Field) -> int | None:
    raw = (field.metadata or {}).get(_FIELD_ID)
    return None if raw is None else int(raw)


def check_field_ids(arrow_fields: Sequence[pa.Field], fields: Sequence[StatsField]) -> None:
    """Refuse a file whose Parquet field ids do not match the schema's column ids (``id`` mode).

    A column absent by physical name, whose id no other column of the file carries, is one the
    file predates (all null). Fields without a ``field_id`` (no ``id`` mapping) are not checked.

    Raises:
        StatsUnsupportedError: A column without a field id, with another id, or an id found
            under another name.
    """
    by_name = {f.name: f for f in arrow_fields}
    for field in fields:
        if field.field_id is None:
            continue
        found = by_name.get(field.stored)
        if found is None:
            other = [f.name for f in arrow_fields if _field_id(f) == field.field_id]
            if other:
                raise StatsUnsupportedError(
                    f"the file names column id {field.field_id} '{other[0]}', the schema "
                    f"'{field.stored}'; Delta reads id-mapped tables by field id, which this op "
                    "does not. Nothing was written."
                )
            continue
        if _field_id(found) != field.field_id:
            raise StatsUnsupportedError(
                f"column '{field.stored}' of the file has Parquet field id {_field_id(found)}, "
                f"the schema's delta.columnMapping.id is {field.field_id}; Delta reads id-mapped "
                "tables by field id, so this op does not guess. Nothing was written."
            )
        if field.is_struct and pa.types.is_struct(found.type):
            check_field_ids(list(found.type), field.children)


def file_stats(
    handle: Any, fields: Sequence[StatsField], *, string_prefix: int, footer_only: bool = False
) -> FileStats | None:
    """Statistics of one Parquet file for the statistics columns ``fields``.

    Args:
        handle: An open file (or path) pyarrow's ``ParquetFile`` reads.
        fields: The statistics tree (``columns.indexed_fields``).
        string_prefix: ``delta.dataSkippingStringPrefixLength``.
        footer_only: Return None instead of reading rows (a dry run's estimate).

    Returns:
        The statistics (None when ``footer_only`` and rows would be needed).
    """
    parquet = pq.ParquetFile(handle)
    meta = parquet.metadata
    leaves: dict[tuple[str, ...], LeafStats] = {}
    need: list[tuple[tuple[str, ...], StatsField]] = []
    in_file = set(parquet.schema_arrow.names)
    check_field_ids(list(parquet.schema_arrow), fields)
    for path, field in _leaf_paths(fields):
        if path[0] not in in_file:
            leaves[path] = LeafStats(meta.num_rows)  # a column the file predates: all null
            continue
        found = _footer_leaf(meta, path, field)
        if found is None:
            need.append((path, field))
        else:
            leaves[path] = found
    if need:
        if footer_only:
            return None
        table = parquet.read(columns=sorted({p[0] for p, _ in need}), use_threads=False)
        for path, field in need:
            values = _column_at(table, path)
            leaves[path] = (
                LeafStats(meta.num_rows)
                if values is None
                else _data_leaf(values, field, string_prefix)
            )
    return FileStats(meta.num_rows, leaves, from_footer=not need)
