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

from collections.abc import Iterable
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from python_ops.delta.file_columns import ancestors
from python_ops.ops.results import VacuumFile


def selected_paths(listing: pa.Table) -> list[VacuumFile]:
    """Selected rows (``path``, ``size``, ``is_dir``) as ``VacuumFile`` objects, sorted by path."""
    ordered = listing.sort_by("path")  # byte order, as sorted() orders Python strings
    return [
        VacuumFile(p, 0 if d else s, d)
        for p, s, d in zip(
            ordered.column("path").to_pylist(),
            ordered.column("size").to_pylist(),
            ordered.column("is_dir").to_pylist(),
            strict=True,
        )
    ]


def path_array(paths: Iterable[str] | pa.Array) -> pa.Array:
    """Paths as one string Array (an Array passes through)."""
    if isinstance(paths, pa.ChunkedArray):
        return paths.combine_chunks()
    if isinstance(paths, pa.Array):
        return paths
    return pa.array(list(paths), pa.string())


def _counted_once(kept: pa.Table) -> pa.Array | None:
    """Kept entries counted exactly once by the counting rule (a boolean mask; None: all).

    An entry counts itself once and once more for every kept file below it, so it is counted
    once when no kept file lies below it and no other kept entry has the same path (an object
    store's key ``a`` beside the prefix ``a/``): an anti-join with the kept files' ancestors,
    which are few (one row per directory), instead of grouping every contribution.
    """
    paths = kept.column("path").combine_chunks()
    files = paths.filter(pc.invert(kept.column("is_dir").combine_chunks()))
    below = ancestors(files)
    once = pc.invert(pc.is_in(paths, value_set=pa.concat_arrays(below))) if below else None
    if len(pc.unique(paths)) < len(paths):  # rare: the same path listed twice
        counts = pa.table({"path": paths}).group_by("path").aggregate([("path", "count")])
        twice = counts.filter(pc.greater(counts.column("path_count"), 1)).column("path")
        alone = pc.invert(pc.is_in(paths, value_set=twice.combine_chunks()))
        once = alone if once is None else pc.and_(once, alone)
    return once


def select_in_process(
    listing: pa.Table, protected: Iterable[str] | pa.Array, cutoff_ms: int
) -> list[VacuumFile]:
    """The selection rule on Arrow compute, in this process.

    Args:
        listing: Visible files and directories (``storage.listing.Listing.table``).
        protected: Paths that must be kept.
        cutoff_ms: Files modified strictly before this time are eligible.

    Returns:
        The selected paths, sorted.
    """
    if listing.num_rows == 0:
        return []
    kept = listing.filter(
        pc.or_(
            pc.less(listing.column("mtime"), pa.scalar(cutoff_ms, pa.int64())),
            listing.column("is_dir"),
        )
    )
    if kept.num_rows == 0:
        return []
    unprotected = pc.invert(pc.is_in(kept.column("path"), value_set=path_array(protected)))
    once = _counted_once(kept)
    return selected_paths(kept.filter(unprotected if once is None else pc.and_(once, unprotected)))


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
) -> list[VacuumFile]:
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
        return []
    frame = selection_frame(spark, spark.createDataFrame(listing), protected, cutoff_ms)
    return selected_paths(frame.toArrow())
