"""The Z-order sort's fast parts give exactly what the plain numpy / Arrow operations give.

Order statistics and boundary counts by 16-bit buckets (``integer_ranks``) against ``np.sort`` and
``np.searchsorted`` over every integer width, skewed and duplicated values, values outside the
boundaries; the lookup-table bit interleave against the bit-by-bit one; range ids of temporal
columns against ``zorder.range_ids``; the read-ahead of batches (order, errors, early stop); the
output's writer threads (files in order, statistics of the whole file); large arrays on glibc's
heap while a sort runs (``heap_reuse``).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import platform
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from python_ops import runtime
from python_ops.delta.table.stats import delta_stats
from python_ops.ops.optimize.sorting import integer_ranks
from python_ops.ops.optimize.sorting.clustered_output import ClusteredOutput
from python_ops.ops.optimize.sorting.heap_reuse import heap_reuse, trim_heap
from python_ops.ops.optimize.sorting.integer_ranks import BoundaryIndex, select
from python_ops.ops.optimize.sorting.partition_batches import read_ahead
from python_ops.ops.optimize.sorting.zorder import range_ids
from python_ops.ops.optimize.sorting.zorder_ranges import ColumnRanges, column_ranges, interleave
from python_ops.storage import open_storage

DTYPES = [np.int64, np.int32, np.int16, np.int8, np.uint64, np.uint32, np.uint8]


def _values(dtype: type[np.integer], kind: str, n: int, rng: np.random.Generator) -> np.ndarray:
    info = np.iinfo(dtype)
    if kind == "uniform":
        return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    if kind == "skewed":  # most values in a few buckets, a long tail
        return np.minimum(rng.exponential(1.0, n) ** 4 * 50, info.max).astype(dtype)
    if kind == "few":  # heavy duplicates: many boundaries share a bucket
        return rng.integers(0, 5, n).astype(dtype)
    low, high = max(int(info.min), -1000), min(int(info.max), 1000)
    return rng.integers(low, high, n).astype(dtype)  # around zero: signed order matters


@pytest.mark.parametrize("kind", ["uniform", "skewed", "few", "small"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_bucketed_ranks_equal_a_full_sort_and_a_binary_search(
    dtype: type[np.integer], kind: str
) -> None:
    rng = np.random.default_rng(7)
    n = integer_ranks._SMALL + 50_000  # above the size a plain sort is used for
    values = _values(dtype, kind, n, rng)
    ranks = sorted(set(rng.integers(0, n, 1023).tolist()))
    chunks = [values[:1000], values[1000:1000], values[1000:]]  # an empty chunk too

    expected = np.sort(values)[ranks]
    assert np.array_equal(select(chunks, ranks), expected)

    info = np.iinfo(dtype)
    probes = np.concatenate(
        [values[:20_000], rng.integers(info.min, info.max, 20_000, dtype=dtype, endpoint=True)]
    )
    probes = np.append(probes, np.array([info.min, info.max], dtype=dtype))
    found = BoundaryIndex(expected).count_below(probes)
    assert found.dtype == np.uint64
    assert np.array_equal(found, np.searchsorted(expected, probes, side="left"))


def test_floats_are_sorted_whole_with_nan_last() -> None:
    values = np.array([3.5, np.nan, -1.0, 2.0] * 100_000)
    ranks = [0, 150_000, 399_999]
    assert np.array_equal(select([values], ranks), np.sort(values)[ranks], equal_nan=True)


@pytest.mark.parametrize("columns", [1, 2, 3, 5, 7])
def test_the_lookup_interleave_equals_the_bit_by_bit_one(columns: int) -> None:
    rng = np.random.default_rng(columns)
    bits = min(10, 64 // columns)
    ids = [rng.integers(0, 1 << bits, 5_000).astype(np.uint64) for _ in range(columns)]
    expected = np.zeros(5_000, dtype=np.uint64)
    for bit in range(bits):
        for c, column_ids in enumerate(ids):
            position = np.uint64(bit * columns + (columns - 1 - c))
            expected |= ((column_ids >> np.uint64(bit)) & np.uint64(1)) << position
    assert np.array_equal(interleave(ids, bits), expected)


def test_range_ids_of_a_timestamp_column_from_chunks_equal_the_in_memory_ones() -> None:
    rng = np.random.default_rng(3)
    raw = rng.integers(0, 10**15, 400_000)
    values = pa.array(raw, pa.timestamp("us", "UTC"), mask=raw % 17 == 0)
    chunked = pa.chunked_array([values.slice(0, 150_000), values.slice(150_000)])
    ranges = column_ranges(
        chunked, rows=len(values), non_null_rows=len(values) - values.null_count, bits=10
    )
    assert isinstance(ranges, ColumnRanges)
    assert np.array_equal(ranges.ids(values), range_ids(values, bits=10))


def test_read_ahead_keeps_order_raises_the_producers_error_and_stops_early() -> None:
    assert list(read_ahead(iter(range(100)))) == list(range(100))

    def failing() -> Iterator[int]:
        yield 1
        raise ValueError("unreadable")

    stream = read_ahead(failing())
    assert next(stream) == 1
    with pytest.raises(ValueError, match="unreadable"):
        next(stream)

    produced = []

    def endless() -> Iterator[int]:
        i = 0
        while True:
            produced.append(i)
            yield i
            i += 1

    before = threading.active_count()
    endless_stream = read_ahead(endless(), depth=2)
    assert next(endless_stream) == 0
    endless_stream.close()  # the consumer stops: the producer thread ends
    deadline = time.monotonic() + 5
    while threading.active_count() > before and time.monotonic() < deadline:
        time.sleep(0.01)
    assert threading.active_count() == before
    assert len(produced) <= 4  # at most ``depth`` ahead of what was taken


def test_writer_threads_write_files_in_order_with_whole_file_statistics(tmp_path: Path) -> None:
    rows = 10_000
    table = pa.table(
        {
            "id": pa.array(np.arange(rows)),
            "name": pa.array([f"n{i % 97}" for i in range(rows)]),
        }
    )
    output = ClusteredOutput(
        open_storage(str(tmp_path)),
        directory="",
        rows=rows,
        count=7,
        schema=table.schema,
        stats_columns=["id", "name"],
        group_rows=300,  # several row groups per file, several files per thread
    )
    for start in range(0, rows, 1_234):
        output.write(table.slice(start, 1_234))
    written = output.close()

    assert len(written) == 7
    assert [int(f.path.split("-")[1]) for f in written] == list(range(7))
    read = [pq.read_table(tmp_path / f.path) for f in written]
    assert pa.concat_tables(read).equals(table)  # every row, in order
    for f, part in zip(written, read, strict=True):
        assert f.rows == part.num_rows == json.loads(f.stats)["numRecords"]
        assert f.stats == delta_stats(part, ["id", "name"])
        assert f.size_bytes == (tmp_path / f.path).stat().st_size


class _MallInfo2(ctypes.Structure):
    _fields_ = [  # ctypes' declaration
        (name, ctypes.c_size_t)
        for name in (
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        )
    ]


def _mmapped_bytes_while_holding(size: int) -> int:
    """glibc's bytes in mmapped chunks while a numpy array of ``size`` bytes is alive."""
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    libc.mallinfo2.restype = _MallInfo2
    array = np.ones(size, dtype=np.uint8)
    held = int(libc.mallinfo2().hblkhd)
    del array
    return held


@pytest.mark.skipif(
    platform.libc_ver()[0] != "glibc", reason="heap_reuse tunes glibc's malloc only"
)
def test_heap_reuse_keeps_large_arrays_on_the_heap_and_restores_the_default() -> None:
    size = 64 << 20  # above glibc's largest dynamic mmap threshold (32 MB)
    before = _mmapped_bytes_while_holding(size)
    with heap_reuse():
        inside = _mmapped_bytes_while_holding(size)
        trim_heap()
    after = _mmapped_bytes_while_holding(size)

    assert before >= size  # by default such an array is its own mapping
    assert inside < size  # inside, it comes from the heap (and its pages are reused)
    assert after >= size  # the default is back


@pytest.mark.skipif(
    platform.libc_ver()[0] != "glibc", reason="heap_reuse tunes glibc's malloc only"
)
def test_heap_reuse_nests_and_the_last_sort_restores() -> None:
    size = 64 << 20
    with heap_reuse():
        with heap_reuse():  # a second Z-order on another thread of maintain_all
            assert runtime.HEAP_REUSE.value == 2
        assert _mmapped_bytes_while_holding(size) < size  # the first still sorts: kept
    assert runtime.HEAP_REUSE.value == 0
    assert _mmapped_bytes_while_holding(size) >= size
