"""Target-sized output files of a Z-order, written from a stream of rows already in order.

The split is ``zorder.write_clustered``'s: ``count`` files of ``ceil(rows / count)`` rows each
(the last one shorter), named ``part-<index>-<run uuid>-c000.zstd.parquet`` in the partition's
directory, zstd, timestamps at microseconds. Rows arrive in pieces; each file's statistics are
the merge of its row groups' ``delta_stats`` (``merge_stats``), which equals ``delta_stats`` of
the whole file: minima and maxima are taken of values ``delta_stats`` already put in JSON form,
whose order is the values' order (numbers; strings by code point, as UTF-8 bytes compare; ISO
dates and timestamps), and a column one group has no bounds for (NaN, an infinity, a date
outside years 1-9999) has none in the file. The parts are read with ``loads_stats`` and the
file's document written with ``dumps_stats``: decimals and floats keep their exact text. Row
groups are written on writer threads while the next gathers.

A failed write (``abort``) closes every file it opened and deletes them: a rewrite that fails
leaves no untracked file, or names those it could not delete.
"""

from __future__ import annotations

import logging
import math
import posixpath
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from python_ops.delta.table.stats import delta_stats, dumps_stats, loads_stats
from python_ops.storage import Storage

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class WrittenFile:
    """A Parquet file the rewrite wrote (not yet committed).

    Attributes:
        path: Decoded path relative to the table root.
        size_bytes: File size.
        rows: Rows in the file.
        stats: Delta statistics JSON.
    """

    path: str
    size_bytes: int
    rows: int
    stats: str


def _merge_bound(
    parts: list[dict[str, Any]], side: str, path: tuple[str, ...], pick: Any
) -> Any | None:
    """The merged bound at ``path`` (a leaf or a struct's dict), None when one part lacks it."""
    found: list[Any] = []
    for part in parts:
        node: Any = part.get(side) or {}
        nulls: Any = part.get("nullCount") or {}
        for key in path:
            node = node.get(key) if isinstance(node, dict) else None
            nulls = nulls.get(key) if isinstance(nulls, dict) else None
        if isinstance(nulls, dict):  # a struct: its fields one by one
            continue
        if node is None:
            if nulls is not None and nulls < part["numRecords"]:
                return None  # values this part keeps no bound for: neither does the file
            continue
        found.append(node)
    return pick(found) if found else None


def _merge_tree(parts: list[dict[str, Any]], path: tuple[str, ...]) -> tuple[Any, Any, Any]:
    """(null counts, minima, maxima) of the column or struct at ``path`` over ``parts``."""
    nulls_nodes = []
    for part in parts:
        node: Any = part.get("nullCount") or {}
        for key in path:
            node = node.get(key) if isinstance(node, dict) else None
        nulls_nodes.append(node)
    if any(isinstance(n, dict) for n in nulls_nodes):
        names = [k for n in nulls_nodes if isinstance(n, dict) for k in n]
        nulls: dict[str, Any] = {}
        mins: dict[str, Any] = {}
        maxs: dict[str, Any] = {}
        for name in dict.fromkeys(names):
            nulls[name], low, high = _merge_tree(parts, (*path, name))
            if low is not None and high is not None:
                mins[name], maxs[name] = low, high
        return nulls, mins or None, maxs or None
    count = sum(int(n or 0) for n in nulls_nodes)
    low = _merge_bound(parts, "minValues", path, min)
    high = _merge_bound(parts, "maxValues", path, max)
    return count, low, high


def merge_stats(parts: list[dict[str, Any]]) -> str:
    """One file's ``stats`` JSON from the parsed ``delta_stats`` of its consecutive pieces.

    Args:
        parts: ``loads_stats(delta_stats(piece, columns))`` of each piece, same columns.

    Returns:
        What ``delta_stats`` of all the pieces' rows at once returns.
    """
    nulls: dict[str, Any] = {}
    mins: dict[str, Any] = {}
    maxs: dict[str, Any] = {}
    for name in parts[0]["nullCount"]:
        nulls[name], low, high = _merge_tree(parts, (name,))
        if low is not None and high is not None:
            mins[name], maxs[name] = low, high
    rows = sum(int(p["numRecords"]) for p in parts)
    return dumps_stats(
        {"numRecords": rows, "minValues": mins, "maxValues": maxs, "nullCount": nulls}
    )


def footer_statistics(schema: pa.Schema) -> list[str]:
    """The Parquet columns of ``schema`` whose footer statistics Spark can trust: not floats.

    Arrow's writer leaves NaN out of a float column's footer bounds (Spark's writer keeps it
    in them) and bounds zeros by -0.0, and Spark's Parquet filter pushdown trusts the bounds:
    on files delta-rs wrote, Delta 4.4 answered ``f = NaN`` with 0 rows instead of 1 and
    ``f = 0.0`` with 1 instead of 2 (measured). Files written here keep no footer bounds for
    float columns; the statistics in the log (``delta_stats``) still bound them for Delta. Nor
    dictionaries: Parquet's dictionary filter compares floats bit for bit, so a row group whose
    dictionary holds -0.0 but not 0.0 is dropped for ``f = 0.0`` (measured on compacted files).

    Args:
        schema: The rows' schema.

    Returns:
        Column paths (dotted, as the Parquet schema names them) that get footer statistics.
    """
    sink = pa.BufferOutputStream()
    pq.write_table(schema.empty_table(), sink)
    parquet = pq.ParquetFile(pa.BufferReader(sink.getvalue())).schema
    columns = (parquet.column(i) for i in range(len(parquet)))
    return [
        c.path
        for c in columns
        if c.physical_type not in ("FLOAT", "DOUBLE") and "Float16" not in str(c.logical_type)
    ]


class _File:
    """One output file, written by one writer thread: its writer and its groups' statistics."""

    def __init__(self, relative: str, writers: ThreadPoolExecutor) -> None:
        self.relative = relative
        self.writers = writers
        self.writer: pq.ParquetWriter | None = None
        self.parts: list[dict[str, Any]] = []
        self.written: WrittenFile | None = None


class ClusteredOutput:
    """Writes rows, in the order given, into the partition's target-sized output files.

    Row groups are encoded and compressed on writer threads while the sort produces the next
    ones (pyarrow releases the GIL while it writes): consecutive files go to ``WRITERS``
    threads in turn, a file's groups in order on its thread, one group in flight per thread.

    Args:
        storage: The table's storage.
        directory: The partition's directory relative to the root ('' for the root).
        rows: Rows that will be written in all.
        count: Output files (``ceil(input bytes / target)``, at most ``rows``, at least 1).
        schema: The rows' schema.
        stats_columns: Columns to write statistics for.
        group_rows: Rows buffered before a row group is written.
    """

    WRITERS = 2

    def __init__(
        self,
        storage: Storage,
        *,
        directory: str,
        rows: int,
        count: int,
        schema: pa.Schema,
        stats_columns: list[str],
        group_rows: int,
    ) -> None:
        self._storage = storage
        self._directory = directory
        self._per_file = math.ceil(rows / count) if rows else 0
        self._schema = schema
        self._stats_columns = stats_columns
        self._footer_stats = footer_statistics(schema)
        self._group_rows = max(1, group_rows)
        self._run = uuid.uuid4()
        self._in_file = 0
        self._pending: list[pa.Table] = []
        self._pending_rows = 0
        self._files: list[_File] = []
        self._file_done = True  # the last file was handed its last piece: the next is new
        self._writers = [
            ThreadPoolExecutor(max_workers=1, thread_name_prefix="zorder-output")
            for _ in range(self.WRITERS)
        ]
        self._inflight: dict[ThreadPoolExecutor, Future[None]] = {}

    @property
    def written(self) -> list[WrittenFile]:
        """The files finished so far, in order."""
        return [f.written for f in self._files if f.written is not None]

    def write(self, table: pa.Table) -> None:
        """Append ``table``'s rows (in this order) to the output."""
        offset = 0
        while offset < table.num_rows:
            take = min(self._per_file - self._in_file, table.num_rows - offset)
            self._pending.append(table.slice(offset, take))
            self._pending_rows += take
            self._in_file += take
            offset += take
            finished = self._in_file == self._per_file
            if self._pending_rows >= self._group_rows or finished:
                self._submit(finish=finished)
            if finished:
                self._in_file = 0

    def close(self) -> list[WrittenFile]:
        """Finish the last file (an empty partition still gets one file, as before).

        Returns:
            Every file written, in order.
        """
        if self._in_file:
            self._submit(finish=True)
        self._wait_all()
        if not self._files:
            self._pending = [self._schema.empty_table()]
            self._submit(finish=True)
            self._wait_all()
        for writers in self._writers:
            writers.shutdown()
        return self.written

    def abort(self) -> list[str]:
        """After a failure: close the open files and delete every file this output began.

        Returns:
            The files that could not be deleted (relative paths; empty when all are gone).
        """
        try:
            self._wait_all()
        except Exception:  # the failure being handled is the one to report
            log.debug("the Z-order output failed too while aborting", exc_info=True)
        for writers in self._writers:
            writers.shutdown()  # waits for a piece still in flight on the other thread
        for f in self._files:
            if f.writer is not None:
                try:
                    f.writer.close()
                except Exception:  # a half-written file: deleted below all the same
                    log.debug("closing %s after a failure failed", f.relative, exc_info=True)
                f.writer = None
        paths = [f.relative for f in self._files]
        if not paths:
            return []
        try:
            left = self._storage.delete_files(paths)
        except Exception:  # the failure being handled is the one to report; name the files
            log.debug("deleting the Z-order output after a failure failed", exc_info=True)
            return paths
        return list(left)

    def _submit(self, *, finish: bool) -> None:
        """Hand the gathered rows to the file's writer thread (one piece in flight on each)."""
        piece = pa.concat_tables(self._pending) if self._pending else None
        self._pending, self._pending_rows = [], 0
        if self._file_done:
            index = len(self._files)
            name = f"part-{index:05d}-{self._run}-c000.zstd.parquet"
            relative = posixpath.join(self._directory, name) if self._directory else name
            self._files.append(_File(relative, self._writers[index % self.WRITERS]))
            self._file_done = False
        current = self._files[-1]
        self._wait(current.writers)
        self._inflight[current.writers] = current.writers.submit(
            self._write_piece, current, piece, finish
        )
        self._file_done = finish

    def _wait(self, writers: ThreadPoolExecutor) -> None:
        """Wait for the piece in flight on ``writers``; its failure is raised here."""
        future = self._inflight.pop(writers, None)
        if future is not None:
            future.result()

    def _wait_all(self) -> None:
        for writers in self._writers:
            self._wait(writers)

    def _write_piece(self, file: _File, piece: pa.Table | None, finish: bool) -> None:
        """On the file's writer thread: write ``piece``; ``finish`` closes the file."""
        if piece is not None:
            if file.writer is None:
                fs, path = self._storage.arrow_path(file.relative)
                # microsecond timestamps as Spark writes them; refuse to drop precision silently
                file.writer = pq.ParquetWriter(
                    path,
                    self._schema,
                    filesystem=fs,
                    compression="zstd",
                    coerce_timestamps="us",
                    allow_truncated_timestamps=False,
                    write_statistics=self._footer_stats,
                    use_dictionary=self._footer_stats,
                )
            file.writer.write_table(piece, row_group_size=max(piece.num_rows, 1))
            file.parts.append(loads_stats(delta_stats(piece, self._stats_columns)))
        if finish and file.writer is not None:
            file.writer.close()
            file.writer = None
            fs, path = self._storage.arrow_path(file.relative)
            size = int(fs.get_file_info(path).size)
            stats = merge_stats(file.parts)
            rows = sum(int(p["numRecords"]) for p in file.parts)
            file.written = WrittenFile(file.relative, size, rows, stats)
            file.parts = []
