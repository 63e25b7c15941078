"""VACUUM's listing and deletes in Spark tasks (``cluster_listing`` on a storage tasks can reopen).

The driver reads the log (the protected set), lists the top of the table and hands the prefixes
below to listing tasks (``storage.executor_listing.listing_frame``); the listing stays on the
cluster as a DataFrame of Arrow batches. With the selection on Spark, ``selection_frame``
consumes it directly (the counting rule, the anti-join with the protected set) in the same job,
and only the selected paths and the listing tasks' summaries come back. With the selection in
process, the listing comes back as one Arrow table (columns, not an object per file). Deletes run
in tasks too (``storage.executor_delete``): files, then directories deepest first; only counts
and process ids come back. DataFrame API only: classic Spark, Spark Connect and the embedded
engine.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from python_ops.ops.results import VacuumDiagnostics, VacuumFile
from python_ops.ops.vacuum.executors.executor_delete import DeleteCounts, delete_on_executors
from python_ops.ops.vacuum.executors.executor_listing import listing_frame, split_summaries
from python_ops.ops.vacuum.rule.selection import (
    SelectedPaths,
    select_in_process,
    selection_frame,
)
from python_ops.storage import Storage

if TYPE_CHECKING:
    import pyarrow as pa


@dataclass(frozen=True)
class ClusterSelection:
    """What the cluster listing and the selection found.

    Attributes:
        selected: The selected paths, sorted.
        files_listed: Visible files listed (by the driver and the tasks).
        symlinks_skipped: Symbolic links seen and left alone.
        diagnostics: Where the listing ran.
    """

    selected: Sequence[VacuumFile]
    files_listed: int
    symlinks_skipped: int
    diagnostics: VacuumDiagnostics


def select_on_cluster(
    spark: Any,
    storage: Storage,
    *,
    partition_columns: Iterable[str],
    roots: Iterable[str],
    protected: Iterable[str] | pa.Array,
    cutoff_ms: int,
    on_spark: bool,
) -> ClusterSelection:
    """List the table in Spark tasks and select, on Spark or in this process.

    Args:
        spark: The Spark session.
        storage: The table's storage (``lists_on_executors``).
        partition_columns: The table's partition columns.
        roots: Directories to list ("" = the whole table).
        protected: Paths that must be kept.
        cutoff_ms: Files modified strictly before this time are eligible.
        on_spark: Run the selection on Spark (else the listing comes back and is selected
            in this process).

    Returns:
        The selection, the listing's counts and where the listing ran.
    """
    listing = listing_frame(
        spark,
        storage,
        partition_columns=partition_columns,
        roots=roots,
        split_hints=protected,  # where to cut a root with many files into key ranges
    )
    if on_spark:
        answer, summaries = split_summaries(
            selection_frame(spark, listing.frame, protected, cutoff_ms).toArrow()
        )
        selected = SelectedPaths(answer)
    else:
        entries, summaries = split_summaries(listing.frame.toArrow())
        selected = select_in_process(entries, protected, cutoff_ms)
    return ClusterSelection(
        selected=selected,
        files_listed=listing.driver_files + sum(s.files for s in summaries),
        symlinks_skipped=listing.driver_symlinks + sum(s.symlinks for s in summaries),
        diagnostics=VacuumDiagnostics(
            driver_pid=os.getpid(),
            num_prefixes_in_tasks=len(listing.prefixes),
            num_listing_tasks=listing.tasks,
            listing_pids=tuple(sorted({s.pid for s in summaries})),
            num_key_ranges_in_tasks=listing.ranges,
        ),
    )


def delete_on_cluster(
    spark: Any,
    storage: Storage,
    selected: Sequence[VacuumFile],
    *,
    threads: int,
    on_progress: Callable[[int, int], None] | None,
) -> DeleteCounts:
    """Delete the selected files, then directories deepest first, in Spark tasks.

    Args:
        spark: The Spark session.
        storage: The table's storage (``lists_on_executors``).
        selected: The selected paths.
        threads: Delete calls in flight per task.
        on_progress: Called with (files done, files total) once the files are done.

    Returns:
        The totals, with the tasks' process ids.
    """
    import pyarrow as pa

    files = [f for f in selected if not f.is_dir]
    table = pa.table(
        {
            "path": pa.array([f.path for f in files], pa.string()),
            "size": pa.array([f.size_bytes for f in files], pa.int64()),
        }
    )
    dirs = [f.path for f in selected if f.is_dir]
    return delete_on_executors(
        spark, storage, table, dirs, threads=threads, on_files_done=on_progress
    )
