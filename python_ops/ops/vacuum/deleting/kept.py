"""VACUUM's directory deletes: a directory that is not empty when its turn comes is kept.

The counting rule selects a directory that holds no file older than the cutoff, so a partition
directory a writer is filling right now (only young files), or one a file appeared in after the
listing, is selected and then cannot be deleted: deletes are never recursive. That is VACUUM
working as meant, not a failure (Delta counts only what it deleted and says nothing): the
directory is reported as kept, with what it holds. A directory that is empty and still cannot
be deleted, and a file that cannot be deleted, are failures, named by path.
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from collections.abc import Iterable, Sequence
from concurrent.futures import Executor

from python_ops.ops.results import VacuumFile, VacuumKeptDir
from python_ops.storage import FileEntry, Storage

HIDDEN = ("_", ".")


def kept_reason(storage: Storage, path: str, cutoff_ms: int) -> str | None:
    """Why a directory VACUUM could not delete is kept, or None when it is empty (a failure).

    Args:
        storage: The table's storage.
        path: The directory, relative to the table root.
        cutoff_ms: The run's cutoff.

    Returns:
        ``not empty: holds ...`` naming one entry and why it is there; None when empty.
    """
    entries: list[FileEntry] = sorted(storage.list_dir(path), key=lambda e: e.path)
    if not entries:
        return None
    first = next((e for e in entries if e.modification_time_ms >= cutoff_ms), entries[0])
    name = posixpath.basename(first.path.rstrip("/"))
    if first.modification_time_ms >= cutoff_ms:
        why = "modified after the cutoff: a writer may be filling it"
    elif name.startswith(HIDDEN):
        why = "a hidden entry, never listed"
    else:
        why = "not in the listing: it appeared after the listing"
    more = f" and {len(entries) - 1} more" if len(entries) > 1 else ""
    return f"not empty: holds {first.path}{more} ({why})"


def delete_dirs(
    storage: Storage, dirs: Iterable[str], pool: Executor, *, cutoff_ms: int
) -> tuple[int, list[VacuumKeptDir], list[str]]:
    """Delete directories deepest first, never recursively; keep the ones that are not empty.

    Args:
        storage: The table's storage.
        dirs: Selected directories, relative to the table root.
        pool: Where the deletes run.
        cutoff_ms: The run's cutoff (for the kept reason).

    Returns:
        (directories deleted, directories kept with the reason, directories that failed).
    """
    by_depth: dict[int, list[str]] = defaultdict(list)
    for d in dirs:
        by_depth[d.count("/")].append(d)
    deleted, kept, failed = 0, [], []
    for depth in sorted(by_depth, reverse=True):
        paths = by_depth[depth]
        for path, ok in zip(paths, pool.map(storage.delete_dir, paths), strict=True):
            if ok:
                deleted += 1
            elif (reason := kept_reason(storage, path, cutoff_ms)) is not None:
                kept.append(VacuumKeptDir(path, reason))
            else:
                failed.append(path)
    return deleted, sorted(kept, key=lambda k: k.path), sorted(failed)


def still_there(
    storage: Storage, selected: Sequence[VacuumFile], *, cutoff_ms: int
) -> tuple[list[VacuumKeptDir], list[str]]:
    """After deletes elsewhere (Spark tasks) reported failures: what was kept, what failed.

    One listing per parent directory of the selected paths, on this process.

    Args:
        storage: The table's storage.
        selected: The selected paths.
        cutoff_ms: The run's cutoff.

    Returns:
        (directories kept with the reason, paths that are still there and not kept).
    """
    parents: dict[str, set[str]] = {}
    for f in selected:
        parent = posixpath.dirname(f.path)
        if parent not in parents:
            parents[parent] = {e.path.rstrip("/") for e in storage.list_dir(parent)}
    kept: list[VacuumKeptDir] = []
    failed: list[str] = []
    for f in selected:
        if f.path not in parents[posixpath.dirname(f.path)]:
            continue
        reason = kept_reason(storage, f.path, cutoff_ms) if f.is_dir else None
        if reason is not None:
            kept.append(VacuumKeptDir(f.path, reason))
        else:
            failed.append(f.path)
    return kept, failed
