"""Whether a rewrite's input files are all in storage, checked before anything is written.

A rewrite that commits partition by partition (OPTIMIZE here, a native purge) and meets a missing
input half-way has already committed the partitions before it. One cheap look before the first
write (a stat of each input on a local disk, one listing of each input directory elsewhere)
refuses such a table before it changes.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from python_ops.delta.log.actions import AddFile
from python_ops.errors import LiveFilesMissingError
from python_ops.storage import Storage


def missing_live_files(storage: Storage, files: Sequence[AddFile]) -> list[str]:
    """The files of ``files`` that ``storage`` does not hold, relative to the table root.

    Where a stat is cheap (a local disk: ``names_before_stats``) each input is statted, never a
    whole directory listed; elsewhere (an object store) each directory holding inputs is listed
    once, one request per 1,000 names instead of one per file.

    Args:
        storage: The table's storage.
        files: Live files inside the table root (``relative_path`` set).

    Returns:
        The missing files' paths, in the order given.
    """
    rels = [f.relative_path for f in files if f.relative_path is not None]
    if storage.names_before_stats:
        scan = storage.stat_paths(rels)
        return [
            path
            for path, size, is_dir in zip(scan.paths, scan.sizes, scan.is_dir, strict=True)
            if size is None or is_dir
        ]
    by_directory: dict[str, list[str]] = defaultdict(list)
    for rel in rels:
        by_directory[rel.rpartition("/")[0]].append(rel)
    present: set[str] = set()
    for directory, group in by_directory.items():
        names = set(storage.list_names(directory))
        present.update(rel for rel in group if rel.rpartition("/")[2] in names)
    return [rel for rel in rels if rel not in present]


def require_live_files(storage: Storage, files: Sequence[AddFile], *, op: str) -> None:
    """Refuse a rewrite whose inputs are not all in storage, before it writes anything.

    Args:
        storage: The table's storage.
        files: The rewrite's inputs.
        op: The op, for the message (``OPTIMIZE``).

    Raises:
        LiveFilesMissingError: Naming the missing files (exit 2: nothing changed).
    """
    missing = missing_live_files(storage, files)
    if missing:
        raise LiveFilesMissingError(storage.root, op, missing)
