"""Key ranges of one prefix: boundaries from known names, and ranges that cover it once."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from python_ops.storage import key_ranges
from python_ops.storage.key_ranges import in_range, split_points
from python_ops.storage.key_ranges import key_ranges as ranges_of
from python_ops.storage.local import LocalStorage


def names(count: int, prefix: str = "") -> list[str]:
    return [f"{prefix}part-{i:06d}.parquet" for i in range(count)]


def test_boundaries_are_quantiles_of_the_names_in_the_prefix() -> None:
    hints = pa.array(names(40_000) + names(40_000, "p=1/"))
    points = split_points(hints, "", ranges=8, one_level=True)
    # the root's own names only (p=1/... would cut p=1/ in two), evenly spaced
    assert points == [f"part-{i * 5_000:06d}.parquet" for i in range(1, 8)]
    assert split_points(hints, "p=1", ranges=4, one_level=False) == [
        f"p=1/part-{i * 10_000:06d}.parquet" for i in range(1, 4)
    ]


def test_few_known_names_list_as_one_range() -> None:
    few = names(2 * key_ranges.MIN_PER_RANGE - 1)
    assert split_points(few, "", ranges=8, one_level=True) == []
    assert split_points(names(30_000, "p=1/"), "p=2", ranges=8, one_level=False) == []
    assert split_points(names(30_000), "", ranges=1, one_level=True) == []
    # enough for 3 ranges of MIN_PER_RANGE, not for 8
    assert len(split_points(names(3 * key_ranges.MIN_PER_RANGE), "", ranges=8, one_level=True)) == 2


def test_ranges_cover_every_path_exactly_once() -> None:
    points = split_points(names(20_000), "", ranges=4, one_level=True)
    bounds = ranges_of(points)
    assert bounds[0][0] is None
    assert bounds[-1][1] is None
    for path in ["", "a", *points, "part-0", "part-999999.parquet", "zzz", "p=1/x"]:
        assert sum(in_range(path, b) for b in bounds) == 1, path


def test_default_list_range_keeps_the_range(tmp_path: Path) -> None:
    for name in ["a.parquet", "b.parquet", "c.parquet", "d/e.parquet"]:
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_bytes(b"x")
    storage = LocalStorage(str(tmp_path))
    assert not storage.lists_key_ranges
    got = [
        e.path
        for b in ranges_of(["b.parquet", "c.parquet"])
        for e in storage.list_range("", start_after=b[0], last=b[1])
    ]
    assert sorted(got) == sorted(e.path for e in storage.list_dir(""))
    assert [e.path for e in storage.list_range("", start_after="a.parquet", last="c.parquet")] in (
        ["b.parquet", "c.parquet"],
        ["c.parquet", "b.parquet"],
    )


@pytest.mark.parametrize("one_level", [True, False])
def test_names_outside_the_prefix_are_ignored(one_level: bool) -> None:
    hints = names(30_000, "p=10/") + names(30_000, "p=1x")
    assert split_points(hints, "p=1", ranges=8, one_level=one_level) == []
