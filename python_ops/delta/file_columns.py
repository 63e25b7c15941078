"""A checkpoint's ``add`` and ``remove`` rows as Arrow path columns: no Python object per file.

VACUUM needs only paths from the log (which files are live, which tombstones are unexpired), and
a big table's checkpoint holds millions of rows. ``checkpoint_columns`` keeps them as Arrow
arrays, taking only what needs no per-row judgement, checked column by column exactly as the
row-wise parser would check each row: the expected Arrow types, every required field present,
sizes and times non-negative, no deletion vectors, every path inside the table root. Anything
else returns None and the caller parses that file row by row (``AddFile.parse`` /
``RemoveFile.parse``), which names the problem: the strict reader stays the judge of every log
this one does not fully understand.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from python_ops.delta.actions import relativize

if TYPE_CHECKING:
    import pyarrow as pa

ADD_TYPES = {
    "path": "string",
    "size": "int64",
    "modificationTime": "int64",
    "partitionValues": "map<string, string>",
    "stats": "string",
    "clusteringProvider": "string",
}
REMOVE_TYPES = {"path": "string", "deletionTimestamp": "int64", "size": "int64"}
# Paths that may need decoding or normalising (a scheme, '%', '//', a leading '/' or '.', '/.').
SPECIAL_PATH = r"[:%]|//|/\.|^[/.]"


@dataclass(frozen=True)
class FileColumns:
    """One checkpoint file's ``add`` and ``remove`` rows as columns, keyed by relative path.

    Attributes:
        live: Relative paths of the ``add`` rows (none has a deletion vector).
        removed: Relative paths of the ``remove`` rows.
        removed_at_ms: Their ``deletionTimestamp`` (0 where absent, as the row parser reads it).
    """

    live: pa.Array
    removed: pa.Array
    removed_at_ms: pa.Array

    def without(self, keys: pa.Array) -> FileColumns:
        """These columns less the rows whose path is in ``keys`` (reconciled by later commits)."""
        import pyarrow.compute as pc

        if len(keys) == 0:
            return self
        keep_live = pc.invert(pc.is_in(self.live, value_set=keys))
        keep_removed = pc.invert(pc.is_in(self.removed, value_set=keys))
        return FileColumns(
            self.live.filter(keep_live),
            self.removed.filter(keep_removed),
            self.removed_at_ms.filter(keep_removed),
        )


def ancestors(paths: Any) -> list[Any]:
    """Every directory above the given relative paths, once per level (deepest level last).

    Args:
        paths: A string Array of relative paths.

    Returns:
        String Arrays of distinct directories: parents, then grandparents, and so on.
    """
    import pyarrow.compute as pc

    out = []
    level = paths.filter(pc.match_substring(paths, "/"))
    while len(level):
        # the part before the last '/': one split from the right (half the time of a regex)
        last_cut = pc.split_pattern(level, "/", max_splits=1, reverse=True)
        parents = pc.unique(pc.list_element(last_cut, 0))
        out.append(parents)
        level = parents.filter(pc.match_substring(parents, "/"))
    return out


def _type_name(arrow_type: Any) -> str:
    import pyarrow as pa

    if pa.types.is_map(arrow_type):  # its string names the entries field: compare parts
        return f"map<{arrow_type.key_type}, {arrow_type.item_type}>"
    return str(arrow_type)


def _fields(struct: Any, expected: dict[str, str]) -> dict[str, int] | None:
    """Field positions, or None when a field has another type or carries a deletion vector."""
    fields = {struct.type.field(i).name: i for i in range(struct.type.num_fields)}
    if "deletionVector" in fields:
        dv = struct.field(fields["deletionVector"])
        if dv.null_count < len(dv):
            return None
    for name, kind in expected.items():
        if name in fields and _type_name(struct.type.field(fields[name]).type) != kind:
            return None
    return fields


def _one_array(column: Any) -> Any:
    """A column as one Array: its only chunk as it is (no copy), else the chunks combined."""
    import pyarrow as pa

    if not isinstance(column, pa.ChunkedArray):
        return column
    return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()


def _rows(struct: Any, mask: Any) -> tuple[Any, Any]:
    """(the rows of ``struct`` where ``mask`` is true, their row numbers).

    A checkpoint holds each action's rows together (``add`` rows in one run): a contiguous run is
    a zero-copy slice, anything else is filtered (a copy).
    """
    import pyarrow.compute as pc

    indices = pc.indices_nonzero(mask)
    n = len(indices)
    if n and indices[n - 1].as_py() - indices[0].as_py() + 1 == n:
        return struct.slice(indices[0].as_py(), n), indices
    return struct.filter(mask), indices


def well_formed_adds(column: Any) -> tuple[Any, Any, dict[str, int]] | None:
    """A checkpoint's ``add`` column checked column-wise, or None to parse it row by row.

    Args:
        column: The ``add`` struct column (Array or ChunkedArray).

    Returns:
        (the ``add`` rows, their row numbers in the file, field positions), or None when any
        row needs the row-wise parser's judgement (deletion vectors, unexpected types, a
        missing or negative required field, an empty path).
    """
    import pyarrow.compute as pc

    struct = _one_array(column)
    fields = _fields(struct, ADD_TYPES)
    if fields is None or not all(
        name in fields for name in ("path", "size", "modificationTime", "partitionValues")
    ):
        return None
    adds, indices = _rows(
        struct, pc.and_(struct.is_valid(), struct.field(fields["path"]).is_valid())
    )
    size = adds.field(fields["size"])
    mtime = adds.field(fields["modificationTime"])
    if size.null_count or mtime.null_count or adds.field(fields["partitionValues"]).null_count:
        return None
    # true_count, not pc.any(...).as_py(): that imports pandas (0.2 s)
    if len(adds) and (
        pc.min(size).as_py() < 0
        or pc.min(mtime).as_py() < 0
        or pc.min(pc.binary_length(adds.field(fields["path"]))).as_py() == 0
    ):
        return None
    return adds, indices, fields


def _relative(paths: Any, root: str) -> Any:
    """Relative paths for a string column, or None when one lies outside the table root."""
    import pyarrow as pa
    import pyarrow.compute as pc

    special = pc.match_substring_regex(paths, SPECIAL_PATH)
    if not special.true_count:
        return paths
    odd = paths.filter(special).to_pylist()
    relative = [relativize(p, root) for p in odd]
    if any(r is None for r in relative):
        return None  # outside the root: the row-wise parser keys it by its raw path
    return pc.replace_with_mask(paths, special, pa.array(relative, pa.string()))


def _removes(column: Any, root: str) -> tuple[Any, Any] | None:
    import pyarrow as pa
    import pyarrow.compute as pc

    struct = _one_array(column)
    fields = _fields(struct, REMOVE_TYPES)
    if fields is None or "path" not in fields:
        return None
    rows, _ = _rows(struct, pc.and_(struct.is_valid(), struct.field(fields["path"]).is_valid()))
    if len(rows) and pc.min(pc.binary_length(rows.field(fields["path"]))).as_py() == 0:
        return None
    for name in ("deletionTimestamp", "size"):  # RemoveFile.parse refuses negative values
        if name in fields and len(rows):
            least = pc.min(rows.field(fields[name])).as_py()
            if least is not None and least < 0:
                return None
    if "deletionTimestamp" in fields:
        at = pc.fill_null(rows.field(fields["deletionTimestamp"]), 0)
    else:
        at = pa.nulls(len(rows), pa.int64()).fill_null(0)
    paths = _relative(rows.field(fields["path"]), root)
    return None if paths is None else (paths, at)


def checkpoint_columns(table: Any, root: str) -> FileColumns | None:
    """The ``add`` and ``remove`` columns of one checkpoint (or sidecar) file.

    Args:
        table: The file's ``add`` and ``remove`` struct columns (either may be absent), read
            with at least the fields of ``ADD_TYPES`` and ``REMOVE_TYPES`` that exist.
        root: The normalised table root.

    Returns:
        The columns, or None when a row needs the row-wise parser (see the module docstring).
    """
    import pyarrow as pa

    empty = pa.array([], pa.string())
    live, removed, removed_at = empty, empty, pa.array([], pa.int64())
    if "add" in table.column_names:
        checked = well_formed_adds(table.column("add"))
        if checked is None:
            return None
        adds, _, fields = checked
        relative = _relative(adds.field(fields["path"]), root)
        if relative is None:
            return None
        live = relative
    if "remove" in table.column_names:
        found = _removes(table.column("remove"), root)
        if found is None:
            return None
        removed, removed_at = found
    return FileColumns(live, removed, removed_at)
