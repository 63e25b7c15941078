"""Delete a table's files in Spark tasks (DataFrame API), as ``vacuum._delete`` does on threads.

Files first, in tasks of ``mapInArrow`` over the paths (about as many tasks as the cluster runs
at once, ``task_slots``; each deletes its paths in chunks of the storage's ``delete_batch_size``,
a batched request on object stores, on a few threads), then
directories, one Spark job per depth, deepest first, so a parent is only tried once its children
are gone. Nothing is recursive: ``delete_dir`` removes empty directories only. Each task returns
one row of counts (files, bytes, directories, failures) and its process id; only those rows come
back to the driver. No RDDs and no JVM calls: classic Spark, Spark Connect and the embedded
engine alike. The storage is reopened in the tasks by its ``executor_factory``.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from python_ops.ops.vacuum.executors.executor_listing import task_slots
from python_ops.storage.base import Storage

_COUNTS = "files long, bytes long, dirs long, failures long, pid long"


@dataclass(frozen=True)
class DeleteCounts:
    """What the delete tasks did.

    Attributes:
        files: Files deleted (a file already gone counts as deleted).
        bytes: Their total size.
        dirs: Directories deleted.
        failures: Paths that could not be deleted.
        pids: Process ids of the tasks that deleted (distinct, sorted).
        tasks: Delete tasks run.
    """

    files: int
    bytes: int
    dirs: int
    failures: int
    pids: tuple[int, ...]
    tasks: int


def _counts_batch(files: int, size: int, dirs: int, failures: int) -> Any:
    import pyarrow as pa

    return pa.RecordBatch.from_pydict(
        {
            "files": pa.array([files], pa.int64()),
            "bytes": pa.array([size], pa.int64()),
            "dirs": pa.array([dirs], pa.int64()),
            "failures": pa.array([failures], pa.int64()),
            "pid": pa.array([os.getpid()], pa.int64()),
        }
    )


def _file_deleter(
    reopen: Callable[[], Storage], threads: int
) -> Callable[[Iterator[Any]], Iterator[Any]]:
    def delete_partition(batches: Iterator[Any]) -> Iterator[Any]:
        paths: list[str] = []
        sizes: list[int] = []
        for batch in batches:
            paths += batch.column(0).to_pylist()
            sizes += batch.column(1).to_pylist()
        if not paths:
            return
        storage = reopen()
        size = storage.delete_batch_size
        chunks = [range(i, min(i + size, len(paths))) for i in range(0, len(paths), size)]

        def delete_chunk(chunk: range) -> tuple[int, int, int]:
            failed = set(storage.delete_files([paths[i] for i in chunk]))
            ok = [i for i in chunk if paths[i] not in failed]
            return len(ok), sum(sizes[i] for i in ok), len(chunk) - len(ok)

        files = deleted_bytes = failures = 0
        with ThreadPoolExecutor(max_workers=max(1, min(threads, len(chunks)))) as pool:
            for n_ok, n_bytes, n_failed in pool.map(delete_chunk, chunks):
                files += n_ok
                deleted_bytes += n_bytes
                failures += n_failed
        yield _counts_batch(files, deleted_bytes, 0, failures)

    return delete_partition


def _dir_deleter(reopen: Callable[[], Storage]) -> Callable[[Iterator[Any]], Iterator[Any]]:
    def delete_partition(batches: Iterator[Any]) -> Iterator[Any]:
        storage: Storage | None = None
        dirs = failures = 0
        for batch in batches:
            for path in batch.column(0).to_pylist():
                storage = storage or reopen()
                ok = storage.delete_dir(path)
                dirs += ok
                failures += not ok
        if storage is not None:
            yield _counts_batch(0, 0, dirs, failures)

    return delete_partition


def delete_on_executors(
    spark: Any,
    storage: Storage,
    files: Any,
    dirs: list[str],
    *,
    threads: int = 8,
    on_files_done: Callable[[int, int], None] | None = None,
) -> DeleteCounts:
    """Delete files, then directories deepest first, in Spark tasks.

    Args:
        spark: The Spark session.
        storage: The table's storage (``lists_on_executors``).
        files: Arrow table ``path`` (relative to the root), ``size`` (bytes) of the files.
        dirs: Directories relative to the root (each deleted only if empty).
        threads: Delete calls in flight per task.
        on_files_done: Called with (files done, files total) once the file tasks finished.

    Returns:
        The totals over all tasks.

    Raises:
        StorageError: When a path escapes the root or lies in the log (the job fails).
    """
    import pyarrow as pa

    rows: list[dict[str, int]] = []
    tasks = 0
    slots = task_slots(spark)
    reopen = storage.executor_factory()
    if files.num_rows:
        n = min(slots, -(-files.num_rows // storage.delete_batch_size))
        given = spark.createDataFrame(files.select(["path", "size"]))
        # round robin: the same number of paths in every task
        done = given.repartition(n).mapInArrow(_file_deleter(reopen, threads), _COUNTS)
        rows += done.toArrow().to_pylist()
        tasks += n
        if on_files_done is not None:
            on_files_done(files.num_rows, files.num_rows)
    by_depth: dict[int, list[str]] = defaultdict(list)
    for d in dirs:
        by_depth[d.count("/")].append(d)
    for depth in sorted(by_depth, reverse=True):
        level = by_depth[depth]
        n = min(slots, -(-len(level) // storage.delete_batch_size))
        given = spark.createDataFrame(pa.table({"path": pa.array(level, pa.string())}))
        rows += given.repartition(n).mapInArrow(_dir_deleter(reopen), _COUNTS).toArrow().to_pylist()
        tasks += n
    return DeleteCounts(
        files=sum(r["files"] for r in rows),
        bytes=sum(r["bytes"] for r in rows),
        dirs=sum(r["dirs"] for r in rows),
        failures=sum(r["failures"] for r in rows),
        pids=tuple(sorted({r["pid"] for r in rows})),
        tasks=tasks,
    )
