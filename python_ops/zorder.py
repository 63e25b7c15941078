"""Z-order clustering: interleaved bits of per-column range ids, as Delta's OPTIMIZE ZORDER BY.

Each column's values are mapped to about 1,000 *range ids* by rank (equal values share an id,
nulls come last), so columns with very different value ranges or byte widths contribute
equally to the key. delta-rs interleaves the raw bytes of the values instead; on an integer key
whose high bytes never change beside a timestamp whose high bytes do, that key is a sort on the
timestamp and gives no data skipping at all on the integer (DESIGN.md, measured).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

if TYPE_CHECKING:
    from numpy.typing import NDArray

RANGE_BITS = 10  # 1,024 ranges per column
KEY_BITS = 64


def range_ids(values: pa.ChunkedArray | pa.Array, *, bits: int = RANGE_BITS) -> NDArray[np.uint64]:
    """Map values to ``2**bits`` quantile ranges by rank; equal values get equal ids.

    Args:
        values: One column (any orderable Arrow type).
        bits: Bits per id.

    Returns:
        One id per row, in ``[0, 2**bits)``.
    """
    n = len(values)
    if n == 0:
        return np.zeros(0, dtype=np.uint64)
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if pa.types.is_dictionary(values.type):
        values = values.dictionary_decode()
    # rank 1..n, ties share the lowest rank, nulls ranked last (they share one range)
    ranks = pc.rank(values, sort_keys="ascending", tiebreaker="min")
    r = np.asarray(ranks, dtype=np.uint64) - np.uint64(1)
    return (r * np.uint64(1 << bits)) // np.uint64(n)


def zorder_key(columns: list[pa.ChunkedArray | pa.Array]) -> NDArray[np.uint64]:
    """Interleave the bits of each column's range ids, most significant bits first.

    Args:
        columns: The Z-order columns, all of one length.

    Returns:
        One 64-bit key per row; sorting by it clusters rows on every column.
    """
    if not columns:
        raise ValueError("zorder_key needs at least one column")
    bits = min(RANGE_BITS, KEY_BITS // len(columns))
    ids = [range_ids(c, bits=bits) for c in columns]
    k = len(ids)
    key = np.zeros(len(ids[0]), dtype=np.uint64)
    for bit in range(bits):  # bit 0 is the least significant bit of each id
        for c, column_ids in enumerate(ids):
            position = np.uint64(bit * k + (k - 1 - c))
            key |= ((column_ids >> np.uint64(bit)) & np.uint64(1)) << position
    return key


def zorder_sort(table: pa.Table, columns: list[str]) -> pa.Table:
    """Rows of ``table`` reordered along the Z-order curve of ``columns``.

    Args:
        table: The rows of one partition.
        columns: Z-order columns (present in ``table``).

    Returns:
        The same rows, clustered.
    """
    key = zorder_key([table.column(c) for c in columns])
    return table.take(pa.array(np.argsort(key, kind="stable")))
