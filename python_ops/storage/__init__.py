"""Storage: every op reaches files through a ``Storage`` rooted at a table location.

``base`` defines the contract (relative ``/`` paths, nothing outside the root, capabilities
instead of type checks); ``local`` (``os.scandir``, symlinks never followed), ``arrow``
(``pyarrow.fs``: GCS, ADLS, HDFS) and ``s3`` (paginated listing, batched deletes, retries, with
``settings`` and the ``safe_commit`` probe) implement it; ``listing`` and ``executor_listing``
list a table's data files on threads or on Spark executors. ``open_storage`` below picks the
implementation for a location.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlparse

from python_ops.storage.arrow import ArrowStorage
from python_ops.storage.base import DirScan, FileEntry, Storage, is_remote, normalize_location
from python_ops.storage.local import LocalStorage

__all__ = [
    "ArrowStorage",
    "DirScan",
    "FileEntry",
    "LocalStorage",
    "Storage",
    "delta_storage_options",
    "is_remote",
    "is_s3",
    "normalize_location",
    "open_storage",
]


def is_s3(location: str) -> bool:
    """Tell whether a location is on S3 (``s3://`` or ``s3a://``)."""
    return not location.startswith("/") and urlparse(location).scheme in ("s3", "s3a")


def open_storage(location: str, *, spark: Any = None) -> Storage:
    """Open the storage rooted at a table location.

    Args:
        location: A local path, ``file:`` URI or remote URI.
        spark: The Spark session the op runs in: its ``spark.hadoop.fs.s3a.*`` settings fill
            S3 settings the environment does not give.

    Returns:
        ``S3Storage`` for ``s3://``/``s3a://``, ``ArrowStorage`` for other remote URIs
        (``gs://``, ``abfss://``, ``hdfs://`` through ``pyarrow.fs``), else ``LocalStorage``.

    Raises:
        ConfigError: When S3 credentials are missing.
    """
    root = normalize_location(location)
    if is_s3(root):
        from python_ops.storage.s3 import S3Storage
        from python_ops.storage.settings import S3Settings

        return S3Storage(root, settings=S3Settings.resolve(spark=spark))
    return ArrowStorage(root) if is_remote(root) else LocalStorage(root)


def delta_storage_options(location: str) -> dict[str, str] | None:
    """delta-rs ``storage_options`` for a table location (None: delta-rs's defaults).

    Args:
        location: The table location.

    Returns:
        Options for S3 (credentials, endpoint, region); None elsewhere.
    """
    if not is_s3(location):
        return None
    from python_ops.storage.settings import S3Settings

    settings = S3Settings.resolve()
    settings.require_credentials(location)
    return settings.delta_storage_options()
