"""A snapshot whose checkpoint files stay Arrow path columns: what VACUUM protects.

``read_file_paths`` reads a table's log as ``snapshot.read_snapshot`` does, but a checkpoint's
``add`` and ``remove`` rows stay path columns (``file_columns``) instead of one object per
row; ``FilePaths.protected`` is FULL VACUUM's protected set from them, and
``FilePaths.kept_among`` answers the same question for LITE's few candidates without building
that set.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from python_ops.delta.log.actions import AddFile, RemoveFile
from python_ops.delta.state.file_columns import FileColumns, ancestors, below, without
from python_ops.delta.state.snapshot import Snapshot, reconstruct
from python_ops.storage import Storage

if TYPE_CHECKING:
    import pyarrow as pa


@dataclass(frozen=True)
class FilePaths:
    """A snapshot with its checkpoint files as path columns (``read_file_paths``).

    Attributes:
        head: The snapshot: version, protocol, metadata. Its ``files`` and ``tombstones`` hold
            only what is not in ``columns`` (later commits, and files parsed row by row).
        columns: Checkpoint files' rows as columns, as the checkpoint holds them.
        reconciled: Identities (``delta_identity``) later commits reconciled (their state is in
            ``head``): a row of ``columns`` with one of these identities no longer counts.
    """

    head: Snapshot
    columns: tuple[FileColumns, ...] = ()
    reconciled: frozenset[str] = frozenset()

    def _singles(self, cutoff_ms: int) -> list[str]:
        """The protected paths of ``head``: its files, unexpired tombstones, their DV files."""
        location = self.head.location
        kept: list[AddFile | RemoveFile] = [*self.head.files]
        kept += [t for t in self.head.tombstones if t.deletion_timestamp_ms >= cutoff_ms]
        singles: list[str] = []
        for action in kept:
            if action.relative_path is not None:
                singles.append(action.relative_path)
            dv = action.deletion_vector.file_path(location) if action.deletion_vector else None
            if dv is not None:
                singles.append(dv)
        return singles

    def _column_paths(self, cutoff_ms: int) -> Iterator[pa.Array]:
        """Each column's protected paths: live rows and unexpired tombstones, unreconciled."""
        import pyarrow as pa
        import pyarrow.compute as pc

        cutoff = pa.scalar(cutoff_ms, pa.int64())
        gone = pa.array(sorted(self.reconciled), pa.string())
        for c in self.columns:
            yield without(c.live, c.live_keys, gone)
            young = pc.greater_equal(c.removed_at_ms, cutoff)
            yield without(c.removed.filter(young), c.removed_keys.filter(young), gone)

    def protected(self, cutoff_ms: int, *, with_parents: bool = True) -> pa.Array:
        """Paths VACUUM must keep: live files, unexpired tombstones, their DV files and parents.

        Args:
            cutoff_ms: Tombstones deleted at or after this time are still protected.
            with_parents: Add every directory above them (FULL's selection needs them).

        Returns:
            A string Array of relative paths (files and directories; may repeat a path).
        """
        import pyarrow as pa

        chunks = [pa.array(self._singles(cutoff_ms), pa.string())]
        chunks += list(self._column_paths(cutoff_ms))
        paths = pa.concat_arrays(chunks)
        return pa.concat_arrays([paths, *ancestors(paths)]) if with_parents else paths

    def kept_among(self, names: Iterable[str], cutoff_ms: int) -> set[str]:
        """Which of ``names`` VACUUM must keep: protected paths, and directories above one.

        For a few names (LITE's candidates) against a big checkpoint: each column is probed
        for the names (a hash table of the names, not of the column), less the rows later
        commits reconciled by identity (a copy of a column only where one was). An object
        store may hold a key ``a`` beside keys ``a/...``: a name that is a directory above a
        protected path is kept, as Delta's valid files include their parent directories.

        Args:
            names: Relative paths.
            cutoff_ms: Tombstones deleted at or after this time are still protected.

        Returns:
            The names to keep.
        """
        import pyarrow as pa
        import pyarrow.compute as pc

        wanted = set(names)
        if not wanted:
            return set()
        values = pa.array(sorted(wanted), pa.string())
        in_columns: set[str] = set()
        for paths in self._column_paths(cutoff_ms):
            found = pc.unique(paths.filter(pc.is_in(paths, value_set=values)))
            in_columns.update(found.to_pylist())
            in_columns.update(below(paths, wanted))
        kept: set[str] = set()
        for path in {*self._singles(cutoff_ms), *in_columns}:
            if path in wanted:
                kept.add(path)
            parts = path.split("/")
            kept.update(d for i in range(1, len(parts)) if (d := "/".join(parts[:i])) in wanted)
        return kept


def read_file_paths(location: str | Storage, *, version: int | None = None) -> FilePaths:
    """Reconstruct a snapshot whose checkpoint files stay Arrow path columns (for VACUUM).

    The same reader and checks as ``read_snapshot``; a checkpoint (or sidecar) file whose
    ``add`` and ``remove`` rows ``checkpoint_columns`` takes becomes columns instead of one
    object per row, less the paths later commits reconcile. Other files are parsed row by row.

    Args:
        location: Table location (path or URI) or an open ``Storage`` rooted at it.
        version: The version to read; the latest when None.

    Returns:
        The snapshot's paths.

    Raises:
        TableNotFoundError: When there is no Delta log with a commit at the location.
        DeltaLogError: When the requested version cannot be reconstructed.
    """
    columns: list[FileColumns] = []
    head = reconstruct(location, version=version, with_stats=False, columns=columns)
    if columns:
        # the columns hold no deletion vectors: only keys without one can reconcile them
        keys = [f.key for f in head.files] + [t.key for t in head.tombstones]
        return FilePaths(head, tuple(columns), frozenset(u for u, dv in keys if dv is None))
    return FilePaths(head, tuple(columns))
