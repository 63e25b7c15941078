"""Z-order range ids without holding a partition: each column's rank boundaries, found once.

``zorder.range_ids`` gives a value the id ``floor(r * 2**bits / n)``, where ``r`` is the number of
the partition's values below it (``pc.rank`` with ties at their lowest rank, nulls last). That
id only grows with the value, so it is fixed by ``2**bits - 1`` boundaries: ``b_j`` is the value
of rank ``ceil(j * n / 2**bits)``, and a value's id is the number of boundaries below it. With
the boundaries in hand a batch's ids need only the batch (``ColumnRanges.ids``), and they are
exactly ``range_ids``'s ids over the whole partition when the boundaries came from every value.

A pass over the Z-order columns only (``ranges_for``) finds them: from every value when the
columns fit in ``sample_bytes``, else from a uniform random sample (a boundary's rank is then
off by about ``n / sqrt(sample rows)``, well under one range at a million sampled rows). Nulls
share one id, from exact counts either way. ``ZOrderKeys`` interleaves the columns' ids into
the Z-key the external sort orders rows by.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from python_ops.ops.optimize.sorting.integer_ranks import BoundaryIndex, is_integer, select
from python_ops.ops.optimize.sorting.partition_batches import PartitionSource

if TYPE_CHECKING:
    from numpy.typing import NDArray

RANGE_BITS = 10  # 1,024 ranges per column
KEY_BITS = 64
_SEED = 20261126  # a fixed seed: a retried rewrite writes the same files


def _numeric(kind: pa.DataType) -> bool:
    """Types whose order is numpy's order of their integer or float values."""
    return bool(
        pa.types.is_integer(kind)
        or pa.types.is_floating(kind)
        or pa.types.is_timestamp(kind)
        or pa.types.is_date(kind)
        or pa.types.is_time(kind)
        or pa.types.is_duration(kind)
    )


def _as_numpy(values: pa.Array) -> NDArray[np.generic]:
    """Non-null numeric values as numpy (temporal types as their integers)."""
    kind = values.type
    if pa.types.is_timestamp(kind) or pa.types.is_duration(kind) or pa.types.is_time64(kind):
        values = values.cast(pa.int64())
    elif pa.types.is_date32(kind) or pa.types.is_time32(kind):
        values = values.cast(pa.int32())
    elif pa.types.is_date64(kind):
        values = values.cast(pa.int64())
    return np.asarray(values.to_numpy(zero_copy_only=False))


@dataclass(frozen=True)
class ColumnRanges:
    """One column's range boundaries.

    Attributes:
        boundaries: Non-null values in ascending order; a value's id is how many are below it.
        null_id: The id every null gets.
    """

    boundaries: pa.Array
    null_id: int

    @cached_property
    def _index(self) -> BoundaryIndex | None:
        """A table of the boundaries per 16-bit bucket, for integer (and temporal) columns."""
        if not len(self.boundaries) or not _numeric(self.boundaries.type):
            return None
        numbers = _as_numpy(self.boundaries)
        return BoundaryIndex(numbers) if is_integer(numbers) else None

    def ids(self, values: pa.Array | pa.ChunkedArray) -> NDArray[np.uint64]:
        """Range ids of ``values`` (one per value, nulls at ``null_id``)."""
        if isinstance(values, pa.ChunkedArray):
            values = values.combine_chunks()
        if pa.types.is_dictionary(values.type):
            values = values.dictionary_decode()
        if _numeric(values.type):
            filled = pc.fill_null(values, self.boundaries[0]) if len(self.boundaries) else values
            numbers = _as_numpy(filled)
            if self._index is not None and is_integer(numbers):
                ids = self._index.count_below(numbers)
            else:
                found = np.searchsorted(_as_numpy(self.boundaries), numbers, side="left")
                ids = found.astype(np.uint64)
        else:
            # ranks in (boundaries + values) minus ranks in values = boundaries below each value
            both = pa.concat_arrays([self.boundaries, values])
            mixed = pc.rank(both, sort_keys="ascending", tiebreaker="min")
            alone = pc.rank(values, sort_keys="ascending", tiebreaker="min")
            below = np.asarray(mixed, dtype=np.int64)[len(self.boundaries) :]
            ids = (below - np.asarray(alone, dtype=np.int64)).astype(np.uint64)
        if values.null_count:
            ids[np.asarray(values.is_null())] = np.uint64(self.null_id)
        return ids


def _picked(ordered_len: int, seen: int, ranges: int) -> list[int]:
    """Positions in the sorted non-null values of the boundaries (ranks ``ceil(j*seen/ranges)``)."""
    positions = [(j * seen + ranges - 1) // ranges for j in range(1, ranges)]
    return [t - 1 for t in positions if 1 <= t <= ordered_len]


def column_ranges(
    sample: pa.Array | pa.ChunkedArray, *, rows: int, non_null_rows: int, bits: int
) -> ColumnRanges:
    """Boundaries from ``sample`` (every value of the column, or a uniform sample of them).

    Args:
        sample: The values seen (nulls included).
        rows: The column's exact row count.
        non_null_rows: Its exact count of non-null values.
        bits: Bits per id.

    Returns:
        The column's ranges; exact when ``sample`` is every value.
    """
    ranges = 1 << bits
    present = sample.drop_null()
    picked = _picked(len(present), len(sample), ranges)
    if not picked:
        boundaries = present.slice(0, 0)
    elif _numeric(present.type):
        # numpy's sort orders these types as Arrow does (NaN last), several times faster;
        # integers need only the 16-bit buckets holding a boundary sorted (``select``)
        chunks = present.chunks if isinstance(present, pa.ChunkedArray) else [present]
        storage = pa.array(select([_as_numpy(c) for c in chunks], picked))
        boundaries = storage.cast(present.type) if storage.type != present.type else storage
    else:
        if isinstance(present, pa.ChunkedArray):
            present = present.combine_chunks()
        boundaries = present.take(pc.sort_indices(present).take(pa.array(picked, pa.int64())))
    if isinstance(boundaries, pa.ChunkedArray):
        boundaries = boundaries.combine_chunks()
    null_id = (non_null_rows * ranges) // rows if rows else 0
    return ColumnRanges(boundaries=boundaries, null_id=null_id)


def ranges_for(
    batches: Callable[[], Iterable[pa.RecordBatch]],
    columns: list[str],
    *,
    rows: int,
    sample_bytes: int,
    bits: int,
) -> list[ColumnRanges]:
    """Each Z-order column's ranges from one pass over the key columns.

    Args:
        batches: Starts a pass over the partition's rows, ``columns`` only.
        columns: The Z-order columns.
        rows: The partition's row count.
        sample_bytes: Memory the kept values may use.
        bits: Bits per id.

    Returns:
        One ``ColumnRanges`` per column, in order.
    """
    rng = np.random.default_rng(_SEED)
    kept: list[pa.Table] = []
    non_null = [0] * len(columns)
    probability: float | None = None  # decided on the first rows: keep all, or sample
    for batch in batches():
        table = pa.Table.from_batches([batch]).select(columns)
        for i, name in enumerate(columns):
            non_null[i] += len(table) - table.column(name).null_count
        if probability is None and len(table):
            width = max(1, table.nbytes // len(table))
            probability = min(1.0, sample_bytes / (width * max(rows, 1)))
        if probability is not None and probability < 1.0:
            table = table.filter(pa.array(rng.random(len(table)) < probability))
        kept.append(table)
    sample = pa.concat_tables(kept) if kept else None
    out = []
    for i, name in enumerate(columns):
        values = sample.column(name) if sample is not None else pa.array([])
        out.append(column_ranges(values, rows=rows, non_null_rows=non_null[i], bits=bits))
    return out


def interleave(ids: list[NDArray[np.uint64]], bits: int) -> NDArray[np.uint64]:
    """Interleave the bits of each column's range ids, most significant bits first.

    Args:
        ids: Each column's range ids, all of one length.
        bits: Bits per id.

    Returns:
        One 64-bit key per row.
    """
    k = len(ids)
    spread = _spread(bits, k)
    key = np.zeros(len(ids[0]), dtype=np.uint64)
    for c, column_ids in enumerate(ids):
        key |= spread[column_ids.astype(np.intp)] << np.uint64(k - 1 - c)
    return key


@lru_cache(maxsize=16)
def _spread(bits: int, k: int) -> NDArray[np.uint64]:
    """Every ``bits``-bit id with its bit ``b`` moved to bit ``b * k`` (a lookup table)."""
    ids = np.arange(1 << bits, dtype=np.uint64)
    table = np.zeros(1 << bits, dtype=np.uint64)
    for bit in range(bits):  # bit 0 is the least significant bit of each id
        table |= ((ids >> np.uint64(bit)) & np.uint64(1)) << np.uint64(bit * k)
    return table


def key_bits(columns: int) -> int:
    """Bits per column's range id with ``columns`` Z-order columns."""
    return min(RANGE_BITS, KEY_BITS // columns)


class ZOrderKeys:
    """Rows' Z-keys (``external_sort.KeyFunction``): range ids by rank, interleaved.

    Args:
        source: The partition's rows.
        columns: The Z-order columns.
        sample_bytes: Memory a pass over the key columns may keep (``ranges_for``).
    """

    def __init__(self, source: PartitionSource, columns: list[str], *, sample_bytes: int) -> None:
        if not columns:
            raise ValueError("a Z-key needs at least one column")
        self._source = source
        self._columns = columns
        self._sample_bytes = sample_bytes
        self._bits = key_bits(len(columns))
        self._ranges: list[ColumnRanges] = []

    def prepare(self, partition: pa.Table | None) -> None:
        """Fix each column's ranges: exactly from ``partition``, else by a pass over the keys."""
        if partition is None:
            self._ranges = ranges_for(
                lambda: self._source.batches(batch_rows=65_536, columns=self._columns),
                self._columns,
                rows=self._source.rows,
                sample_bytes=self._sample_bytes,
                bits=self._bits,
            )
            return
        self._ranges = []
        for name in self._columns:
            column = partition.column(name)
            self._ranges.append(
                column_ranges(
                    column.combine_chunks(),
                    rows=partition.num_rows,
                    non_null_rows=partition.num_rows - column.null_count,
                    bits=self._bits,
                )
            )

    def __call__(self, table: pa.Table) -> NDArray[np.uint64]:
        """The Z-keys of ``table``'s rows (``prepare`` first)."""
        assert self._ranges, "ZOrderKeys.prepare was not called"
        ids = [r.ids(table.column(c)) for r, c in zip(self._ranges, self._columns, strict=True)]
        return interleave(ids, self._bits)
