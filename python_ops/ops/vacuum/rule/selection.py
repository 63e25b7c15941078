"""VACUUM's selection rule, as one relational program in two engines.

Delta's ``VacuumCommand.gc`` keeps every listed directory and every file modified at or after
the cutoff out of the candidates, then counts: each remaining (old) file contributes itself and
each of its ancestor directories, each directory contributes itself once. A path counted exactly
once that is not protected (live files, unexpired tombstones, their deletion-vector files and
parents) is deleted: untracked old files, and directories that hold no old file.

The same program runs in-process on Arrow compute (``select_in_process``: no engine to start, for
tables one machine lists) and on the Spark DataFrame API (``selection_frame`` on a listing that is
already a DataFrame, e.g. listed in Spark tasks; ``select_on_spark`` on an Arrow listing: the
embedded engine, classic Spark or a Spark Connect cluster). ``tests`` hold them to the same
answers. A selected path is always a kept entry of the listing itself (an ancestor prefix that
was never listed, or a new file that is also a key prefix on an object store, is not selected).

On Spark it is one pass over the listing and one shuffle: every kept entry contributes itself
with its size and kind, every ancestor of a kept file contributes its path alone; a group of one
that is an entry's own contribution is selected unless protected.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, overload

import pyarrow as pa
import pyarrow.compute as pc

from python_ops.delta.state.file_columns import ancestors
from python_ops.ops.results import VacuumFile


class SelectedPaths(Sequence[VacuumFile]):
    """The selected paths, sorted, held as Arrow columns: a ``VacuumFile`` is made when read.

    A dry run of a big table selects hundreds of thousands of paths; as objects they cost about
    180 bytes each, at the end of the run, on top of what the run has freed but the allocator
    keeps. Here they stay three columns until read: iteration makes the objects a slice at a
    time, and ``len`` needs none.

    Args:
        rows: The selected rows (``path``, ``size``, ``is_dir``).
        ordered: The rows are sorted by path already (``selected_rows``).
    """

    def __init__(self, rows: pa.Table, *, ordered: bool = False) -> None:
        columns = rows.select(["path", "size", "is_dir"])
        if not ordered:
            columns = columns.sort_by("path")  # byte order, as sorted() orders Python strings
        self._table = columns.combine_chunks()

    def __len__(self) -> int:
        return int(self._table.num_rows)

    @overload
    def __getitem__(self, index: int) -> VacuumFile: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[VacuumFile, ...]: ...

    def __getitem__(self, index: int | slice) -> VacuumFile | tuple[VacuumFile, ...]:
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step != 1:
                return tuple(self)[index]
            return tuple(self._objects(start, max(0, stop - start)))
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("selected path index out of range")
        return self._objects(index, 1)[0]

    def __iter__(self) -> Iterator[VacuumFile]:
        for start in range(0, len(self), _ROWS_PER_SLICE):
            yield from self._objects(start, _ROWS_PER_SLICE)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"SelectedPaths({len(self)} paths)"

    def _objects(self, start: int, count: int) -> list[VacuumFile]:
        rows = self._table.slice(start, count)
        return [
            VacuumFile(p, 0 if d else s, d)
            for p, s, d in zip(
                rows.column("path").to_pylist(),
                rows.column("size").to_pylist(),
                rows.column("is_dir").to_pylist(),
                strict=True,
            )
        ]


_ROWS_PER_SLICE = 8_192


def path_array(paths: Iterable[str] | pa.Array) -> pa.Array:
    """Paths as one string Array (an Array passes through)."""
    if isinstance(paths, pa.ChunkedArray):
        return paths.combine_chunks()
    if isinstance(paths, pa.Array):
        return paths
    return pa.array(list(paths), pa.string())


def _below_none(kept: pa.Table) -> pa.Array | None:
    """Kept entries no kept file lies below (a boolean mask; None: all).

    The kept files' ancestors are few (one row per directory): an anti-join with them, instead
    of grouping every contribution.
    """
    paths = kept.column("path").combine_chunks()
    files = paths.filter(pc.invert(kept.column("is_dir").combine_chunks()))
    below = ancestors(files)
    return pc.invert(pc.is_in(paths, value_set=pa.concat_arrays(below))) if below else None


def _without_repeats(ordered: pa.Table) -> pa.Table:
    """Rows sorted by path without any path that appears more than once.

    On sorted rows a repeated path is a run of equal neighbours: one comparison of the column
    with itself shifted by a row, instead of a hash table of every path (``pc.unique`` over a
    million paths: about 1 s and 40 MB here).
    """
    n = ordered.num_rows
    if n < 2:
        return ordered
    paths = ordered.column("path").combine_chunks()
    same = pc.equal(paths.slice(1), paths.slice(0, n - 1))  # row i + 1 repeats row i
    if not same.true_count:
        return ordered
    edge = pa.array([False])
    repeated = pc.or_(pa.concat_arrays([edge, same]), pa.concat_arrays([same, edge]))
    return ordered.filter(pc.invert(repeated))


def selected_rows(
    listing: pa.Table, protected: Iterable[str] | pa.Array, cutoff_ms: int
) -> pa.Table:
    """The selection rule on Arrow compute, in this process: the selected rows, sorted by path.

    An entry counts itself once and once more for every kept file below it; it is selected
    when counted exactly once (no kept file below it, no other kept entry with the same path:
    an object store's key ``a`` beside the prefix ``a/``) and not protected. A repeated path
    is either protected or not, and has kept files below or not, in every row: so the repeats
    are found among the selected rows, sorted anyway, not among all the kept ones.

    Args:
        listing: Visible files and directories (``storage.listing.Listing.table``).
        protected: Paths that must be kept.
        cutoff_ms: Files modified strictly before this time are eligible.

    Returns:
        The selected rows of ``listing``, sorted by path (``SelectedPaths`` makes them
        objects: a caller that can drop the listing and the protected set first holds less at
        once).
    """
    if listing.num_rows == 0:
        return listing
    kept = listing.filter(
        pc.or_(
            pc.less(listing.column("mtime"), pa.scalar(cutoff_ms, pa.int64())),
            listing.column("is_dir"),
        )
    )
    if kept.num_rows == 0:
        return kept
    unprotected = pc.invert(pc.is_in(kept.column("path"), value_set=path_array(protected)))
    once = _below_none(kept)
    chosen = kept.filter(unprotected if once is None else pc.and_(once, unprotected))
    return _without_repeats(chosen.sort_by("path"))


def select_in_process(
    listing: pa.Table, protected: Iterable[str] | pa.Array, cutoff_ms: int
) -> SelectedPaths:
    """The selection rule on Arrow compute, in this process (``selected_rows``).

    Args:
        listing: Visible files and directories (``storage.listing.Listing.table``).
        protected: Paths that must be kept.
        cutoff_ms: Files modified strictly before this time are eligible.

    Returns:
        The selected paths, sorted.
    """
    return SelectedPaths(selected_rows(listing, protected, cutoff_ms), ordered=True)


def selection_frame(
    spark: Any, listing: Any, protected: Iterable[str] | pa.Array, cutoff_ms: int
) -> Any:
    """The selection rule as a Spark DataFrame program on a listing DataFrame.

    Args:
        spark: The Spark session of ``listing``.
        listing: DataFrame ``path``, ``size``, ``mtime`` (ms), ``is_dir`` (e.g. listed in tasks).
        protected: Paths that must be kept (sent to the cluster as a one-column DataFrame).
        cutoff_ms: Files modified strictly before this time are eligible.

    Returns:
        A lazy DataFrame ``path``, ``size``, ``is_dir`` of the selected paths (unsorted).
    """
    from pyspark.sql import functions as F

    valid = spark.createDataFrame(pa.table({"path": path_array(protected)}))
    kept = listing.where((F.col("mtime") < F.lit(cutoff_ms)) | F.col("is_dir"))
    parts = F.split(F.col("path"), "/")
    own = F.struct(
        F.col("path").alias("path"), F.col("size").alias("size"), F.col("is_dir").alias("is_dir")
    )
    # a file's ancestors: "a", "a/b", ... for "a/b/file", contributing their path alone
    ancestors = F.transform(
        F.sequence(F.lit(1), F.greatest(F.size(parts) - 1, F.lit(1))),
        lambda i: F.struct(
            F.array_join(F.slice(parts, F.lit(1), i), "/").alias("path"),
            F.lit(None).cast("long").alias("size"),
            F.lit(None).cast("boolean").alias("is_dir"),
        ),
    )
    contributions = kept.select(
        F.explode(
            F.when(F.col("is_dir") | (F.size(parts) == 1), F.array(own)).otherwise(
                F.concat(F.array(own), ancestors)
            )
        ).alias("c")
    ).select("c.*")
    counted = contributions.groupBy("path").agg(
        F.count(F.lit(1)).alias("n"), F.max("size").alias("size"), F.max("is_dir").alias("is_dir")
    )
    # counted once, and that once is the entry itself (an ancestor alone has no kind)
    once = counted.where((F.col("n") == 1) & F.col("is_dir").isNotNull())
    return once.select("path", "size", "is_dir").join(valid, "path", "left_anti")


def select_on_spark(
    spark: Any, listing: pa.Table, protected: Iterable[str] | pa.Array, cutoff_ms: int
) -> SelectedPaths:
    """The selection rule on the Spark DataFrame API, for a listing in this process.

    Args:
        spark: The Spark session.
        listing: Visible files and directories (``storage.listing.Listing.table``).
        protected: Paths that must be kept.
        cutoff_ms: Files modified strictly before this time are eligible.

    Returns:
        The selected paths, sorted.
    """
    if listing.num_rows == 0:
        return SelectedPaths(listing)
    frame = selection_frame(spark, spark.createDataFrame(listing), protected, cutoff_ms)
    return SelectedPaths(frame.toArrow())
