"""The listing's hidden-name rule, judged name by name (small directories) or in Arrow alike."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from python_ops.ops.vacuum.sources import listing
from python_ops.ops.vacuum.sources.listing import list_visible
from python_ops.storage.local import LocalStorage

NAMES = [
    "part-0.parquet",
    "_hidden.parquet",
    ".hidden.crc",
    "_delta_index",  # always visible, a directory
    "_change_data",  # always visible, a directory
    "_p=1",  # a partition directory whose column starts with '_'
    "_q=1",  # not a partition column: hidden
    "p=2",
    "plain_dir",
    "_tmp_dir",  # hidden directory: its subtree is never listed
]


def _table(root: Path) -> Path:
    for name in NAMES:
        if "." in name:
            (root / name).write_bytes(b"x")
        else:
            (root / name).mkdir()
            (root / name / "f.parquet").write_bytes(b"y")
            (root / name / "_inner").write_bytes(b"z")
    os.symlink(root / "part-0.parquet", root / "link.parquet")  # counted, never listed
    os.symlink(root / "part-0.parquet", root / "_hidden_link")  # hidden: not even counted
    return root


def _listed(root: Path) -> tuple[list[tuple[object, ...]], int]:
    found = list_visible(LocalStorage(str(root)), partition_columns=["_p", "p"])
    rows = sorted((r["path"], r["size"], r["is_dir"]) for r in found.table().to_pylist())
    return rows, found.symlinks_skipped


@pytest.mark.parametrize("threshold", [0, 1_024])
def test_python_and_arrow_judge_a_directory_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, threshold: int
) -> None:
    root = _table(tmp_path)
    monkeypatch.setattr(listing, "_JUDGED_ONE_BY_ONE_UP_TO", threshold)
    rows, links = _listed(root)
    assert [path for path, _, _ in rows] == [
        "_change_data",
        "_change_data/f.parquet",
        "_delta_index",
        "_delta_index/f.parquet",
        "_p=1",
        "_p=1/f.parquet",
        "p=2",
        "p=2/f.parquet",
        "part-0.parquet",
        "plain_dir",
        "plain_dir/f.parquet",
    ]
    assert links == 1
    assert all(is_dir == ("." not in path) for path, _, is_dir in rows)
