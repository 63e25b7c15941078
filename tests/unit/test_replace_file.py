"""``Storage.replace_file`` on a local disk: whole, atomic, Hadoop's stale checksum dropped."""

from __future__ import annotations

from pathlib import Path

import pytest

from python_ops.errors import StorageError
from python_ops.storage.local import LocalStorage


def test_the_file_is_replaced_whole_and_its_stale_checksum_dropped(tmp_path: Path) -> None:
    log = tmp_path / "_delta_log"
    log.mkdir()
    (log / "_last_vacuum_info").write_text("old\n")
    (log / "._last_vacuum_info.crc").write_bytes(b"checksum of old")  # as Hadoop leaves it
    (log / ".00000000000000000000.json.crc").write_bytes(b"another file's")

    LocalStorage(str(tmp_path)).replace_file("_delta_log/_last_vacuum_info", b"new\n")

    assert (log / "_last_vacuum_info").read_bytes() == b"new\n"
    assert sorted(p.name for p in log.iterdir()) == [
        ".00000000000000000000.json.crc",  # only the replaced file's checksum goes
        "_last_vacuum_info",  # and no temporary file stays
    ]


def test_a_new_file_is_written(tmp_path: Path) -> None:
    LocalStorage(str(tmp_path)).replace_file("state", b"x")
    assert (tmp_path / "state").read_bytes() == b"x"
    assert [p.name for p in tmp_path.iterdir()] == ["state"]


def test_a_failed_write_raises_and_leaves_nothing(tmp_path: Path) -> None:
    storage = LocalStorage(str(tmp_path))
    with pytest.raises(StorageError, match=r"cannot write .*no_such_dir/state"):
        storage.replace_file("no_such_dir/state", b"x")
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(StorageError, match="escapes the table root"):
        storage.replace_file("../outside", b"x")
    assert not (tmp_path.parent / "outside").exists()
