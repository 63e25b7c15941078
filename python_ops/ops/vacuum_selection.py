"""VACUUM's selection rule, as one relational program in two engines.

Delta's ``VacuumCommand.gc`` keeps every listed directory and every file modified at or after
the cutoff out of the candidates, then counts: each remaining (old) file contributes itself and
each of its ancestor directories, each directory contributes itself once. A path counted exactly
once that is not protected (live files, unexpired tombstones, their deletion-vector files and
parents) is deleted: untracked old files, and directories that hold no old file.

The same program runs in-process on Arrow compute (``select_in_process``: no engine to start, for
tables one machine lists) and on the Spark DataFrame API (``select_on_spark``: the embedded
engine, classic Spark or a Spark Connect cluster). ``tests`` hold them to the same answers.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from python_ops.ops.results import VacuumFile
from python_ops.storage import FileEntry


def listing_table(entries: Iterable[FileEntry]) -> pa.Table:
    """A listing as an Arrow table: ``path``, ``size``, ``mtime`` (ms), ``is_dir``."""
    rows = list(entries)
    return pa.table(
        {
            "path": pa.array([e.path for e in rows], pa.string()),
            "size": pa.array([e.size_bytes for e in rows], pa.int64()),
            "mtime": pa.array([e.modification_time_ms for e in rows], pa.int64()),
            "is_dir": pa.array([e.is_dir for e in rows], pa.bool_()),
        }
    )


def _selected(listing: pa.Table) -> list[VacuumFile]:
    out = [
        VacuumFile(path=p, size_bytes=0 if d else int(s), is_dir=bool(d))
        for p, s, d in zip(
            listing.column("path").to_pylist(),
            listing.column("size").to_pylist(),
            listing.column("is_dir").to_pylist(),
            strict=True,
        )
    ]
    return sorted(out, key=lambda f: f.path)


def _contributions(kept: pa.Table) -> pa.ChunkedArray:
    """Every kept entry's path, plus each ancestor directory of each kept nested file."""
    paths = kept.column("path").combine_chunks()
    is_dir = kept.column("is_dir").combine_chunks()
    parts = pc.split_pattern(paths, "/")
    depth = pc.list_value_length(parts)
    nested = pc.and_(pc.invert(is_dir), pc.greater(depth, 1))
    nested_parts = parts.filter(nested)
    nested_depth = depth.filter(nested)
    chunks = [paths]
    deepest = pc.max(nested_depth).as_py() if len(nested_depth) else None
    for k in range(1, deepest or 1):
        # the ancestor made of the first k parts, for every file below it
        below = nested_parts.filter(pc.greater(nested_depth, k))
        chunks.append(pc.binary_join(pc.list_slice(below, 0, k), "/"))
    return pa.chunked_array(chunks, pa.string())


def select_in_process(
    listing: pa.Table, protected: Iterable[str], cutoff_ms: int
) -> list[VacuumFile]:
    """The selection rule on Arrow compute, in this process.

    Args:
        listing: Visible files and directories (``listing_table``).
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
    counts = (
        pa.table({"path": _contributions(kept)}).group_by("path").aggregate([("path", "count")])
    )
    once = counts.filter(pc.equal(counts.column("path_count"), 1)).column("path")
    valid = pa.array(list(protected), pa.string())
    chosen = once.filter(pc.invert(pc.is_in(once, value_set=valid)))
    return _selected(
        listing.filter(pc.is_in(listing.column("path"), value_set=chosen.combine_chunks()))
    )


def select_on_spark(
    spark: Any, listing: pa.Table, protected: Iterable[str], cutoff_ms: int
) -> list[VacuumFile]:
    """The selection rule on the Spark DataFrame API.

    Args:
        spark: The Spark session.
        listing: Visible files and directories (``listing_table``).
        protected: Paths that must be kept.
        cutoff_ms: Files modified strictly before this time are eligible.

    Returns:
        The selected paths, sorted.
    """
    from pyspark.sql import functions as F

    if listing.num_rows == 0:
        return []
    files = spark.createDataFrame(listing)
    valid = spark.createDataFrame(pa.table({"path": pa.array(list(protected), pa.string())}))
    kept = files.where((F.col("mtime") < F.lit(cutoff_ms)) | F.col("is_dir"))
    parts = F.split(F.col("path"), "/")
    # a file's ancestors: "a", "a/b", ... for "a/b/file" (empty for files in the table root)
    ancestors = F.transform(
        F.sequence(F.lit(1), F.greatest(F.size(parts) - 1, F.lit(1))),
        lambda i: F.array_join(F.slice(parts, F.lit(1), i), "/"),
    )
    contributions = kept.select(
        F.explode(
            F.when(F.col("is_dir") | (F.size(parts) == 1), F.array(F.col("path"))).otherwise(
                F.concat(F.array(F.col("path")), ancestors)
            )
        ).alias("path")
    )
    selected = (
        contributions.groupBy("path")
        .count()
        .where(F.col("count") == 1)
        .join(valid, "path", "left_anti")
        .join(files.select("path", "size", "is_dir"), "path")
        .toArrow()
    )
    return _selected(selected)
