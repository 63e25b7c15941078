"""Deletion vectors read as Delta stores them: which rows of a data file are deleted.

The protocol's format (PROTOCOL.md, "Deletion Vector Format"): a ``RoaringBitmapArray`` is the
magic number 1681511377 (4 bytes, little-endian), the number of bitmaps (8 bytes,
little-endian), then for each a key (4 bytes, little-endian: the row index's high 32 bits) and a
32-bit Roaring bitmap in the portable format (its low 32 bits; ``pyroaring`` reads those). On
disk (storage type ``u``, or ``p`` for an absolute path), a DV file starts with a version byte
(1); each vector sits at its descriptor's ``offset``: its size (4 bytes, big-endian), the
serialized array (``sizeInBytes`` bytes) and the array's CRC-32 (4 bytes, big-endian). Inline
(``i``), the descriptor holds the serialized array Z85-encoded.

Every check is made before a row is dropped: a wrong magic number, size, checksum or
cardinality refuses the rewrite (``DeltaLogError``), never guesses.
"""

from __future__ import annotations

import struct
import zlib
from typing import TYPE_CHECKING

import numpy as np

from python_ops.delta.log.actions import DeletionVector, z85_decode
from python_ops.errors import DeltaLogError, StorageError

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from python_ops.storage import Storage

MAGIC = 1681511377
FILE_VERSION = 1


def _bad(where: str, problem: str) -> DeltaLogError:
    return DeltaLogError(
        f"deletion vector {where}: {problem}; the file's deleted rows cannot be known, so "
        "nothing was rewritten"
    )


def parse_bitmap_array(data: bytes, where: str) -> NDArray[np.uint64]:
    """The row indexes a serialized ``RoaringBitmapArray`` holds, sorted.

    Args:
        data: The serialized array (magic number first).
        where: The vector's location, for errors.

    Returns:
        The deleted rows' indexes (0-based, in the file's row order).

    Raises:
        DeltaLogError: For a wrong magic number or a truncated or malformed array.
    """
    from pyroaring import BitMap

    if len(data) < 12:
        raise _bad(where, f"{len(data)} bytes, too short for a RoaringBitmapArray")
    (magic,) = struct.unpack_from("<i", data, 0)
    if magic != MAGIC:
        raise _bad(where, f"magic number {magic}, expected {MAGIC}")
    (count,) = struct.unpack_from("<q", data, 4)
    at, parts = 12, []
    for _ in range(count):
        if at + 4 > len(data):
            raise _bad(where, "truncated bitmap array")
        (key,) = struct.unpack_from("<I", data, at)
        try:
            bitmap = BitMap.deserialize(data[at + 4 :])
        except (ValueError, OSError) as err:
            raise _bad(where, f"bitmap {key} is not a portable Roaring bitmap ({err})") from err
        at += 4 + portable_size(data, at + 4, where)
        low = np.fromiter(bitmap, dtype=np.uint64, count=len(bitmap))
        parts.append(low + (np.uint64(key) << np.uint64(32)))
    if at != len(data):
        raise _bad(where, f"{len(data) - at} byte(s) after the last bitmap")
    rows = np.concatenate(parts) if parts else np.empty(0, dtype=np.uint64)
    return np.sort(rows)


def portable_size(data: bytes, at: int, where: str) -> int:
    """The byte length of the portable 32-bit Roaring bitmap serialized at ``data[at:]``.

    The format (RoaringFormatSpec): a cookie (12346: no run containers, then the container
    count; 12347 in its low 16 bits: run containers, the count - 1 in its high 16 bits, then a
    run bitmap), one (key, cardinality - 1) pair per container, offsets (absent when there are
    runs and fewer than 4 containers), then each container: runs (2 bytes of count, 4 per run),
    an array (2 bytes a value, up to 4096 values) or a bitset (8192 bytes).

    Raises:
        DeltaLogError: For an unknown cookie or a header past the data's end.
    """
    start = at
    try:
        (cookie,) = struct.unpack_from("<I", data, at)
        if cookie & 0xFFFF == 12347:
            count = (cookie >> 16) + 1
            at += 4
            runs = data[at : at + (count + 7) // 8]
            at += (count + 7) // 8
            has_offsets = count >= 4
        elif cookie == 12346:
            (count,) = struct.unpack_from("<I", data, at + 4)
            at += 8
            runs, has_offsets = b"", True
        else:
            raise _bad(where, f"unknown Roaring cookie {cookie}")
        cardinalities = [
            struct.unpack_from("<H", data, at + 4 * i + 2)[0] + 1 for i in range(count)
        ]
        at += 4 * count + (4 * count if has_offsets else 0)
        for i, cardinality in enumerate(cardinalities):
            if runs and runs[i // 8] >> (i % 8) & 1:
                (n_runs,) = struct.unpack_from("<H", data, at)
                at += 2 + 4 * n_runs
            else:
                at += 2 * cardinality if cardinality <= 4096 else 8192
    except struct.error as err:
        raise _bad(where, f"truncated Roaring bitmap ({err})") from err
    if at > len(data):
        raise _bad(where, "truncated Roaring bitmap")
    return at - start


def _from_file(storage: Storage, path: str, dv: DeletionVector) -> bytes:
    """The serialized array of ``dv`` in its DV file, its size and checksum checked."""
    offset = dv.offset or 0
    try:
        raw = storage.read_bytes(path)
    except (FileNotFoundError, StorageError) as err:
        raise _bad(path, f"its file cannot be read ({err})") from err
    if not raw or raw[0] != FILE_VERSION:
        raise _bad(path, f"file format version {raw[:1]!r}, expected {FILE_VERSION}")
    if offset + 4 + dv.size_in_bytes + 4 > len(raw):
        raise _bad(path, f"offset {offset} + {dv.size_in_bytes} bytes lies past its end")
    (size,) = struct.unpack_from(">i", raw, offset)
    if size != dv.size_in_bytes:
        raise _bad(path, f"stored size {size}, the log says {dv.size_in_bytes}")
    data = raw[offset + 4 : offset + 4 + size]
    (checksum,) = struct.unpack_from(">I", raw, offset + 4 + size)
    if zlib.crc32(data) != checksum:
        raise _bad(path, "checksum mismatch (the file is damaged)")
    return data


def deleted_rows(storage: Storage, dv: DeletionVector) -> NDArray[np.uint64]:
    """The rows ``dv`` deletes from its data file, sorted, checked against its cardinality.

    Args:
        storage: The table's storage (a ``u`` vector's file is relative to its root).
        dv: The descriptor, as the log spells it.

    Returns:
        The deleted rows' indexes.

    Raises:
        DeltaLogError: When the vector cannot be read or does not match its descriptor.
    """
    if dv.storage_type == "i":
        where = f"inline {dv.path_or_inline_dv[:16]}..."
        try:
            data = z85_decode(dv.path_or_inline_dv)[: dv.size_in_bytes]
        except (ValueError, KeyError) as err:
            raise _bad(where, f"not Z85 ({err})") from err
    else:
        path = dv.file_path(storage.root)
        if path is None:
            raise _bad(dv.path_or_inline_dv, "its file lies outside the table root")
        where = path
        data = _from_file(storage, path, dv)
    rows = parse_bitmap_array(data, where)
    if len(rows) != dv.cardinality:
        raise _bad(where, f"{len(rows)} row(s), the log says cardinality {dv.cardinality}")
    return rows


def keep_mask(rows: int, deleted: NDArray[np.uint64]) -> NDArray[np.bool_]:
    """A boolean mask of a file's ``rows`` rows, False where ``deleted`` says.

    Raises:
        DeltaLogError: When a deleted index lies past the file's last row.
    """
    if len(deleted) and int(deleted[-1]) >= rows:
        raise _bad("", f"deletes row {int(deleted[-1])} of a file of {rows} rows")
    mask = np.ones(rows, dtype=bool)
    mask[deleted.astype(np.int64)] = False
    return mask
