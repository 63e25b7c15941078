"""``LocalStorage.read_bytes``: every byte of files of any size, with few system calls."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from python_ops.errors import StorageError
from python_ops.storage import local
from python_ops.storage.local import LocalStorage

SIZES = [0, 1, local._FIRST_READ - 1, local._FIRST_READ, local._FIRST_READ + 1, 3_000_001]


@pytest.mark.parametrize("size", SIZES)
def test_every_byte_is_read(tmp_path: Path, size: int) -> None:
    data = os.urandom(size)
    (tmp_path / "f").write_bytes(data)
    assert LocalStorage(str(tmp_path)).read_bytes("f") == data


def test_a_missing_file_is_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        LocalStorage(str(tmp_path)).read_bytes("_delta_log/00000000000000000000.json")


def test_a_directory_is_a_storage_error(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    with pytest.raises(StorageError, match=r"cannot read .*/d: .*Is a directory"):
        LocalStorage(str(tmp_path)).read_bytes("d")


def test_a_path_outside_the_root_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StorageError, match="escapes the table root"):
        LocalStorage(str(tmp_path / "t")).read_bytes("../secret")
