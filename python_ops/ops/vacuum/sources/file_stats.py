"""Sizes and times only where the selection needs them: a protected file is never statted.

VACUUM selects old unprotected files. A protected file (live, an unexpired tombstone, a
deletion-vector file) is kept whatever its age, and every directory above it is protected with
it, so its size and time change no selection. On storages that list names before stats
(``Storage.names_before_stats``: local disks, where a stat per file is most of a listing's
cost) the listing leaves files' ``size`` and ``mtime`` null, and ``stat_unprotected`` stats
only the files the protected set does not hold: at most the untracked files and the expired
tombstones, instead of the whole table.
"""

from __future__ import annotations

from typing import Any

from python_ops.storage import Storage

_STAT_ROWS = 8_192  # paths held as Python values at once while they are statted


def stat_unprotected(storage: Storage, table: Any, protected: Any) -> tuple[Any, int]:
    """Stat the listed files left unstatted that ``protected`` does not hold.

    A listing made against one protected set and selected from with another (the due check's
    listing, handed to the run: a tombstone may expire in between) is completed here for the
    new set.

    Args:
        storage: The storage that listed the table (``names_before_stats``).
        table: The listing (``Listing.table()``); files not statted have null ``mtime``.
        protected: The paths kept whatever their age (an Arrow string Array).

    Returns:
        The listing with every unprotected file statted (files gone since, and entries that
        turned out to be symbolic links, left out), and the number of such links.

    Raises:
        StorageError: When a stat fails for another reason than the file being gone.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    from python_ops.ops.vacuum.rule.selection import path_array

    if table.num_rows == 0 or table.column("mtime").null_count == 0:
        return table, 0
    values = path_array(protected)
    mtime = table.column("mtime")
    # one hash table of the protected set for the whole listing, then batch by batch
    need = pc.and_(pc.is_null(mtime), pc.invert(pc.is_in(table.column("path"), value_set=values)))
    del values
    batches: list[Any] = []
    links = 0
    offset = 0
    for batch in table.to_batches():
        mask = need.slice(offset, batch.num_rows).combine_chunks()
        offset += batch.num_rows
        if mask.true_count:
            batch, linked = _stat_batch(storage, batch, mask)
            links += linked
        batches.append(batch)
    return pa.Table.from_batches(batches, schema=table.schema), links


def _stat_batch(storage: Storage, batch: Any, mask: Any) -> tuple[Any, int]:
    """One listing batch with the rows of ``mask`` statted; gone rows and links dropped."""
    import pyarrow as pa
    import pyarrow.compute as pc

    rels = batch.column(0).filter(mask)
    sizes, mtimes, dirs, gone = [], [], [], []
    links = 0
    for start in range(0, len(rels), _STAT_ROWS):
        scan = storage.stat_paths(rels.slice(start, _STAT_ROWS).to_pylist())
        sizes += [z or 0 for z in scan.sizes]
        mtimes += [m or 0 for m in scan.mtimes]
        dirs += scan.is_dir
        gone += [m is None or link for m, link in zip(scan.mtimes, scan.is_symlink, strict=True)]
        links += sum(scan.is_symlink)
    columns = [
        batch.column(0),
        pc.replace_with_mask(batch.column(1), mask, pa.array(sizes, pa.int64())),
        pc.replace_with_mask(batch.column(2), mask, pa.array(mtimes, pa.int64())),
        pc.replace_with_mask(batch.column(3), mask, pa.array(dirs, pa.bool_())),
    ]
    out = pa.RecordBatch.from_arrays(columns, schema=batch.schema)
    if any(gone):
        all_false = pa.array([False] * batch.num_rows, pa.bool_())
        drop = pc.replace_with_mask(all_false, mask, pa.array(gone, pa.bool_()))
        out = out.filter(pc.invert(drop))
    return out, links
