"""Expired log cleanup, as Delta's ``MetadataCleanup`` does it, on demand.

``options`` -> the model's retention policy recorded (when asked, not in dry runs) -> ``plan``
(retention, cutoff, listing, the checkpoint needed first) -> ``execute`` (checkpoint, selection,
deletes) -> result, with the run's audit record (docs/spec.md 2).

Project rules: the op runs on demand; when expired commits lie after the newest checkpoint (or
there is none) it first asks the Delta writer for a checkpoint; a model's retention policy is
recorded as table properties so every engine obeys it; files are deleted oldest first, so a run
killed mid-way leaves every kept version readable and a rerun finishes the job.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from types import MappingProxyType

from python_ops.delta.state.snapshot import Snapshot, read_snapshot
from python_ops.delta.table.features import Op
from python_ops.delta.table.protocol import check_protocol
from python_ops.errors import UnsupportedFeatureError
from python_ops.ops.audit import Audit, as_audit
from python_ops.ops.log_cleanup.execute import execute
from python_ops.ops.log_cleanup.options import LogCleanupOptions
from python_ops.ops.log_cleanup.plan import plan_cleanup
from python_ops.ops.results import LogCleanupResult
from python_ops.storage import Storage, open_storage

log = logging.getLogger(__name__)


def cleanup_logs(  # noqa: D417 (the options are documented once, on LogCleanupOptions)
    table: str | Storage,
    *,
    retention_days: float | None = None,
    dry_run: bool = True,
    checkpoint_if_needed: bool = True,
    force: bool = False,
    record_policy: dict[str, str] | None = None,
    now_ms: int | None = None,
    on_progress: Callable[[int, int], None] | None = None,
    snapshot: Snapshot | None = None,
    audit: Audit | bool = True,
) -> LogCleanupResult:
    """Delete expired ``_delta_log`` files (by default only report them).

    Args:
        table: Table location or an open ``Storage``.
        on_progress: Called with (files done, files total) after each deletion.
        snapshot: The table's latest snapshot if the caller has just read it (its log listing
            is used too); None reads it.
        audit: Whether the run is audited, and the caller's labels (``ops.audit.Audit``).
        The others: ``LogCleanupOptions``'s fields, documented there.

    Returns:
        What was selected and deleted.

    Raises:
        ConfigError: For a bad retention or retention property.
        TableNotFoundError: When there is no Delta table at the location.
        WriterError: When recording the policy fails.
    """
    storage = table if isinstance(table, Storage) else open_storage(table)
    started = time.perf_counter()
    options = LogCleanupOptions(
        now_ms=int(time.time() * 1000) if now_ms is None else now_ms,
        retention_days=retention_days,
        dry_run=dry_run,
        checkpoint_if_needed=checkpoint_if_needed,
        force=force,
        record_policy=MappingProxyType(dict(record_policy or {})),
    )
    try:
        snapshot = read_snapshot(storage) if snapshot is None else snapshot
        check_protocol(snapshot.protocol, Op.CLEANUP_LOGS, location=storage.root)
        recorded, snapshot = _record_policy(storage, options, snapshot)
        result = execute(
            plan_cleanup(storage, options, snapshot),
            started=started,
            recorded=recorded,
            on_progress=on_progress,
        )
    except Exception as err:
        as_audit(audit).record(
            "cleanup_logs",
            storage.root,
            "failed",
            {"dry_run": dry_run, "retention_days": retention_days, "error": str(err)},
        )
        raise
    as_audit(audit).record(
        "cleanup_logs", storage.root, "succeeded", result.to_dict(include_files=False)
    )
    return result


def _record_policy(
    storage: Storage, options: LogCleanupOptions, snapshot: Snapshot
) -> tuple[dict[str, str], Snapshot]:
    """Record the model's retention policy as table properties first (not in dry runs).

    Returns:
        The properties recorded, and the snapshot to plan on (read again after a commit).
    """
    if not options.record_policy or options.dry_run:
        return {}, snapshot
    from python_ops.delta.writing.writer import set_table_properties

    try:
        check_protocol(snapshot.protocol, Op.PROPERTIES, location=storage.root)
    except UnsupportedFeatureError as err:
        log.warning("cleanup_logs %s: retention policy not recorded: %s", storage.root, err)
        return {}, snapshot
    if not set_table_properties(storage.root, dict(options.record_policy)):
        return {}, snapshot
    return dict(options.record_policy), read_snapshot(storage)
