"""A partition's rows as a stream of record batches in one schema, file after file.

What ``own_compact.read_inputs`` returns as one table (each file's columns as plain Arrow types, the
files' schemas unified as ``pa.concat_tables(promote_options="permissive")`` unifies them: a
column missing from a file is null there, a narrower type widens), here as batches of a bounded
number of rows, so a partition larger than memory can be read (``PartitionSource``).

Every file is opened by ``open_parquet``: Spark's INT96 timestamps (Delta on Spark writes its
``timestamp`` columns so) are read at microseconds, not pyarrow's default nanoseconds, whose
int64 range (years 1677-2262) silently wrapped ``9999-12-31`` to a day in 1816; and since an
INT96 value is an instant in UTC, its column is read as ``timestamp[us, tz=UTC]``, the type
delta-rs writes for ``timestamp`` (files of both writers then share one schema).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TypeVar, cast

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from numpy.typing import NDArray

from python_ops.delta.log.actions import AddFile
from python_ops.delta.state.deletion_vectors import deleted_rows, keep_mask
from python_ops.errors import StorageError
from python_ops.storage import Storage

T = TypeVar("T")
_END = object()


def read_ahead(items: Iterator[T], *, depth: int = 2) -> Iterator[T]:
    """``items``, produced on a thread of their own up to ``depth`` ahead of the consumer.

    Parquet decoding releases the GIL, so the next batch is read while this one is sorted.
    The producer's exception is raised to the consumer in its place; a consumer that stops
    early stops the producer (it ends at its next item).

    Args:
        items: An iterator, advanced only on the producer thread.
        depth: Items buffered at most.

    Yields:
        The items of ``items``, in order.
    """
    ready: queue.Queue[object] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(item: object) -> bool:
        while not stop.is_set():
            try:
                ready.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for item in items:
                if not put(item):
                    break
            put(_END)
        except BaseException as err:  # handed to the consumer, raised there
            put(err)

    thread = threading.Thread(target=produce, name="partition-read-ahead", daemon=True)
    thread.start()
    try:
        while (item := ready.get()) is not _END:
            if isinstance(item, BaseException):
                raise item
            yield cast("T", item)
    finally:
        stop.set()
        thread.join()


def _plain_type(kind: pa.DataType) -> pa.DataType:
    """Arrow view types (delta-rs writes them) as the classic types every kernel supports."""
    if pa.types.is_string_view(kind):
        return pa.large_string()
    if pa.types.is_binary_view(kind):
        return pa.large_binary()
    if pa.types.is_struct(kind):
        return pa.struct([f.with_type(_plain_type(f.type)) for f in kind])
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_list_view(kind):
        return pa.large_list(kind.value_field.with_type(_plain_type(kind.value_type)))
    return kind


def plain_schema(schema: pa.Schema) -> pa.Schema:
    """``schema`` with view types as the classic types (metadata dropped)."""
    return pa.schema([f.with_type(_plain_type(f.type)) for f in schema])


def open_parquet(path: str, filesystem: Any) -> pq.ParquetFile:
    """A Parquet file whose INT96 timestamps read at microseconds (years 1-9999 exact).

    Args:
        path: The file's path on ``filesystem``.
        filesystem: A pyarrow filesystem (``Storage.arrow_path``).

    Returns:
        The open file.
    """
    return pq.ParquetFile(path, filesystem=filesystem, coerce_int96_timestamp_unit="us")


def _utc_type(kind: pa.DataType, path: str, int96: set[str]) -> pa.DataType:
    """``kind`` with the INT96 timestamps at or under ``path`` in UTC."""
    if pa.types.is_struct(kind):
        return pa.struct([f.with_type(_utc_type(f.type, f"{path}.{f.name}", int96)) for f in kind])
    if pa.types.is_timestamp(kind) and kind.tz is None and path in int96:
        return pa.timestamp(kind.unit, "UTC")
    return kind


def file_schema(parquet: pq.ParquetFile) -> pa.Schema:
    """The plain schema of a file (``plain_schema``), its INT96 timestamps in UTC.

    Args:
        parquet: A file opened by ``open_parquet``.

    Returns:
        The schema its batches are read in (cast to it: the values do not change).
    """
    schema = parquet.schema
    int96 = {
        schema.column(i).path
        for i in range(len(schema))
        if schema.column(i).physical_type == "INT96"
    }
    plain = plain_schema(parquet.schema_arrow)
    if not int96:
        return plain
    return pa.schema([f.with_type(_utc_type(f.type, f.name, int96)) for f in plain])


@contextmanager
def _reading(storage: Storage, relative: str) -> Iterator[None]:
    """Live data files that are gone or not Parquet as ``StorageError`` (nothing committed)."""
    try:
        yield
    except FileNotFoundError as err:
        raise StorageError(
            f"{storage.root}: live data file '{relative}' is missing from storage; "
            "the table cannot be rewritten until it is restored (this partition was not "
            "committed)"
        ) from err
    except (OSError, pa.ArrowInvalid) as err:
        raise StorageError(
            f"{storage.root}: live data file '{relative}' cannot be read as Parquet "
            f"({err}); this partition was not committed"
        ) from err


def _conform(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    """``batch`` with ``schema``'s columns: cast where wider, nulls where missing."""
    names = batch.schema.names
    columns = []
    for field in schema:
        if field.name in names:
            column = batch.column(names.index(field.name))
            columns.append(column if column.type == field.type else column.cast(field.type))
        else:
            columns.append(pa.nulls(batch.num_rows, field.type))
    return pa.RecordBatch.from_arrays(columns, schema=schema)


class PartitionSource:
    """The rows of a partition's files, read in batches as often as needed.

    Args:
        storage: The table's storage.
        files: The partition's live files, all inside the table root.

    Raises:
        StorageError: When a file is missing or unreadable (here or while reading).
    """

    def __init__(self, storage: Storage, files: list[AddFile]) -> None:
        self._storage = storage
        self._paths: list[str] = []
        # per file, the rows its deletion vector keeps (None: every row)
        self._keep: list[NDArray[np.bool_] | None] = []
        schemas = []
        rows = 0
        size = 0
        for f in files:
            assert f.relative_path is not None  # check_supported refused the others
            self._paths.append(f.relative_path)
            with _reading(storage, f.relative_path):
                fs, path = storage.arrow_path(f.relative_path)
                parquet = open_parquet(path, fs)
                schemas.append(file_schema(parquet))
                count = parquet.metadata.num_rows
                keep = None
                if f.deletion_vector is not None:  # its deleted rows never come back
                    keep = keep_mask(count, deleted_rows(storage, f.deletion_vector))
                self._keep.append(keep)
                rows += count if keep is None else int(keep.sum())
                meta = parquet.metadata
                size += sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
        self.schema: pa.Schema = pa.unify_schemas(schemas, promote_options="permissive")
        self.rows = rows
        self.width = max(1, size // rows) if rows else 1  # uncompressed bytes per row

    def batches(
        self, *, batch_rows: int, columns: list[str] | None = None
    ) -> Iterator[pa.RecordBatch]:
        """Every row, file after file in order, at most ``batch_rows`` to a batch (read ahead).

        Args:
            batch_rows: The largest batch.
            columns: Only these columns (None: all), in this order.

        Returns:
            Batches in ``schema`` (or its ``columns``), read on a thread of their own.
        """
        return read_ahead(self._read(batch_rows=batch_rows, columns=columns))

    def _read(self, *, batch_rows: int, columns: list[str] | None) -> Iterator[pa.RecordBatch]:
        """Every row, file after file in order, at most ``batch_rows`` to a batch.

        Args:
            batch_rows: The largest batch.
            columns: Only these columns (None: all), in this order.

        Yields:
            Batches in ``schema`` (or its ``columns``).
        """
        schema = self.schema
        if columns is not None:
            schema = pa.schema([self.schema.field(c) for c in columns])
        for relative, keep in zip(self._paths, self._keep, strict=True):
            with _reading(self._storage, relative):
                fs, path = self._storage.arrow_path(relative)
                parquet = open_parquet(path, fs)
                present = set(parquet.schema_arrow.names)
                wanted = [n for n in schema.names if n in present]
                as_read = file_schema(parquet)
                plain = pa.schema([as_read.field(n) for n in wanted])
                if not wanted:  # none of the columns: the file's rows are nulls in all of them
                    left = parquet.metadata.num_rows if keep is None else int(keep.sum())
                    while left > 0:
                        count = min(left, batch_rows)
                        left -= count
                        yield _conform(pa.record_batch({"_": pa.nulls(count)}), schema)
                    continue
                start = 0
                for batch in parquet.iter_batches(batch_size=batch_rows, columns=wanted):
                    if keep is not None:  # the rows the file's deletion vector deletes go
                        piece = keep[start : start + batch.num_rows]
                        start += batch.num_rows
                        batch = batch.filter(pa.array(piece))
                    yield _conform(batch if batch.schema == plain else batch.cast(plain), schema)
