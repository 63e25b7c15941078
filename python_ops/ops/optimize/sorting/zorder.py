"""Z-order: cluster one partition's rows along a Z-order curve, write them, commit.

The curve is Delta's OPTIMIZE ZORDER BY: each column's values are mapped to about 1,000 *range
ids* by rank (equal values share an id, nulls come last) and the ids' bits are interleaved, so
columns with very different value ranges or byte widths contribute equally to the key.
delta-rs interleaves the raw bytes of the values instead; on an integer key whose high bytes
never change beside a timestamp whose high bytes do, that key is a sort on the timestamp and
gives no data skipping at all on the integer (docs/design.md, measured).

The commit still goes through delta-rs's transaction API (``create_write_transaction``) planned
on the snapshot version the plan read, so delta-rs's conflict checker runs exactly as for its
own OPTIMIZE: concurrent appends commit around us, a concurrent commit that removed one of our
input files fails ours.

What differs from a Delta ``OPTIMIZE`` commit, and why it is safe: delta-rs's transaction API
records the operation as ``WRITE`` (mode ``Append``) and does not let a caller name it; every
``add`` and ``remove`` still has ``dataChange=false`` (streaming readers and change feeds see no
new data), ``isBlindAppend`` is false, the parameters ``zOrderBy`` and ``predicate`` are in
``operationParameters``, and ``python_ops.operation = OPTIMIZE`` marks the commit so incremental
scope and the maintenance history recognise it.
"""

from __future__ import annotations

import logging
import math
import posixpath
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from python_ops.delta.log.actions import AddFile
from python_ops.errors import (
    StorageError,
    ZOrderUnsupportedError,
)
from python_ops.ops.optimize.sorting.clustered_output import ClusteredOutput
from python_ops.ops.optimize.sorting.clustered_output import (
    WrittenFile as WrittenFile,  # re-exported
)
from python_ops.ops.optimize.sorting.external_sort import DEFAULT_MEMORY_BUDGET, sort_by_key
from python_ops.ops.optimize.sorting.partition_batches import PartitionSource
from python_ops.ops.optimize.sorting.zorder_ranges import (
    RANGE_BITS,
    ZOrderKeys,
    interleave,
    key_bits,
)
from python_ops.storage import Storage

if TYPE_CHECKING:
    from numpy.typing import NDArray

log = logging.getLogger(__name__)


def range_ids(values: pa.ChunkedArray | pa.Array, *, bits: int = RANGE_BITS) -> NDArray[np.uint64]:
    """Map values to ``2**bits`` quantile ranges by rank; equal values get equal ids.

    Args:
        values: One column (any orderable Arrow type).
        bits: Bits per id.

    Returns:
        One id per row, in ``[0, 2**bits)``.
    """
    n = len(values)
    if n == 0:
        return np.zeros(0, dtype=np.uint64)
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if pa.types.is_dictionary(values.type):
        values = values.dictionary_decode()
    # rank 1..n, ties share the lowest rank, nulls ranked last (they share one range)
    ranks = pc.rank(values, sort_keys="ascending", tiebreaker="min")
    r = np.asarray(ranks, dtype=np.uint64) - np.uint64(1)
    return (r * np.uint64(1 << bits)) // np.uint64(n)


def zorder_key(columns: list[pa.ChunkedArray | pa.Array]) -> NDArray[np.uint64]:
    """Each row's Z-key over all of ``columns`` (the whole partition in memory).

    Args:
        columns: The Z-order columns, all of one length.

    Returns:
        One 64-bit key per row; sorting by it clusters rows on every column.
    """
    if not columns:
        raise ValueError("zorder_key needs at least one column")
    bits = key_bits(len(columns))
    return interleave([range_ids(c, bits=bits) for c in columns], bits)


def zorder_sort(table: pa.Table, columns: list[str]) -> pa.Table:
    """Rows of ``table`` reordered along the Z-order curve of ``columns``.

    Args:
        table: The rows of one partition.
        columns: Z-order columns (present in ``table``).

    Returns:
        The same rows, clustered.
    """
    key = zorder_key([table.column(c) for c in columns])
    return table.take(pa.array(np.argsort(key, kind="stable")))


RUN_MARKER = "python_ops.run"


def check_supported(configuration: dict[str, str], files: list[AddFile]) -> None:
    """Refuse tables whose files the rewrite cannot read or write faithfully.

    Raises:
        ZOrderUnsupportedError: For column mapping in id mode or files outside the root (files
            with deletion vectors are read without their deleted rows; in name mode the files'
            physical columns are sorted and written).
    """
    mode = configuration.get("delta.columnMapping.mode", "none")
    if mode not in ("none", "name"):
        raise ZOrderUnsupportedError(
            f"Z-order of a table with column mapping mode '{mode}' is not supported here; run "
            "it with delta-spark (profile mode attach with Delta) or use compaction only."
        )
    if any(f.relative_path is None for f in files):
        raise ZOrderUnsupportedError(
            "the table references files outside its root (a shallow clone); Z-order would "
            "rewrite files it does not own"
        )


def write_clustered(
    storage: Storage,
    files: list[AddFile],
    *,
    columns: list[str],
    target_size_bytes: int,
    stats_columns: list[str],
    memory_budget_bytes: int = DEFAULT_MEMORY_BUDGET,
    spill_root: str | None = None,
) -> list[WrittenFile]:
    """Read ``files`` (one partition), cluster by ``columns`` and write about target-size files.

    The rows are sorted by Z-key within ``memory_budget_bytes`` (``external_sort``): a partition
    larger than that is sorted in runs spilled to a temporary directory and merged, its range
    boundaries found by a pass over the Z-order columns (``ZOrderKeys``).

    Args:
        storage: The table's storage.
        files: Every file of the partition.
        columns: Z-order columns.
        target_size_bytes: Target output file size; the output count is
            ``ceil(input bytes / target)``.
        stats_columns: Columns to write statistics for.
        memory_budget_bytes: Memory the rows, keys and buffers may take.
        spill_root: Where spilled runs go (None: the OS temp directory).

    Returns:
        The files written, in the partition's directory; nothing is committed.

    Raises:
        StorageError: When an input file is missing or unreadable, or naming the files a
            failed rewrite wrote and could not delete (else the failure, its files deleted).
    """
    source = PartitionSource(storage, files)
    keys = ZOrderKeys(source, columns, sample_bytes=memory_budget_bytes // 4)
    assert files[0].relative_path is not None
    directory = posixpath.dirname(files[0].relative_path)
    output = _output(
        storage, directory, source, files, stats_columns, target_size_bytes, memory_budget_bytes
    )
    try:
        spilled = sort_by_key(
            source,
            keys,
            output.write,
            memory_budget_bytes=memory_budget_bytes,
            spill_root=spill_root,
        )
        written = output.close()
    except BaseException as err:
        _abort(storage, output, err)
        raise
    log.info(
        "Z-order of %s: %d rows sorted %s, %d file(s) written",
        posixpath.join(storage.root, directory),
        source.rows,
        f"in {spilled} spilled runs" if spilled else "in memory",
        len(written),
    )
    return written


def _output(
    storage: Storage,
    directory: str,
    source: PartitionSource,
    files: list[AddFile],
    stats_columns: list[str],
    target_size_bytes: int,
    memory_budget_bytes: int,
) -> ClusteredOutput:
    """The partition's output: ``ceil(input bytes / target)`` files (at most one per row)."""
    in_bytes = sum(f.size_bytes for f in files)
    return ClusteredOutput(
        storage,
        directory=directory,
        rows=source.rows,
        count=max(1, min(source.rows, math.ceil(in_bytes / target_size_bytes))),
        schema=source.schema,
        stats_columns=stats_columns,
        # a group is written on each writer thread while the next gathers: three in memory
        group_rows=memory_budget_bytes // 24 // source.width,
    )


def _abort(storage: Storage, output: ClusteredOutput, err: BaseException) -> None:
    """Delete what a failed rewrite wrote; files that stay are named in a ``StorageError``.

    Args:
        storage: The table's storage.
        output: The failed rewrite's output.
        err: The failure (re-raised by the caller when every file is gone).

    Raises:
        StorageError: When some written file could not be deleted (chained to ``err``).
    """
    left = output.abort()
    if not left:
        return
    log.warning("Z-order of %s failed; uncommitted files left: %s", storage.root, left)
    if isinstance(err, Exception):
        raise StorageError(
            f"{storage.root}: Z-order failed ({type(err).__name__}: {err}); nothing was "
            f"committed, but {len(left)} file(s) it wrote could not be deleted and are not "
            f"part of the table: {', '.join(left)} (VACUUM removes them after the retention "
            "period)"
        ) from err
