"""The delta-rs writer: opening a table for a commit, checkpoints and table properties.

Every commit this project makes in-process goes through delta-rs: checkpoints and properties
here, OPTIMIZE compaction (``DeltaTable.optimize``) and the Z-order commit
(``create_write_transaction``) in ``python_ops.ops.optimize``, history rows in
``python_ops.maintenance.records.history``; all open their table with ``open_delta`` (and, on
S3, only after ``commit_storage_options``' safe-commit check). Where the engine has Delta, OPTIMIZE
is Delta's own SQL instead (``python_ops.ops.optimize.execute``).

Checkpoints are delta-rs's where it supports the table; otherwise Delta writes them
(``python_ops.ops.writer_choice.checkpoint_writer``): Delta's SQL has no checkpoint statement,
so a local classic Spark with Delta runs ``writeCheckpointFiles`` and ``_last_checkpoint``
(``python_ops.delta.writing.local_writer``). Every delta-rs commit passes ``quiet_hooks()``: no
expired log cleanup and no checkpoint the op did not ask for.
"""

from __future__ import annotations

from typing import Any

from python_ops.errors import WriterError
from python_ops.storage import delta_storage_options, is_s3


def open_delta(location: str, *, version: int | None = None, for_commit: bool = False) -> Any:
    """A delta-rs ``DeltaTable`` with the storage options of its location.

    Args:
        location: The table location.
        version: Load this version (default: the latest).
        for_commit: The caller will commit: on S3, first check that commits are safe.

    Returns:
        The table.

    Raises:
        ConfigError: When credentials are missing or S3 commits would not be safe.
        WriterError: When delta-rs cannot load the table (a log it cannot read).
    """
    from deltalake import DeltaTable
    from deltalake.exceptions import DeltaError

    options = commit_storage_options(location) if for_commit else delta_storage_options(location)
    try:
        return DeltaTable(location, version=version, storage_options=options)
    except DeltaError as err:  # TableNotFoundError and DeltaProtocolError are DeltaErrors
        raise WriterError(f"delta-rs cannot open {location}: {err}") from err


def quiet_hooks(*, checkpoint: bool = False) -> Any:
    """delta-rs post-commit hook settings for our commits: no log cleanup, no unasked checkpoint.

    delta-rs's post-commit hook deletes expired log files on every commit unless told not to
    (and writes a checkpoint at each ``delta.checkpointInterval``): a compaction commit would
    then delete commits a model's policy keeps (measured with deltalake 1.6: commits 0-9 gone
    after a checkpoint at 10, ``.crc`` files orphaned). Every commit this project makes through
    delta-rs passes these settings, so a write does only what it was asked.

    Args:
        checkpoint: Let the hook write a checkpoint at the interval (our history table only).

    Returns:
        A ``deltalake.PostCommitHookProperties``.
    """
    from deltalake import PostCommitHookProperties

    return PostCommitHookProperties(create_checkpoint=checkpoint, cleanup_expired_logs=False)


def commit_storage_options(location: str) -> dict[str, str] | None:
    """delta-rs storage options for a commit; on S3, first check that commits are safe.

    Args:
        location: The table location.

    Returns:
        The options (None off S3).

    Raises:
        ConfigError: When credentials are missing or the store ignores conditional writes.
    """
    if is_s3(location):
        from python_ops.storage.safe_commit import require_safe_commits

        require_safe_commits(location)
    return delta_storage_options(location)


def write_checkpoint(location: str) -> int:
    """Write a checkpoint at the table's current version with delta-rs.

    Args:
        location: The table location.

    Returns:
        The version the checkpoint was written at.

    Raises:
        WriterError: When delta-rs cannot write it (for example a table feature it does not
            support).
    """
    table = open_delta(location, for_commit=True)
    try:
        table.create_checkpoint()
        return int(table.version())
    except Exception as err:  # delta-rs raises DeltaError, DeltaProtocolError, OSError ...
        raise WriterError(f"delta-rs could not write a checkpoint for {location}: {err}") from err


def set_table_properties(location: str, properties: dict[str, str]) -> bool:
    """Record table properties (one commit) unless they already have these values.

    Args:
        location: The table location.
        properties: Property names and values, e.g. ``{"delta.logRetentionDuration":
            "interval 30 days"}``.

    Returns:
        True when a commit was written, False when nothing changed.

    Raises:
        WriterError: When delta-rs cannot commit the change.
    """
    table = open_delta(location, for_commit=True)
    try:
        current = table.metadata().configuration
        changed = {k: v for k, v in properties.items() if current.get(k) != v}
        if not changed:
            return False
        table.alter.set_table_properties(
            changed, raise_if_not_exists=False, post_commithook_properties=quiet_hooks()
        )
        return True
    except Exception as err:  # delta-rs raises DeltaError, DeltaProtocolError, OSError ...
        raise WriterError(
            f"delta-rs could not set {sorted(properties)} on {location}: {err}"
        ) from err
