"""List a table's prefixes on the Spark cluster's executors (DataFrame API).

On one machine ``listing.list_visible`` lists prefixes on threads. On a cluster the listing can
be spread over executors instead: a DataFrame with one row per prefix, repartitioned so each
task gets a few prefixes, and ``mapInArrow`` running the storage's own ``list_tree`` (on S3 one
paginated ``ListObjectsV2`` per 1,000 keys) inside each task, on a storage reopened there by its
``executor_factory`` (storages with ``lists_on_executors``). No RDDs and no JVM calls, so it
runs on classic Spark, Spark Connect clusters and the embedded engine alike.

Executors need ``python_ops`` (and boto3) installed. The task closure carries the connection
settings, credentials included, as Spark ships any task closure; they are never logged. Where
executors have their own credentials (instance roles), pass settings without keys.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from python_ops.storage.base import FileEntry, Storage

_SCHEMA = "path string, size long, mtime long, is_dir boolean"


def list_on_executors(
    spark: Any, storage: Storage, prefixes: Iterable[str], *, tasks: int | None = None
) -> list[FileEntry]:
    """Recursively list ``prefixes`` of a table in Spark tasks.

    Args:
        spark: The Spark session (its executors do the listing).
        storage: The table's storage (root and settings are shipped to the tasks).
        prefixes: Directories relative to the table root.
        tasks: Spark tasks to spread the prefixes over (default: one per prefix, at most 200).

    Returns:
        Every object below the prefixes (markers as directories), paths relative to the root.
    """
    import pyarrow as pa

    chosen = list(dict.fromkeys(prefixes))
    if not chosen:
        return []
    reopen = storage.executor_factory()

    def list_partition(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        executor_storage = reopen()
        for batch in batches:
            for prefix in batch.column(0).to_pylist():
                entries = executor_storage.list_tree(prefix)
                yield pa.RecordBatch.from_pydict(
                    {
                        "path": pa.array([e.path for e in entries], pa.string()),
                        "size": pa.array([e.size_bytes for e in entries], pa.int64()),
                        "mtime": pa.array([e.modification_time_ms for e in entries], pa.int64()),
                        "is_dir": pa.array([e.is_dir for e in entries], pa.bool_()),
                    }
                )

    frame = spark.createDataFrame(pa.table({"prefix": pa.array(chosen, pa.string())}))
    listed = (
        frame.repartition(tasks or min(len(chosen), 200))
        .mapInArrow(list_partition, _SCHEMA)
        .toArrow()
    )
    return [
        FileEntry(path, int(size), int(mtime), bool(is_dir))
        for path, size, mtime, is_dir in zip(
            listed.column("path").to_pylist(),
            listed.column("size").to_pylist(),
            listed.column("mtime").to_pylist(),
            listed.column("is_dir").to_pylist(),
            strict=True,
        )
    ]
