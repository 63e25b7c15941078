"""A snapshot whose checkpoint files stay Arrow path columns: what VACUUM protects.

``read_file_paths`` reads a table's log as ``snapshot.read_snapshot`` does, but a checkpoint's
``add`` and ``remove`` rows stay path columns (``file_columns``) instead of one object per
row; ``FilePaths.protected`` is VACUUM's protected set from them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from python_ops.delta.actions import AddFile, RemoveFile
from python_ops.delta.file_columns import FileColumns, ancestors
from python_ops.delta.snapshot import Snapshot, reconstruct
from python_ops.storage import Storage

if TYPE_CHECKING:
    import pyarrow as pa


@dataclass(frozen=True)
class FilePaths:
    """A snapshot with its checkpoint files as path columns (``read_file_paths``).

    Attributes:
        head: The snapshot: version, protocol, metadata. Its ``files`` and ``tombstones`` hold
            only what is not in ``columns`` (later commits, and files parsed row by row).
        columns: Checkpoint files' rows as columns, less what later commits reconciled.
    """

    head: Snapshot
    columns: tuple[FileColumns, ...] = ()

    def protected(self, cutoff_ms: int, *, with_parents: bool = True) -> pa.Array:
        """Paths VACUUM must keep: live files, unexpired tombstones, their DV files and parents.

        Args:
            cutoff_ms: Tombstones deleted at or after this time are still protected.
            with_parents: Add every directory above them (FULL's selection needs them; LITE,
                which never selects a directory, checks its few candidates instead:
                ``lite.select_lite``).

        Returns:
            A string Array of relative paths (files and directories; may repeat a path).
        """
        import pyarrow as pa
        import pyarrow.compute as pc

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
        chunks = [pa.array(singles, pa.string())]
        cutoff = pa.scalar(cutoff_ms, pa.int64())
        for c in self.columns:
            chunks.append(c.live)
            chunks.append(c.removed.filter(pc.greater_equal(c.removed_at_ms, cutoff)))
        paths = pa.concat_arrays(chunks)
        return pa.concat_arrays([paths, *ancestors(paths)]) if with_parents else paths


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
    import pyarrow as pa

    columns: list[FileColumns] = []
    head = reconstruct(location, version=version, with_stats=False, columns=columns)
    if columns:
        # the columns hold no deletion vectors: only keys without one can reconcile them
        keys = [f.key for f in head.files] + [t.key for t in head.tombstones]
        later = [path for path, dv in keys if dv is None]
        reconciled = pa.array(later, pa.string())
        columns = [c.without(reconciled) for c in columns]
    return FilePaths(head, tuple(columns))
