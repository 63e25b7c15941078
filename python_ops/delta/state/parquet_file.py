"""A checkpoint's Parquet through pyarrow's reader alone, without ``pyarrow.parquet``.

``pyarrow.parquet`` imports ``pyarrow.fs``, which loads every filesystem pyarrow ships (S3 with
OpenSSL, GCS, Azure, HDFS): about 9 MB of resident memory in a process that reads a checkpoint
from bytes already in hand and never opens a filesystem through pyarrow. This module opens the
same reader (``pyarrow._parquet.ParquetReader``) and selects columns by their dotted names as
``pyarrow.parquet.ParquetFile.read`` does.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from python_ops import runtime

if TYPE_CHECKING:
    import pyarrow as pa


def decode_on_threads(enabled: bool = True) -> None:
    """Let ``ParquetBytes.read`` decode columns on Arrow's threads, for the whole process.

    For a process that runs one op and exits (``python -m python_ops vacuum``): a LITE dry run
    of a 1,000,000-file table took 0.86 instead of 1.00 s. Off by default, for host processes
    (the dbt post-hook): glibc gives each decode thread an arena of its own, which keeps the
    freed buffers. A 1,000,000-file FULL dry run through the post-hook path peaked at 355 MB
    with threads and 297 MB without (297 MB with threads under ``MALLOC_ARENA_MAX=1``).

    Args:
        enabled: Decode on Arrow's threads.
    """
    runtime.PARQUET_THREADS.value = enabled


def decoding_on_threads() -> bool:
    """Whether this process decodes on Arrow's threads (``decode_on_threads``)."""
    return runtime.PARQUET_THREADS.value


class ParquetBytes:
    """One Parquet file held in memory, read column by column.

    Args:
        data: The whole file: a ``pyarrow.Buffer`` (``Storage.read_arrow_buffer``) is read in
            place, bytes are copied into one.

    Raises:
        pyarrow.ArrowInvalid: Or another ``OSError`` subtype, when the bytes are not Parquet.
    """

    def __init__(self, data: bytes | pa.Buffer) -> None:
        import pyarrow as pa
        from pyarrow._parquet import ParquetReader

        # In Arrow's own memory: no Python object under the reader, so Arrow's threads may
        # decode it (``read``) and drop their references after it returns without the GIL.
        if isinstance(data, pa.Buffer):
            owned = data
        else:
            owned = pa.allocate_buffer(len(data))
            memoryview(owned).cast("B")[:] = data
        self._owned = owned
        self._reader: Any = ParquetReader()
        # No pre-buffering: the file is in memory already, and pre-buffering's first use in a
        # process starts Arrow's I/O thread pool, about 15 ms of the first post-hook in a dbt
        # process (a 1,000,000-row checkpoint reads as fast without it)
        self._reader.open(pa.BufferReader(owned), pre_buffer=False)
        # leaf column indices under every dotted prefix ("add" and "add.path" alike)
        self._leaves: dict[str, list[int]] = {}
        for index, path in enumerate(self._reader.column_paths):
            for depth in range(1, len(path) + 1):
                self._leaves.setdefault(".".join(path[:depth]), []).append(index)
        self._schema: pa.Schema | None = None

    def twin(self) -> ParquetBytes:
        """A reader of its own over the same memory, for another thread (nothing is copied)."""
        return ParquetBytes(self._owned)

    @property
    def num_rows(self) -> int:
        """The file's rows (from its footer: nothing decoded)."""
        rows: int = self._reader.metadata.num_rows
        return rows

    @property
    def schema_arrow(self) -> pa.Schema:
        """The file's schema as Arrow types (converted once: about 0.2 ms for a checkpoint's)."""
        if self._schema is None:
            self._schema = self._reader.schema_arrow
        return self._schema

    def batches(self, columns: list[str], *, rows: int = 65_536) -> Iterator[tuple[int, Any]]:
        """Read the named columns a few rows at a time, on this thread.

        For a column whose rows are mostly null (a checkpoint's ``metaData`` among a million
        ``add`` rows): one batch at a time is decoded and held, not the whole column (38 MB for
        ``metaData`` over 1,000,000 rows).

        Args:
            columns: Column names, as for ``read``.
            rows: Rows per batch.

        Yields:
            (the batch's first row number in the file, a ``RecordBatch`` of the columns).
        """
        indices = [i for name in columns for i in self._leaves.get(name, ())]
        groups = list(range(self._reader.num_row_groups))
        first = 0
        for batch in self._reader.iter_batches(
            rows, groups, column_indices=indices, use_threads=False
        ):
            yield first, batch
            first += batch.num_rows

    def read(self, columns: list[str]) -> pa.Table:
        """Read the named columns (dotted paths into structs).

        Args:
            columns: Column names, e.g. ``["add.path", "remove.deletionTimestamp"]``; a name
                the file does not have is skipped.

        Returns:
            The columns, structs keeping only the chosen fields.
        """
        indices = [i for name in columns for i in self._leaves.get(name, ())]
        # On Arrow's threads where the process allows it (``decode_on_threads``: 1,000,000
        # checkpoint rows, VACUUM's columns, about 0.19 instead of 0.26 s here). Safe because
        # the file is in Arrow's memory (``__init__``): over a Python ``bytes`` the workers
        # dropped the last reference to it after read_all returned, which needs the GIL;
        # landing during interpreter exit, that killed the worker inside a C++ destructor
        # (std::terminate, SIGABRT, exit 134).
        table: pa.Table = self._reader.read_all(
            column_indices=indices, use_threads=decoding_on_threads()
        )
        return table
