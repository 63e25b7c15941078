"""``LocalStorage.read_bytes``: every byte of files of any size, with few system calls."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


@settings(max_examples=300, deadline=None)
@given(
    root=st.sampled_from(["", "/", "/t", "/t/", "t", "/a b/ç", "/x//y"]),
    rel=st.lists(
        st.sampled_from(["a", "_delta_log", "00000000000000000001.json", ".", "..", "", "b c"]),
        max_size=4,
    ).map("/".join),
)
def test_a_path_inside_the_root_is_joined_as_os_path_join(root: str, rel: str) -> None:
    storage = LocalStorage(root)
    try:
        clean = storage._check_relative(rel)
    except StorageError:
        with pytest.raises(StorageError, match="escapes the table root"):
            storage._abs(rel)
        return
    assert storage._abs(rel) == (os.path.join(root, clean) if clean else root)
