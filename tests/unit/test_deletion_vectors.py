"""Deletion vectors parsed as Delta stores them, over generated row sets (embedded, item 1).

A ``RoaringBitmapArray`` is built here from ``pyroaring``'s portable bitmaps (array, bitset and
run containers, keys above 2^32), wrapped as a DV file (version byte, size, CRC-32) or inline
(Z85), and read back: the rows must be the rows, every malformed variant a ``DeltaLogError``.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyroaring import BitMap

from python_ops.delta.log.actions import DeletionVector
from python_ops.delta.state.deletion_vectors import (
    MAGIC,
    deleted_rows,
    keep_mask,
    parse_bitmap_array,
    portable_size,
)
from python_ops.errors import DeltaLogError
from python_ops.storage import open_storage

_Z85 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"


def z85_encode(data: bytes) -> str:
    data += b"\0" * (-len(data) % 4)
    out = []
    for i in range(0, len(data), 4):
        value = int.from_bytes(data[i : i + 4], "big")
        chars = []
        for _ in range(5):
            value, digit = divmod(value, 85)
            chars.append(_Z85[digit])
        out.append("".join(reversed(chars)))
    return "".join(out)


def serialize(rows: set[int], *, runs: bool) -> bytes:
    """Delta's RoaringBitmapArray of ``rows``."""
    keys: dict[int, list[int]] = {}
    for row in rows:
        keys.setdefault(row >> 32, []).append(row & 0xFFFFFFFF)
    out = struct.pack("<iq", MAGIC, len(keys))
    for key in sorted(keys):
        bitmap = BitMap(keys[key])
        if runs:
            bitmap.run_optimize()
        out += struct.pack("<I", key) + bitmap.serialize()
    return out


row_sets = st.sets(
    st.one_of(
        st.integers(0, 70_000),
        st.integers(0, 2**33),
        st.integers(100_000, 100_000 + 5_000),  # dense: bitset containers
    ),
    max_size=6_000,
)


@settings(max_examples=60, deadline=None)
@given(rows=row_sets, runs=st.booleans())
def test_every_row_set_reads_back_as_written(rows: set[int], runs: bool) -> None:
    data = serialize(rows, runs=runs)
    assert parse_bitmap_array(data, "t").tolist() == sorted(rows)


@settings(max_examples=40, deadline=None)
@given(rows=st.sets(st.integers(0, 200_000), max_size=5_000), runs=st.booleans())
def test_the_portable_size_is_the_serialized_size(rows: set[int], runs: bool) -> None:
    bitmap = BitMap(rows)
    if runs:
        bitmap.run_optimize()
    raw = bitmap.serialize()
    assert portable_size(raw + b"tail", 0, "t") == len(raw)


def _dv_file(tmp_path: Path, data: bytes, *, damage: bool = False) -> DeletionVector:
    uuid_z85 = "vBn[lx{q8@P<9BNH/isA"  # the UUID of the name below
    name = "deletion_vector_61d16c75-6994-46b7-a15b-8b538852e50e.bin"
    checksum = zlib.crc32(data) ^ (1 if damage else 0)
    blob = b"\x01" + struct.pack(">i", len(data)) + data + struct.pack(">I", checksum)
    (tmp_path / name).write_bytes(blob)
    cardinality = len(parse_bitmap_array(data, "t"))
    return DeletionVector("u", uuid_z85, 1, len(data), cardinality)


@settings(max_examples=30, deadline=None)
@given(rows=st.sets(st.integers(0, 1_000_000), max_size=2_000))
def test_a_file_and_an_inline_vector_give_the_same_rows(tmp_path_factory, rows: set[int]) -> None:
    tmp_path = tmp_path_factory.mktemp("dv")
    data = serialize(rows, runs=True)
    storage = open_storage(str(tmp_path))
    on_disk = _dv_file(tmp_path, data)
    inline = DeletionVector("i", z85_encode(data), None, len(data), len(rows))
    assert deleted_rows(storage, on_disk).tolist() == sorted(rows)
    assert deleted_rows(storage, inline).tolist() == sorted(rows)


def test_a_damaged_or_mismatched_vector_is_refused(tmp_path: Path) -> None:
    storage = open_storage(str(tmp_path))
    data = serialize({1, 5, 9}, runs=False)
    with pytest.raises(DeltaLogError, match="checksum mismatch"):
        deleted_rows(storage, _dv_file(tmp_path, data, damage=True))
    wrong = DeletionVector("u", "vBn[lx{q8@P<9BNH/isA", 1, len(data), 4)
    _dv_file(tmp_path, data)
    with pytest.raises(DeltaLogError, match="cardinality 4"):
        deleted_rows(storage, wrong)
    with pytest.raises(DeltaLogError, match="magic number"):
        parse_bitmap_array(b"\0" * 12, "t")
    with pytest.raises(DeltaLogError, match="deletes row 9"):
        keep_mask(5, np.array([1, 9], dtype=np.uint64))


def test_the_fixture_written_by_delta_deletes_rows_0_and_9(fixture_table) -> None:
    table = fixture_table("table-with-dv-small")
    from python_ops.delta.state.snapshot import read_snapshot

    (live,) = read_snapshot(str(table)).files
    assert live.deletion_vector is not None
    assert deleted_rows(open_storage(str(table)), live.deletion_vector).tolist() == [0, 9]
