"""List a table's prefixes on the Spark cluster's executors (DataFrame API).

On one machine ``listing.list_visible`` lists prefixes on threads. On a cluster the listing is
spread over executors instead: a DataFrame with one row per prefix, repartitioned so each task
gets a few prefixes, and ``mapInArrow`` running the storage's own listing (on S3 one paginated
``ListObjectsV2`` per 1,000 keys; on a local disk the executors share, a directory walk) inside
each task, on a storage reopened there by its ``executor_factory`` (storages with
``lists_on_executors``). No RDDs and no JVM calls, so it runs on classic Spark, Spark Connect
clusters and the embedded engine alike.

Executors need ``python_ops`` (and boto3) installed. The task closure carries the connection
settings, credentials included, as Spark ships any task closure; they are never logged. Where
executors have their own credentials (instance roles), pass settings without keys.

``listing_frame`` keeps the listing on the cluster: the driver lists the top of the table (a level
or a few), the rest is listed in tasks and stays a DataFrame of Arrow batches for a program on
the same session (VACUUM's selection) to consume; nothing per file reaches the driver. A root
with many files directly in it (an unpartitioned table on an object store) is not listed by the
driver at all: with ``split_hints`` it is cut into key ranges (``key_ranges``), one per task.
Each task also emits one summary row (what it listed, symbolic links skipped, its process
id), marked by a path starting with NUL, which no file name contains: a program that treats it
as one more old root-level file (VACUUM's counting rule selects it, being counted once and never
protected) carries it to its output, so one pass over the listing yields both the answer and
the listing's counts, with no cache and no second listing. ``split_summaries`` separates them
again.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from python_ops.ops.vacuum.sources.listing import Listing, is_hidden, list_visible, scan_batch
from python_ops.storage.base import DirScan, Storage
from python_ops.storage.key_ranges import key_ranges, split_points
from python_ops.storage.paths import is_canonical

_SCHEMA = "path string, size long, mtime long, is_dir boolean"
Job = tuple[str, str | None, str | None]  # (prefix, start after, last): a range, or all of it


SUMMARY_MARK = "\0"  # starts the path of a task's summary row; no file or key name contains NUL
_DEFAULT_SLOTS = 16  # tasks per step where spark.default.parallelism is not set
_DRIVER_LEVELS = 3  # the driver lists at most this many levels before handing out prefixes
_SPREAD = 16  # ... and goes a level deeper while it has fewer prefixes than this to hand out


@dataclass(frozen=True)
class TaskSummary:
    """What one listing task did.

    Attributes:
        pid: The process the task ran in.
        files: Visible files it listed.
        symlinks: Symbolic links it saw and left alone.
        prefixes: Prefixes it listed.
    """

    pid: int
    files: int
    symlinks: int
    prefixes: int


@dataclass(frozen=True)
class ClusterListing:
    """A listing that stays on the cluster.

    Attributes:
        frame: DataFrame ``path string, size long, mtime long, is_dir boolean``: every visible
            file and directory below the roots, plus one summary row per listing task (path
            starting with ``SUMMARY_MARK``, ``mtime`` 0, ``is_dir`` false).
        driver_files: Visible files the driver listed itself (the top levels).
        driver_symlinks: Symbolic links the driver saw and left alone.
        prefixes: Directories handed to the tasks.
        tasks: Listing tasks (0 when the top levels held everything).
        ranges: Key ranges of roots handed to the tasks (0 when no root was cut).
    """

    frame: Any
    driver_files: int
    driver_symlinks: int
    prefixes: tuple[str, ...] = field(default=())
    tasks: int = 0
    ranges: int = 0


def _visible(path: str, columns: tuple[str, ...]) -> bool:
    # a path that is not canonical (an object store's ``p=a//x``) is never a candidate
    return is_canonical(path) and not any(is_hidden(part, columns) for part in path.split("/"))


def _summary_path(summary: TaskSummary) -> str:
    # no '/' in it: the counting rule sees a file in the table root, counted once
    return (
        f"{SUMMARY_MARK}pid={summary.pid} files={summary.files} symlinks={summary.symlinks} "
        f"prefixes={summary.prefixes} task={uuid.uuid4().hex}"
    )


def split_summaries(table: Any) -> tuple[Any, list[TaskSummary]]:
    """Separate the listing tasks' summary rows from entries in an Arrow table.

    Args:
        table: An Arrow table with a ``path`` column (a listing, or a program's answer on it).

    Returns:
        (the table without summary rows, the summaries).
    """
    import pyarrow.compute as pc

    marked = pc.starts_with(table.column("path"), SUMMARY_MARK)
    if not pc.any(marked).as_py():
        return table, []
    summaries = []
    for path in table.filter(marked).column("path").to_pylist():
        fields = dict(token.split("=", 1) for token in path[len(SUMMARY_MARK) :].split(" "))
        summaries.append(
            TaskSummary(
                int(fields["pid"]),
                int(fields["files"]),
                int(fields["symlinks"]),
                int(fields["prefixes"]),
            )
        )
    return table.filter(pc.invert(marked)), summaries


def _scan_prefix(storage: Storage, prefix: str, columns: tuple[str, ...]) -> Listing:
    """Visible entries below one prefix (with the symbolic links skipped)."""
    if storage.flat_listing:  # object stores: one recursive listing; markers are directories
        scan = DirScan()
        for e in storage.list_tree(prefix):
            if _visible(e.path, columns):
                scan.append(e.path, e.size_bytes, e.modification_time_ms, e.is_dir, False)
        return Listing((scan_batch(scan),), 0, 1)
    # a directory walk with the hidden-name rules, links never followed
    return list_visible(storage, partition_columns=columns, roots=[prefix], max_workers=1)


def _scan_range(storage: Storage, job: Job, columns: tuple[str, ...]) -> Listing:
    """Visible entries of one key range of a prefix, and everything below its sub-prefixes.

    The range is listed one level deep (``list_range``); each visible sub-prefix found in it
    (it lies in exactly one range) is then listed whole, as ``_scan_prefix`` lists a prefix.
    """
    prefix, start, last = job
    scan = DirScan()
    below: list[Any] = []
    for e in storage.list_range(prefix, start_after=start, last=last, recursive=False):
        if not _visible(e.path, columns):
            continue
        if e.is_dir:  # a sub-prefix: not an entry itself (its marker comes with its listing)
            below += _scan_prefix(storage, e.path, columns).batches
        else:
            scan.append(e.path, e.size_bytes, e.modification_time_ms, False, False)
    return Listing((scan_batch(scan), *below), 0, 1)


def _task_lister(
    reopen: Callable[[], Storage], columns: tuple[str, ...]
) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """The ``mapInArrow`` function: list the task's prefixes (or key ranges), then summarise.

    Prefixes are listed ``listing_concurrency`` at a time (object stores: requests in flight;
    local disks: one), one Arrow batch per prefix. A row with bounds is one key range of a
    prefix (``start`` exclusive, ``last`` inclusive, either null for an open end).
    """

    def list_partition(batches: Iterator[Any]) -> Iterator[Any]:
        jobs: list[Job] = []
        for batch in batches:
            jobs += zip(
                batch.column(0).to_pylist(),
                batch.column(1).to_pylist(),
                batch.column(2).to_pylist(),
                strict=True,
            )
        if not jobs:
            return
        storage = reopen()

        def scan(job: Job) -> Listing:
            if job[1] is None and job[2] is None:
                return _scan_prefix(storage, job[0], columns)
            return _scan_range(storage, job, columns)

        files = symlinks = 0
        with ThreadPoolExecutor(max_workers=max(1, storage.listing_concurrency)) as pool:
            for listing in pool.map(scan, jobs):
                files += listing.files_listed
                symlinks += listing.symlinks_skipped
                yield from listing.batches
        summary = TaskSummary(os.getpid(), files, symlinks, len(jobs))
        yield scan_batch(_one(_summary_path(summary)))

    return list_partition


def task_slots(spark: Any) -> int:
    """Spark tasks worth running for one step: ``spark.default.parallelism`` if set, else 16.

    Each Python task has a fixed cost (a worker round trip, a few tens of ms, far more on a
    loaded machine), so the work is cut into about as many tasks as the cluster runs at once,
    and each task overlaps its own I/O on threads. Read from the session's configuration (no
    JVM call), so it is the same on classic Spark, Spark Connect and the embedded engine.
    """
    try:
        value = spark.conf.get("spark.default.parallelism", None)
        return max(1, int(value)) if value else _DEFAULT_SLOTS
    except Exception:  # a session that does not know the key or refuses conf reads
        return _DEFAULT_SLOTS


def _one(path: str) -> DirScan:
    scan = DirScan()
    scan.append(path, 0, 0, False, False)
    return scan


def _top_levels(
    storage: Storage, columns: tuple[str, ...], roots: list[str]
) -> tuple[DirScan, int, list[str]]:
    """List the top of the table on the driver until there are enough prefixes to hand out.

    Object stores list one level (their prefixes are not entries; a prefix's own marker is
    returned by its recursive listing), directory trees up to ``_DRIVER_LEVELS`` levels.
    """
    out = DirScan()
    symlinks = 0
    level = roots
    levels = 1 if storage.flat_listing else _DRIVER_LEVELS
    with ThreadPoolExecutor(max_workers=max(1, storage.listing_concurrency)) as pool:
        for depth in range(levels):
            following: list[str] = []
            for children in pool.map(storage.scan_dir, level):
                for path, size, mtime, is_dir, is_link in zip(
                    children.paths,
                    children.sizes,
                    children.mtimes,
                    children.is_dir,
                    children.is_symlink,
                    strict=True,
                ):
                    if not _visible(path.rpartition("/")[2], columns):
                        continue
                    if is_link:
                        symlinks += 1
                    elif is_dir:
                        following.append(path)
                        if not storage.flat_listing:
                            out.append(path, size, mtime, True, False)
                    else:
                        out.append(path, size, mtime, False, False)
            level = following
            if len(level) >= _SPREAD or depth + 1 == levels or not level:
                break
    return out, symlinks, level


def _split_roots(
    storage: Storage, roots: list[str], split_hints: Any, slots: int
) -> tuple[list[Job], list[str]]:
    """Roots cut into key ranges at the hints' quantiles (one job each), and the others."""
    ranged: list[Job] = []
    plain = list(roots)
    if split_hints is not None and storage.flat_listing and storage.lists_key_ranges:
        for root in roots:
            points = split_points(split_hints, root, ranges=slots, one_level=True)
            if points:
                plain.remove(root)
                ranged += [(root, start, last) for start, last in key_ranges(points)]
    return ranged, plain


def _jobs_frame(spark: Any, jobs: list[Job]) -> Any:
    """The listing jobs (prefix, first key, last key) as a DataFrame, one row per job."""
    import pyarrow as pa

    prefix, start, last = (list(c) for c in zip(*jobs, strict=True))
    columns = {"prefix": prefix, "start": start, "last": last}
    return spark.createDataFrame(
        pa.table({name: pa.array(values, pa.string()) for name, values in columns.items()})
    )


def listing_frame(
    spark: Any,
    storage: Storage,
    *,
    partition_columns: Iterable[str],
    roots: Iterable[str] = ("",),
    tasks: int | None = None,
    split_hints: Any = None,
) -> ClusterListing:
    """List a table's visible files in Spark tasks, keeping the listing on the cluster.

    The driver lists the roots (and, for directory trees, a level or two more until there are
    enough prefixes to spread); each prefix below is listed in a task, on a storage reopened
    there by its ``executor_factory``, with the same hidden-name rules as ``list_visible``.

    Args:
        spark: The Spark session (classic, Spark Connect or the embedded engine).
        storage: The table's storage (``lists_on_executors``).
        partition_columns: Partition columns (their ``col=`` directories are visible).
        roots: Directories to start from ("" = the table root); not returned themselves.
        tasks: Listing tasks (default: ``task_slots``; never more than prefixes).
        split_hints: Relative paths known to exist (VACUUM: the paths the log protects). On
            storages that list key ranges, a root with enough known names directly in it (an
            unpartitioned table) is not listed on the driver: it is cut into key ranges at
            their quantiles (``key_ranges``), one range per task.

    Returns:
        The listing (``ClusterListing.frame`` is lazy: listing happens when it is consumed).

    Raises:
        StorageError: When a top-level directory cannot be listed, or the storage cannot be
            opened on executors.
    """
    import pyarrow as pa

    columns = tuple(partition_columns)
    slots = tasks or task_slots(spark)
    ranged, plain = _split_roots(storage, list(dict.fromkeys(roots)), split_hints, slots)
    top, symlinks, prefixes = _top_levels(storage, columns, plain)
    jobs: list[Job] = [*ranged, *((p, None, None) for p in prefixes)]
    frames = []
    if top.paths or not jobs:
        frames.append(spark.createDataFrame(pa.Table.from_batches([scan_batch(top)])))
    n_tasks = 0
    if jobs:
        n_tasks = min(len(jobs), slots)
        lister = _task_lister(storage.executor_factory(), columns)
        frames.append(_jobs_frame(spark, jobs).repartition(n_tasks).mapInArrow(lister, _SCHEMA))
    frame = frames[0] if len(frames) == 1 else frames[0].unionByName(frames[1])
    return ClusterListing(
        frame,
        driver_files=len(top.is_dir) - sum(top.is_dir),
        driver_symlinks=symlinks,
        prefixes=tuple(prefixes),
        tasks=n_tasks,
        ranges=len(ranged),
    )
