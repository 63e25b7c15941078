"""A table's content as one digest: the multiset of its rows, in Arrow's C++ for most columns.

Tests assert that an op kept a table's rows (count and checksum). Rows turned into Python
objects, each ``repr``'d and the list sorted, cost about a second per million rows; on the
golden tables' OPTIMIZE checks that was a third of the matrix's time. Here each column is
turned into text by Arrow's cast (its shortest round-trip text for floats, every digit of a
decimal, the zone of a timestamp), the columns of a row joined by a separator no value text
holds unescaped, the rows sorted and hashed. A column Arrow cannot cast to text (nested,
binary) is turned into text by Python's ``repr`` of each value, as before.
"""

from __future__ import annotations

import hashlib

import pyarrow as pa
import pyarrow.compute as pc

_SEP = "\x1f"  # unit separator; escaped inside values below
_NULL = "\x00"  # a null's text: escaped inside values below
# backslash first, so that the escapes of the others stay unambiguous
_ESCAPES = (("\\", "\\\\"), (_SEP, "\\u"), ("\n", "\\n"), (_NULL, "\\0"))


def _is_bytes(kind: pa.DataType) -> bool:
    if pa.types.is_dictionary(kind):
        return _is_bytes(kind.value_type)
    return bool(
        pa.types.is_binary(kind)
        or pa.types.is_large_binary(kind)
        or pa.types.is_fixed_size_binary(kind)
    )


def _cast(column: pa.ChunkedArray) -> pa.ChunkedArray | None:
    """Arrow's text of each value (a dictionary column's values); None: no cast (nested)."""
    try:
        return pc.cast(column, pa.large_string())
    except pa.ArrowNotImplementedError:
        return None


def _as_text(column: pa.ChunkedArray) -> pa.ChunkedArray | pa.Array:
    # the way to text depends on the column's type only, never on its values: bytes would cast
    # when they are UTF-8 and not otherwise, and a cast b"b'a'" would read as the repr of b"a"
    text = None if _is_bytes(column.type) else _cast(column)
    if text is None:
        text = pa.array(
            [None if v is None else repr(v) for v in column.to_pylist()], pa.large_string()
        )
    for raw, escaped in _ESCAPES:
        text = pc.replace_substring(text, raw, escaped)
    return pc.fill_null(text, _NULL)


def table_digest(table: pa.Table) -> tuple[int, str]:
    """(row count, digest of the rows as a multiset) of an Arrow table.

    Equal for two tables with the same columns (by name, any order) and the same rows in any
    order and any chunking; different when a value, a null or a row's multiplicity differs.

    Args:
        table: The rows.

    Returns:
        The row count and a hex SHA-256 digest.
    """
    names = sorted(table.column_names)
    digest = hashlib.sha256(_SEP.join(names).encode())
    if table.num_rows == 0:
        return 0, digest.hexdigest()
    texts = [_as_text(table.column(name)) for name in names]
    rows = (
        pc.binary_join_element_wise(*texts, pa.scalar(_SEP, pa.large_string()))
        if len(texts) > 1
        else texts[0]
    )
    ordered = pc.take(rows, pc.sort_indices(rows))
    digest.update("\n".join(ordered.to_pylist()).encode())
    return table.num_rows, digest.hexdigest()
