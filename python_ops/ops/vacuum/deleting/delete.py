"""VACUUM's deletion: the selected files in a bounded pool, then directories deepest first.

Never recursive: a directory is deleted only when empty, and one that is not empty when its turn
comes is kept and named (``kept``). At most one chunk per worker is in flight, so a run that is
stopped or killed has not deleted far beyond its last progress report.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from itertools import islice

from python_ops.ops.results import VacuumFile, VacuumGroup, VacuumKeptDir
from python_ops.ops.vacuum.deleting.kept import delete_dirs
from python_ops.storage import Storage

log = logging.getLogger("python_ops.ops.vacuum")


def group_by_prefix(paths: Iterable[VacuumFile]) -> tuple[VacuumGroup, ...]:
    """Selected files and directories counted per top-level directory (partition or prefix)."""
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for f in paths:
        prefix = f.path.split("/", 1)[0] if "/" in f.path else ("" if not f.is_dir else f.path)
        t = totals[prefix]
        if f.is_dir:
            t[2] += 1
        else:
            t[0] += 1
            t[1] += f.size_bytes
    return tuple(VacuumGroup(p, t[0], t[1], t[2]) for p, t in sorted(totals.items()))


def _log_progress(root: str, deleted: int, done: int, total: int, failed: int) -> None:
    """Log how many files are deleted so far: deleted ones only, never the ones tried."""
    if failed:
        log.info(
            "vacuum %s: deleted %d/%d files; %d could not be deleted (%d/%d tried)",
            root, deleted, total, failed, done, total,
        )  # fmt: skip
    else:
        log.info("vacuum %s: deleted %d/%d files", root, deleted, total)


def delete_selected(
    storage: Storage,
    selected: Sequence[VacuumFile],
    *,
    max_workers: int,
    on_progress: Callable[[int, int], None] | None,
    progress_interval_s: float,
    cutoff_ms: int,
) -> tuple[int, int, int, list[VacuumKeptDir], list[str]]:
    """Delete files in a bounded pool, then directories deepest first; never recursive.

    Returns:
        (files deleted, their bytes, directories deleted, directories kept because they were
        not empty, paths that could not be deleted).
    """
    files = [f for f in selected if not f.is_dir]
    dirs = [f for f in selected if f.is_dir]
    total = len(files)
    deleted_files = deleted_bytes = 0
    not_deleted: list[str] = []
    # Chunks, not one task per file: the executor's per-task cost would dominate an unlink;
    # on object stores a chunk is one batched delete request (up to 1,000 keys).
    size = max(1, min(storage.delete_batch_size, total // (4 * max(1, max_workers)) or 1))
    if storage.batched_deletes:
        size = storage.delete_batch_size  # full batches: fewest requests
    chunks = [files[i : i + size] for i in range(0, total, size)]

    def delete_chunk(chunk: list[VacuumFile]) -> tuple[int, int, list[str]]:
        failed = set(storage.delete_files([f.path for f in chunk]))
        ok = [f for f in chunk if f.path not in failed]
        return len(ok), sum(f.size_bytes for f in ok), sorted(failed)

    done = 0
    last_report = time.monotonic()
    workers = max(1, max_workers)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        # At most `workers` chunks in flight: a run stopped (or killed) after a progress report
        # has not silently deleted far beyond it, and memory stays bounded.
        pending = iter(chunks)
        in_flight = deque((c, pool.submit(delete_chunk, c)) for c in islice(pending, workers))
        while in_flight:
            chunk, future = in_flight.popleft()
            n_ok, n_bytes, failed = future.result()
            deleted_files += n_ok
            deleted_bytes += n_bytes
            not_deleted += failed
            done += len(chunk)
            now = time.monotonic()
            if done == total or now - last_report >= progress_interval_s:
                last_report = now
                _log_progress(storage.root, deleted_files, done, total, len(not_deleted))
                if on_progress is not None:
                    on_progress(done, total)
            following = next(pending, None)
            if following is not None:
                in_flight.append((following, pool.submit(delete_chunk, following)))
        deleted_dirs, kept, failed_dirs = delete_dirs(
            storage, (d.path for d in dirs), pool, cutoff_ms=cutoff_ms
        )
    return deleted_files, deleted_bytes, deleted_dirs, kept, not_deleted + failed_dirs
