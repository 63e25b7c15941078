"""Recursive listing of a table's files with Delta's hidden-name rules, in parallel.

A file or directory is hidden (and a hidden directory's subtree skipped) when its name starts
with ``_`` or ``.``, except names starting with ``_delta_index``, ``_change_data`` or
``<partitionColumn>=``. So ``_delta_log`` is never listed. Directories that do not look like
partitions (random prefixes, column mapping) are ordinary directories and are walked. Symbolic
links are never followed and never returned (they are counted, so callers can report them).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from python_ops.ops.vacuum.sources.file_stats import stat_unprotected
from python_ops.storage import DirScan, FileEntry, Storage
from python_ops.storage.key_ranges import Bounds, key_ranges, split_points
from python_ops.storage.paths import is_canonical

log = logging.getLogger(__name__)

_ALWAYS_VISIBLE = ("_delta_index", "_change_data")


def is_hidden(name: str, partition_columns: Iterable[str]) -> bool:
    """Delta's rule for names VACUUM must not touch.

    Args:
        name: One path component.
        partition_columns: The table's partition columns.

    Returns:
        True when the name (and, for a directory, its subtree) is hidden.
    """
    if not name or name[0] not in "_.":
        return False
    if name.startswith(_ALWAYS_VISIBLE):
        return False
    return not any(name.startswith(f"{column}=") for column in partition_columns)


_BATCH_ROWS = 65_536  # entries held as Python values before they become an Arrow batch


def scan_batch(scan: DirScan) -> Any:
    """Entries as an Arrow record batch: ``path``, ``size``, ``mtime`` (ms), ``is_dir``."""
    import pyarrow as pa

    return pa.RecordBatch.from_arrays(
        [
            pa.array(scan.paths, pa.string()),
            pa.array(scan.sizes, pa.int64()),
            pa.array(scan.mtimes, pa.int64()),
            pa.array(scan.is_dir, pa.bool_()),
        ],
        names=["path", "size", "mtime", "is_dir"],
    )


@dataclass(frozen=True)
class Listing:
    """Visible files and directories under some roots of a table, as Arrow batches.

    A big listing never exists as Python values all at once: entries become a batch every
    65,536 (a million-file table: about 100 MB of Python objects otherwise).

    Attributes:
        batches: The entries (paths relative to the table root), symbolic links left out.
        symlinks_skipped: Symbolic links seen and left alone.
        directories_listed: Number of list calls made.
        spellings_kept: Entries left out because their path is not canonical (object stores:
            keys such as ``p=a//x``), never deleted under another name.
    """

    batches: tuple[Any, ...]
    symlinks_skipped: int
    directories_listed: int
    spellings_kept: int = 0

    @property
    def files_listed(self) -> int:
        """Files (not directories) in the listing."""
        return sum(b.num_rows - b.column(3).true_count for b in self.batches)

    @property
    def entries(self) -> tuple[FileEntry, ...]:
        """The entries as objects (for callers that want them; costs one object per entry)."""
        t = self.table()
        return tuple(
            FileEntry(p, z, m, d)
            for p, z, m, d in zip(
                t.column("path").to_pylist(),
                t.column("size").to_pylist(),
                t.column("mtime").to_pylist(),
                t.column("is_dir").to_pylist(),
                strict=True,
            )
        )

    def table(self) -> Any:
        """The entries as an Arrow table: ``path``, ``size``, ``mtime`` (ms), ``is_dir``."""
        import pyarrow as pa

        return pa.Table.from_batches(self.batches, schema=scan_batch(DirScan()).schema)


class _Batches:
    """Entries collected into Arrow batches as they come."""

    def __init__(self) -> None:
        self.batches: list[Any] = []
        self.scan = DirScan()

    def append(self, path: str, size: int, mtime: int, is_dir: bool) -> None:
        self.scan.append(path, size, mtime, is_dir, False)
        if len(self.scan.paths) >= _BATCH_ROWS:
            self.flush()

    def flush(self) -> tuple[Any, ...]:
        if self.scan.paths:
            self.batches.append(scan_batch(self.scan))
            self.scan = DirScan()
        return tuple(self.batches)


def list_visible(
    storage: Storage,
    *,
    partition_columns: Iterable[str],
    roots: Iterable[str] = ("",),
    max_workers: int = 8,
    split_hints: Any = None,
    protected: Any = None,
) -> Listing:
    """List every visible file and directory below ``roots``, breadth-first in parallel.

    Args:
        storage: The table's storage.
        partition_columns: Partition columns (their ``col=`` directories are visible).
        roots: Directories to start from, relative to the table root ("" = the root). The
            roots themselves are not returned.
        max_workers: Directories listed concurrently (on a cluster,
            ``executor_listing.listing_frame`` lists in Spark tasks instead).
        split_hints: Relative paths known to exist (VACUUM: the paths the log protects). On
            storages that list key ranges (``lists_key_ranges``), a big prefix is cut into up
            to ``max_workers`` ranges at quantiles of these names and the ranges are listed
            in parallel (``key_ranges``); elsewhere ignored.
        protected: Paths the caller keeps whatever their age (VACUUM's protected set, an
            Arrow string Array). Where the storage lists names before stats
            (``names_before_stats``: local disks), a file among them is never statted: its
            ``size`` and ``mtime`` stay null. Only the other files are (``stat_unprotected``).

    Returns:
        The listing.

    Raises:
        StorageError: When a directory cannot be listed.
    """
    columns = tuple(partition_columns)
    if storage.flat_listing:
        hints = split_hints if storage.lists_key_ranges and max_workers > 1 else None
        return _list_flat(storage, columns, list(dict.fromkeys(roots)), max_workers, hints)
    deferred = protected is not None and storage.names_before_stats
    scan = storage.scan_names if deferred else storage.scan_dir
    listing = _walk(scan, columns, list(dict.fromkeys(roots)), max_workers)
    if not deferred:
        return listing
    table, links = stat_unprotected(storage, listing.table(), protected)
    return Listing(
        tuple(table.to_batches()), listing.symlinks_skipped + links, listing.directories_listed
    )


def _walk(
    scan: Callable[[str], DirScan], columns: tuple[str, ...], level: list[str], max_workers: int
) -> Listing:
    """A directory tree breadth-first from ``level``, each directory through ``scan``."""
    out = _Batches()
    symlinks = 0
    listed = 0
    # one directory at a time needs no pool (a local disk: listing_concurrency 1)
    pool = ThreadPoolExecutor(max_workers=max_workers) if max_workers > 1 else None
    try:
        while level:
            listed += len(level)
            next_level: list[str] = []
            for children in pool.map(scan, level) if pool else map(scan, level):
                batch, links, dirs = _visible_batch(children, columns)
                symlinks += links
                if batch.num_rows:
                    out.batches.append(batch)
                    next_level += dirs
            level = next_level
    finally:
        if pool is not None:
            pool.shutdown()
    return Listing(out.flush(), symlinks, listed)


_HIDDEN_CANDIDATE = r"(^|/)[_.][^/]*$"  # the last name starts with '_' or '.'


# Up to this many entries a directory is judged name by name in Python: for so few, Arrow's
# compute calls cost more than the names do, and each call lets another thread take the
# interpreter, which a post-hook's due check beside other models' builds then waits for.
_JUDGED_ONE_BY_ONE_UP_TO = 1_024


def _visible_batch(scan: DirScan, columns: tuple[str, ...]) -> tuple[Any, int, list[str]]:
    """One directory's visible entries as a batch, the symbolic links it left out, its dirs.

    Per directory, not per entry: the names that may be hidden (starting with ``_`` or ``.``,
    few) are judged by ``is_hidden`` one by one; everything else is Arrow compute. A small
    directory is judged wholly by ``is_hidden``, name by name.
    """
    if len(scan.paths) <= _JUDGED_ONE_BY_ONE_UP_TO:
        return _visible_one_by_one(scan, columns)
    import pyarrow as pa
    import pyarrow.compute as pc

    batch = scan_batch(scan)
    links = pa.array(scan.is_symlink, pa.bool_())
    candidates = pc.match_substring_regex(batch.column(0), _HIDDEN_CANDIDATE)
    hidden = candidates
    if candidates.true_count:
        judged = [
            is_hidden(path.rpartition("/")[2], columns)
            for path in batch.column(0).filter(candidates).to_pylist()
        ]
        hidden = pc.replace_with_mask(candidates, candidates, pa.array(judged, pa.bool_()))
    shown_links = pc.and_(links, pc.invert(hidden)).true_count  # a hidden link is not counted
    dropped = pc.or_(links, hidden)
    if dropped.true_count:
        batch = batch.filter(pc.invert(dropped))
    return batch, shown_links, batch.column(0).filter(batch.column(3)).to_pylist()


def _visible_one_by_one(scan: DirScan, columns: tuple[str, ...]) -> tuple[Any, int, list[str]]:
    """``_visible_batch`` for a small directory: the same rule, one name at a time."""
    keep: list[int] = []
    shown_links = 0
    for i, (path, link) in enumerate(zip(scan.paths, scan.is_symlink, strict=True)):
        if is_hidden(path.rpartition("/")[2], columns):
            continue  # a hidden link is not counted
        if link:
            shown_links += 1
        else:
            keep.append(i)
    if len(keep) < len(scan.paths):
        scan = DirScan(
            [scan.paths[i] for i in keep],
            [scan.sizes[i] for i in keep],
            [scan.mtimes[i] for i in keep],
            [scan.is_dir[i] for i in keep],
            [False] * len(keep),
        )
    dirs = [path for path, is_dir in zip(scan.paths, scan.is_dir, strict=True) if is_dir]
    return scan_batch(scan), shown_links, dirs


def _list_flat(
    storage: Storage,
    columns: tuple[str, ...],
    roots: list[str],
    max_workers: int,
    hints: Any,
) -> Listing:
    """Object stores: list each visible sub-prefix recursively and concurrently.

    One delimited listing per root finds its files and sub-prefixes; each visible sub-prefix
    is then listed recursively (paginated, 1,000 keys per request) on ``max_workers`` threads.
    With ``hints``, a prefix with enough known names (fewer prefixes than threads) is listed as
    key ranges in parallel: one unpartitioned table's root no longer lists page after page.

    Prefixes are not directories: only marker objects (``dir/``) are reported as directories,
    so the counting rule never selects a "directory" that exists only as a key prefix. A key
    whose path is not canonical (``p=a//x``, ``p=a/./x``: another object than ``p=a/x`` on an
    object store) is left out and counted (``Listing.spellings_kept``): it is never compared
    with, nor deleted as, the canonical path (``storage.paths``).
    """
    odd: list[str] = []

    def visible(path: str) -> bool:
        if not is_canonical(path):
            odd.append(path)
            return False
        return not any(is_hidden(part, columns) for part in path.split("/"))

    out = _Batches()
    prefixes: list[str] = []
    with ThreadPoolExecutor(max_workers=max(1, max_workers)) as pool:
        for entries in pool.map(_lister(storage, False), _jobs(roots, hints, max_workers, False)):
            for entry in entries:
                if not visible(entry.path):
                    continue  # e.g. _delta_log: never listed
                if entry.is_dir:
                    prefixes.append(entry.path)
                else:
                    out.append(entry.path, entry.size_bytes, entry.modification_time_ms, False)
        for subtree in pool.map(_lister(storage, True), _jobs(prefixes, hints, max_workers, True)):
            for e in subtree:
                if visible(e.path):
                    out.append(e.path, e.size_bytes, e.modification_time_ms, e.is_dir)
    if odd:
        log.warning(
            "vacuum %s: kept %d key(s) whose names are not canonical paths, e.g. %r",
            storage.root,
            len(odd),
            odd[0],
        )
    return Listing(out.flush(), 0, len(roots) + len(prefixes), len(odd))


def _jobs(
    rels: list[str], hints: Any, max_workers: int, recursive: bool
) -> list[tuple[str, Bounds]]:
    """Listing jobs: each prefix whole, or cut into key ranges where threads would idle."""
    if hints is None or len(rels) >= max_workers:  # the threads are busy without ranges
        return [(rel, (None, None)) for rel in rels]
    out: list[tuple[str, Bounds]] = []
    for rel in rels:
        ranges = max_workers // len(rels)
        points = split_points(hints, rel, ranges=ranges, one_level=not recursive)
        out += [(rel, bounds) for bounds in key_ranges(points)]
    return out


def _lister(storage: Storage, recursive: bool) -> Callable[[tuple[str, Bounds]], list[FileEntry]]:
    """A job's listing: one level or the subtree, of a prefix or of one key range of it."""

    def run(job: tuple[str, Bounds]) -> list[FileEntry]:
        rel, (start, last) = job
        if start is None and last is None:
            return storage.list_tree(rel) if recursive else storage.list_dir(rel)
        return storage.list_range(rel, start_after=start, last=last, recursive=recursive)

    return run
