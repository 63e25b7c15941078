"""The safe-commit probe: refuse to commit to S3 unless the store makes commits atomic."""

from __future__ import annotations

import uuid

from python_ops import runtime
from python_ops.errors import ConfigError, StorageError
from python_ops.storage.s3 import S3Storage
from python_ops.storage.settings import S3Settings


def require_safe_commits(location: str, *, settings: S3Settings | None = None) -> None:
    """Refuse to commit to a Delta table on S3 unless commits are atomic.

    delta-rs (1.x) commits on S3 with conditional writes (``PutObject`` with ``If-None-Match:
    *``; checked on the wire, with or without ``AWS_S3_ALLOW_UNSAFE_RENAME``): the commit file
    of a version is created only if no other writer created it first. A store that ignores the
    header would let two writers overwrite each other's commits. The store is probed once per
    endpoint and bucket (two conditional writes of one probe key; the second must be refused).

    Args:
        location: The table location (``s3://bucket/path``).
        settings: Connection settings (default: resolved from the environment).

    Raises:
        ConfigError: When the store ignores conditional writes.
        StorageError: When the probe itself fails.
    """
    settings = settings or S3Settings.resolve()
    storage = S3Storage(location, settings=settings)
    if (settings.endpoint_url, storage.bucket) in runtime.SAFE_BUCKETS.value:
        return
    probe = f".python_ops-commit-probe-{uuid.uuid4().hex}"
    try:
        if not storage.create_if_absent(probe, b""):
            raise StorageError(f"cannot check conditional writes on {location}: probe key exists")
        honoured = not storage.create_if_absent(probe, b"")
    finally:
        storage.delete_files([probe])
    if not honoured:
        raise ConfigError(
            setting="endpoint_url",
            value=settings.endpoint_url or "AWS S3",
            fix=f"Refusing to commit to {location}: the store ignores conditional writes "
            "(If-None-Match), so concurrent commits could overwrite each other. Use a store "
            "with conditional writes (AWS S3, MinIO, Cloudflare R2, moto).",
        )
    with runtime.SAFE_BUCKETS.lock:
        runtime.SAFE_BUCKETS.value.add((settings.endpoint_url, storage.bucket))
