"""VACUUM's candidates from an inventory report instead of a listing (Delta's ``USING INVENTORY``).

On object stores a listing is the cost of VACUUM (one LIST request per 1,000 keys). Clouds
write inventory reports of a bucket on a schedule (S3 Inventory, Azure blob inventory, GCS
storage insights); Delta 4.4's ``VACUUM t USING INVENTORY <table or query>`` takes one in place
of the listing, with the columns ``path`` (the file's fully qualified URI), ``length``,
``isDir`` and ``modificationTime`` (ms). So does ``vacuum(..., inventory=...)`` here: the report
(Parquet files, a directory of them, or a Delta table) becomes the same Arrow entries a listing
yields, and the selection that follows is the listing's.

Rules, Delta's for an inventory (``VacuumCommand.getFilesFromInventory``): only entries under
the table root (anything else in the report is ignored, never deleted); an entry whose path
relative to the root is hidden by Delta's rule (starts with ``_`` or ``.``, except
``_delta_index``, ``_change_data`` and ``<partition column>=``) is left out, so
``_delta_log/`` is. Delta tests the whole relative path there, not each component as a listing
does, so a hidden file inside a partition directory (a Hadoop checksum
``day=1/.part-0.parquet.crc``) is a candidate from an inventory but not from a listing: as in
Delta. On a local disk an entry that is a symbolic link now is left out too. An entry the
report lists but storage no longer has is simply not found when deleted. Files written after
the report are unknown to it: they are younger than the retention anyway.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from python_ops.errors import ConfigError
from python_ops.ops.vacuum.sources.listing import is_hidden, scan_batch
from python_ops.storage import DirScan
from python_ops.storage.paths import is_canonical

#: Delta's inventory schema (``VacuumCommand``): column -> Arrow type name.
INVENTORY_COLUMNS = {
    "path": "string",
    "length": "int64",
    "isDir": "bool",
    "modificationTime": "int64",
}


def report_time_ms(inventory: str) -> int:
    """When the report was written: its newest file's time (a Delta table: its newest commit).

    Args:
        inventory: The report's path.

    Returns:
        Milliseconds since the epoch (0 when nothing is there).
    """
    log = os.path.join(inventory, "_delta_log")
    top = log if os.path.isdir(log) else inventory
    if os.path.isfile(top):
        return int(os.stat(top).st_mtime * 1000)
    times = [os.stat(os.path.join(d, f)).st_mtime for d, _, names in os.walk(top) for f in names]
    return int(max(times, default=0) * 1000)


def _read(inventory: str) -> Any:
    import pyarrow.dataset as ds

    if os.path.isdir(os.path.join(inventory, "_delta_log")):
        from deltalake import DeltaTable

        return DeltaTable(inventory).to_pyarrow_table(columns=list(INVENTORY_COLUMNS))
    try:
        return ds.dataset(inventory, format="parquet").to_table()
    except (OSError, ValueError) as err:  # missing path, not Parquet
        raise ConfigError(
            setting="inventory",
            value=inventory,
            fix=f"not a readable inventory report ({err}). Give a Parquet file, a directory "
            "of Parquet files or a Delta table.",
        ) from err


def _relative(path: str, root: str) -> str | None:
    """``path``'s spelling relative to the table root (not canonicalised), or None outside it.

    The spelling is returned as the report has it: a row ``<root>/p=a//x`` is ``p=a//x``, which
    is not canonical (``storage.paths``) and so is kept, never compared or deleted as ``p=a/x``.
    """
    for prefix in ("file://", "file:"):
        if path.startswith(prefix) and not root.startswith(prefix):
            path = path[len(prefix) :]
            break
    base = root.rstrip("/") + "/"
    if not path.startswith(base) or path == base:
        return None  # outside the root, or the root itself
    return path[len(base) :]


@dataclass(frozen=True)
class InventoryEntries:
    """An inventory report's entries under the table root, as a listing's Arrow table.

    Attributes:
        table: ``path``/``size``/``mtime``/``is_dir`` of the entries taken.
        taken: Entries taken.
        links_kept: Entries left out because they are, or lie below, a symbolic link.
        spellings_kept: Entries left out because their path is not canonical (``a//b``,
            ``a/./b``, a trailing ``/``): never deleted under another name.
    """

    table: Any
    taken: int
    links_kept: int
    spellings_kept: int


def inventory_entries(
    inventory: str,
    *,
    root: str,
    partition_columns: Iterable[str],
    roots: Iterable[str] = ("",),
    linked: Callable[[Iterable[str]], set[str]] | None = None,
    cutoff_ms: int | None = None,
) -> InventoryEntries:
    """The report's entries under the table root, as a listing's Arrow table.

    Args:
        inventory: The report: a Parquet file, a directory of Parquet files or a Delta table.
        root: The table root, as the storage names it.
        partition_columns: The table's partition columns (their directories are visible).
        roots: Only entries below these directories (relative; "" = all), as a partition
            filter's.
        linked: Which of some paths are, or lie below, a symbolic link
            (``Storage.behind_links``): those entries are left out.
        cutoff_ms: The run's retention cutoff: a report written before it is refused.

    Returns:
        The entries taken, and what was left out.

    Raises:
        ConfigError: When the report cannot be read, lacks Delta's inventory columns, was
            written before the retention cutoff, or has no entry under the table root.
    """
    _check_written(inventory, cutoff_ms)
    table = _read(inventory)
    _check_columns(table, inventory)
    prefixes = tuple(r.strip("/") + "/" for r in roots if r.strip("/"))
    rows, odd = _rows_under(table, root, tuple(partition_columns), prefixes)
    if not rows.paths and not odd and not prefixes:
        raise ConfigError(
            setting="inventory",
            value=inventory,
            fix=f"the report has no entry under the table root {root} (it covers "
            f"{len(table)} other object(s)): it is a report of another place. Use the report "
            "of the bucket or prefix that holds the table.",
        )
    behind = linked(rows.paths) if linked is not None and rows.paths else set()
    if behind:
        kept = DirScan()
        for path, size, mtime, is_dir in zip(
            rows.paths, rows.sizes, rows.mtimes, rows.is_dir, strict=True
        ):
            if path not in behind:
                kept.append(path, size, mtime, is_dir, False)
        rows = kept
    import pyarrow as pa

    table_of_rows = pa.Table.from_batches([scan_batch(rows)])
    return InventoryEntries(table_of_rows, len(rows.paths), len(behind), odd)


def _when(ms: int) -> str:
    import datetime as dt

    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def _check_written(inventory: str, cutoff_ms: int | None) -> None:
    """Refuse a report written before the retention cutoff: it cannot know what changed."""
    written = report_time_ms(inventory)
    if cutoff_ms is not None and written < cutoff_ms:
        raise ConfigError(
            setting="inventory",
            value=inventory,
            fix=f"the report was written {_when(written)}, before the retention cutoff "
            f"{_when(cutoff_ms)}: it cannot know what changed since. Use a report newer than "
            "the cutoff, or no report (a listing).",
        )


def _check_columns(table: Any, inventory: str) -> None:
    """Refuse a report without Delta's inventory columns and types."""
    missing = [
        f"{name} {kind}"
        for name, kind in INVENTORY_COLUMNS.items()
        if name not in table.column_names or str(table.schema.field(name).type) != kind
    ]
    if missing:
        raise ConfigError(
            setting="inventory",
            value=inventory,
            fix="the report lacks Delta's inventory columns (or their types): "
            + ", ".join(missing)
            + ". An inventory has path string, length bigint, isDir boolean, "
            "modificationTime bigint (ms).",
        )


def _rows_under(
    table: Any, root: str, columns: tuple[str, ...], prefixes: tuple[str, ...]
) -> tuple[DirScan, int]:
    """The report's rows under the root (and ``prefixes``), visible; and the odd spellings."""
    rows = DirScan()
    odd = 0
    for batch in table.to_batches():
        for path, size, is_dir, mtime in zip(
            batch.column("path").to_pylist(),
            batch.column("length").to_pylist(),
            batch.column("isDir").to_pylist(),
            batch.column("modificationTime").to_pylist(),
            strict=True,
        ):
            rel = _relative(path, root) if path else None
            # Delta's getFilesFromInventory applies its hidden-name rule to the whole relative
            # path, not to each component as a listing does: a hidden file inside a visible
            # directory (a Hadoop checksum ``day=1/.part-0.parquet.crc``) is a candidate here.
            if rel is None or is_hidden(rel, columns):
                continue
            if not is_canonical(rel):
                odd += 1  # another spelling of some path: kept, never deleted as that path
                continue
            if prefixes and not rel.startswith(prefixes):
                continue
            rows.append(rel, int(size or 0), int(mtime or 0), bool(is_dir), False)
    return rows, odd
