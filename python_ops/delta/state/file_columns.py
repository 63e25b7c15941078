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

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from python_ops.delta.log.actions import relativize
from python_ops.delta.log.file_identity import delta_identity

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
# The leaves ``checkpoint_columns`` needs: paths, what the row parser checks of a file, and one
# leaf of each ``deletionVector`` struct (its nulls say which rows have one). Not
# ``partitionValues``: VACUUM never uses them, and a map per row was about 60 % of decoding
# these columns (a 1,000,000-row checkpoint).
PATH_LEAVES = {
    "add": ("path", "size", "modificationTime", "deletionVector.storageType"),
    "remove": ("path", "deletionTimestamp", "size", "deletionVector.storageType"),
}
# Paths that may need decoding or normalising (a scheme, '%', '//', a leading '/' or '.', '/.',
# a trailing '/'): anything ``relativize`` may change; and anything ``delta_identity`` may refuse
# (characters java.net.URI refuses raw) or must look at (any non-ASCII character).
SPECIAL_PATH = r'[:%]|//|/\.|^[/.]|/$|[\x00-\x20"<>\\^`{|}\[\]?#\x7f]|[^\x00-\x7f]'
# The bytes a path may hold without being special (``_none_special`` deletes these from a
# column's bytes: whatever is left is special); '/' followed by '/' or '.' is looked for apart.
_PLAIN_BYTES = bytes(b for b in range(0x80) if chr(b).isalnum() or chr(b) in "_-=./+,;@&$!~*'()")


@dataclass(frozen=True)
class FileColumns:
    """One checkpoint file's ``add`` and ``remove`` rows as columns: physical paths and identities.

    Attributes:
        live: Relative (physical) paths of the ``add`` rows (none has a deletion vector).
        removed: Relative paths of the ``remove`` rows.
        removed_at_ms: Their ``deletionTimestamp`` (0 where absent, as the row parser reads it).
        live_keys: The ``add`` rows' identities as Delta keys them (``delta_identity``); the
            same Array as ``live`` when every path is its own identity.
        removed_keys: The same for ``removed``.
    """

    live: pa.Array
    removed: pa.Array
    removed_at_ms: pa.Array
    live_keys: pa.Array
    removed_keys: pa.Array


def without(paths: pa.Array, keys: pa.Array, gone: pa.Array) -> pa.Array:
    """``paths`` less the rows whose identity (``keys``) is in ``gone``; a copy only if any is.

    Args:
        paths: Relative (physical) paths.
        keys: The same rows' identities (``delta_identity``), as long as ``paths``.
        gone: Identities later commits reconciled.

    Returns:
        The paths of the rows still counted.
    """
    import pyarrow.compute as pc

    if len(gone) == 0 or len(paths) == 0:
        return paths
    hits = pc.is_in(keys, value_set=gone)
    return paths.filter(pc.invert(hits)) if hits.true_count else paths


def below(paths: pa.Array, names: Iterable[str]) -> list[str]:
    """The distinct ``paths`` that lie under one of ``names`` (start with ``name/``).

    Per distinct name length ``n``: the paths whose byte ``n`` is ``/`` (a one-byte slice),
    and only those cut to ``n`` bytes and looked up among the names. File names of one table
    share few lengths, and few paths have a ``/`` just there.

    Args:
        paths: A string Array of relative paths.
        names: Relative paths (directories or not).

    Returns:
        The paths under one of the names, each once.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    by_length: dict[int, list[bytes]] = {}
    for name in names:
        raw_name = name.encode()
        by_length.setdefault(len(raw_name), []).append(raw_name)
    raw = paths.cast(pa.binary())  # the same buffers; cut by bytes, not characters
    out: set[str] = set()
    for length, prefixes in by_length.items():
        slash = pc.equal(pc.binary_slice(raw, length, length + 1), pa.scalar(b"/"))
        if not slash.true_count:
            continue
        near = raw.filter(slash)
        hits = pc.is_in(pc.binary_slice(near, 0, length), value_set=pa.array(prefixes))
        out.update(p.decode() for p in pc.unique(near.filter(hits)).to_pylist())
    return sorted(out)


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


def rows_where(struct: Any, mask: Any) -> tuple[Any, Any]:
    """(the rows of ``struct`` where ``mask`` is true, their row numbers).

    A checkpoint holds each action's rows together (``add`` rows in one run): a contiguous run is
    a zero-copy slice, numbered by a ``range``; anything else is filtered (a copy), numbered by
    an Arrow array. ``mask`` has no nulls. The run is found by counting, not with
    ``indices_nonzero``: that kernel allocates from Arrow's build-time default pool whatever
    pool it is given, and its first use in a process that keeps Arrow on the system allocator
    (``ops.lean_arrow``) sets up mimalloc's arena: about 5 MB of resident memory.
    """
    import pyarrow.compute as pc

    n = mask.true_count
    if n == 0:
        return struct.slice(0, 0), range(0)
    first = pc.index(mask, True).as_py()
    if mask.slice(first, n).true_count == n:
        return struct.slice(first, n), range(first, first + n)
    return struct.filter(mask), pc.indices_nonzero(mask)


def well_formed_adds(
    column: Any, *, partition_values: bool = True
) -> tuple[Any, Any, dict[str, int]] | None:
    """A checkpoint's ``add`` column checked column-wise, or None to parse it row by row.

    Args:
        column: The ``add`` struct column (Array or ChunkedArray).
        partition_values: Require and check ``partitionValues`` (False for paths only:
            ``PATH_LEAVES`` does not read them).

    Returns:
        (the ``add`` rows, their row numbers in the file (``rows_where``), field positions), or
        None when any row needs the row-wise parser's judgement (deletion vectors, unexpected
        types, a missing or negative required field, an empty path).
    """
    import pyarrow.compute as pc

    struct = _one_array(column)
    fields = _fields(struct, ADD_TYPES)
    required = ("path", "size", "modificationTime", "partitionValues")
    if fields is None or not all(name in fields for name in required[: 3 + partition_values]):
        return None
    adds, indices = rows_where(
        struct, pc.and_(struct.is_valid(), struct.field(fields["path"]).is_valid())
    )
    size = adds.field(fields["size"])
    mtime = adds.field(fields["modificationTime"])
    if size.null_count or mtime.null_count:
        return None
    if partition_values and adds.field(fields["partitionValues"]).null_count:
        return None
    # true_count, not pc.any(...).as_py(): that imports pandas (0.2 s)
    if len(adds) and (
        pc.min(size).as_py() < 0
        or pc.min(mtime).as_py() < 0
        or pc.min(pc.binary_length(adds.field(fields["path"]))).as_py() == 0
    ):
        return None
    return adds, indices, fields


def _none_special(paths: Any) -> bool:
    """True when no path of a string column can match ``SPECIAL_PATH``, from one scan of its bytes.

    Arrow's regex per row takes about 2.5 times as long for a million paths as a copy of the
    column's bytes (a few MB at a time) stripped of the plain bytes (``bytes.translate``: any
    byte left, such as ``:``, ``%``, a space or a non-ASCII byte, is special) and searched for ``/``
    followed by ``/`` or ``.`` (``re``, which skips to each ``/``), plus Arrow's ``starts_with``
    for a leading ``/`` or ``.``. Two paths that meet in the bytes (``a/`` then ``/b``) can only
    make a false alarm, which the regex then settles.
    """
    import re

    import pyarrow.compute as pc

    if not len(paths):
        return True
    _, offsets, data = paths.buffers()
    bounds = memoryview(offsets).cast("i")
    start, end = bounds[paths.offset], bounds[paths.offset + len(paths)]
    step = 1 << 22  # bytes copied at a time (a 1,000,000-path column is about 70 MB)
    for at in range(start, end, step):
        # one byte of overlap: a pair that straddles two pieces is still found
        text = data.slice(at, min(step + 1, end - at)).to_pybytes()
        if text.translate(None, _PLAIN_BYTES) or re.search(rb"/[/.]", text):
            return False
    # a leading "/" or ".", a trailing "/"; flags per path, not a one-byte copy of every path
    return not (
        pc.starts_with(paths, "/").true_count
        or pc.starts_with(paths, ".").true_count
        or pc.ends_with(paths, "/").true_count
    )


def _relative(paths: Any, root: str) -> tuple[Any, Any] | None:
    """(relative paths, identities) of a string column; None when one lies outside the root."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if _none_special(paths):
        return paths, paths
    special = pc.match_substring_regex(paths, SPECIAL_PATH)
    if not special.true_count:
        return paths, paths
    odd = paths.filter(special).to_pylist()
    relative = [relativize(p, root) for p in odd]
    if any(r is None for r in relative):
        return None  # outside the root: the row-wise parser keys it by its raw path
    keys = [delta_identity(p, root) for p in odd]
    return (
        pc.replace_with_mask(paths, special, pa.array(relative, pa.string())),
        pc.replace_with_mask(paths, special, pa.array(keys, pa.string())),
    )


def _removes(column: Any, root: str) -> tuple[Any, Any, Any] | None:
    import pyarrow as pa
    import pyarrow.compute as pc

    struct = _one_array(column)
    fields = _fields(struct, REMOVE_TYPES)
    if fields is None or "path" not in fields:
        return None
    valid = pc.and_(struct.is_valid(), struct.field(fields["path"]).is_valid())
    rows, _ = rows_where(struct, valid)
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
    return None if paths is None else (paths[0], at, paths[1])


def checkpoint_columns(table: Any, root: str) -> FileColumns | None:
    """The ``add`` and ``remove`` columns of one checkpoint (or sidecar) file.

    Args:
        table: The file's ``add`` and ``remove`` struct columns (either may be absent), read
            with at least the leaves of ``PATH_LEAVES`` that exist.
        root: The normalised table root.

    Returns:
        The columns, or None when a row needs the row-wise parser (see the module docstring).
    """
    import pyarrow as pa

    empty = pa.array([], pa.string())
    live, removed, removed_at = empty, empty, pa.array([], pa.int64())
    live_keys, removed_keys = empty, empty
    if "add" in table.column_names:
        checked = well_formed_adds(table.column("add"), partition_values=False)
        if checked is None:
            return None
        adds, _, fields = checked
        relative = _relative(adds.field(fields["path"]), root)
        if relative is None:
            return None
        live, live_keys = relative
    if "remove" in table.column_names:
        found = _removes(table.column("remove"), root)
        if found is None:
            return None
        removed, removed_at, removed_keys = found
    return FileColumns(live, removed, removed_at, live_keys, removed_keys)
