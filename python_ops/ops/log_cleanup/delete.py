"""Expired log cleanup's deletes: oldest version first, sidecars last, staged leftovers.

A run killed mid-way leaves every kept version readable (the log keeps no gap) and a rerun
finishes the job. ``Storage`` is the deleter: it refuses any path outside ``_delta_log``'s
own names (``delete_log_file``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from python_ops.delta.log.commits import list_log
from python_ops.delta.log.log_files import SIDECAR_DIR, LogFile, LogFileKind, stale_staged_files
from python_ops.delta.state.checkpoint_reader import checkpoint_sidecars
from python_ops.ops.results import LogFileToDelete
from python_ops.storage import Storage

log = logging.getLogger(__name__)


def orphan_sidecars(
    storage: Storage, files: list[LogFile], expired: list[LogFile], cutoff_ms: int
) -> list[LogFileToDelete]:
    """Sidecars older than the cutoff that no remaining checkpoint references.

    Hidden files in ``_sidecars`` (a Hadoop ``.<name>.crc`` checksum beside each sidecar) are
    not sidecars: no checkpoint names them, and Delta leaves them alone.
    """
    sidecars = [
        e
        for e in storage.list_dir(SIDECAR_DIR)
        if not e.is_dir and not e.name.startswith((".", "_"))
    ]
    if not sidecars:
        return []
    gone = {f.name for f in expired}
    referenced: set[str] = set()
    for f in files:
        if f.kind is LogFileKind.CHECKPOINT and f.name not in gone:
            referenced.update(checkpoint_sidecars(storage, f))
    return [
        LogFileToDelete(e.path, None, "sidecar", e.size_bytes)
        for e in sorted(sidecars, key=lambda e: e.path)
        if e.name not in referenced and e.modification_time_ms <= cutoff_ms
    ]


def delete_oldest_first(
    storage: Storage,
    selected: list[LogFileToDelete],
    on_progress: Callable[[int, int], None] | None,
) -> tuple[int, int, tuple[str, ...]]:
    """Delete oldest versions first; sidecars last (after the checkpoints that used them).

    After the first file that could not be deleted nothing newer is: the log keeps no gap (a
    kept version whose successor is gone), as when a run is killed mid-way.

    Returns:
        Files deleted, their bytes, and the paths not deleted (the failed one and every later).
    """
    ordered = sorted(selected, key=lambda f: (f.version is None, f.version or 0, f.path))
    deleted = deleted_bytes = 0
    failed: list[str] = []
    for done, f in enumerate(ordered, start=1):
        if not failed and storage.delete_log_file(f.path):
            deleted += 1
            deleted_bytes += f.size_bytes
        else:
            failed.append(f.path)
        if on_progress is not None:
            on_progress(done, len(ordered))
    return deleted, deleted_bytes, tuple(failed)


def remove_stale_staged(storage: Storage, *, latest_version: int, now_ms: int) -> list[str]:
    """Delete staged uploads that killed writers left in ``_delta_log`` (see ``log_files``).

    Args:
        storage: The table's storage.
        latest_version: The newest committed version.
        now_ms: The current time in ms.

    Returns:
        The paths deleted.
    """
    stale = stale_staged_files(list_log(storage), latest_version=latest_version, now_ms=now_ms)
    removed = [f.path for f in stale if storage.delete_log_file(f.path)]
    if removed:
        log.info("%s: removed %d staged file(s) of killed writers", storage.root, len(removed))
    return removed
