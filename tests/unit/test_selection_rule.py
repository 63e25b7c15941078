"""VACUUM's in-process selection rule (``selected_rows``) and the paths it returns.

The rule is Delta's counting rule: a kept entry (an old file, any directory) is selected when
it is counted exactly once (no kept file below it, no other kept entry with its path) and is
not protected. Repeated paths are found among the sorted selection, not by hashing every path:
these tests hold that to the rule on listings an object store can produce.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

from python_ops.ops.results import VacuumFile
from python_ops.ops.vacuum.rule.selection import SelectedPaths, select_in_process, selected_rows

OLD, NEW, CUTOFF = 1_000, 9_000, 5_000


def _listing(rows: list[tuple[str, int, int | None, bool]], *, chunk: int = 0) -> pa.Table:
    """A listing table as ``Listing.table`` makes it (``chunk``: rows per record batch)."""
    schema = pa.schema(
        [("path", pa.string()), ("size", pa.int64()), ("mtime", pa.int64()), ("is_dir", pa.bool_())]
    )
    table = pa.Table.from_pylist(
        [dict(zip(schema.names, row, strict=True)) for row in rows], schema=schema
    )
    return pa.Table.from_batches(table.to_batches(max_chunksize=chunk or None), schema=schema)


def _paths(table: pa.Table) -> list[str]:
    return [str(p) for p in table.column("path").to_pylist()]


@pytest.mark.parametrize("chunk", [0, 1, 2])
def test_old_unprotected_files_and_empty_directories_are_selected_sorted(chunk: int) -> None:
    listing = _listing(
        [
            ("p=1/old.parquet", 10, OLD, False),
            ("p=1/new.parquet", 10, NEW, False),
            ("p=0/live.parquet", 10, OLD, False),
            ("empty", 0, OLD, True),
            ("p=1", 0, OLD, True),
            ("a.parquet", 5, OLD, False),
        ],
        chunk=chunk,
    )
    rows = selected_rows(listing, ["p=0/live.parquet", "p=0"], CUTOFF)
    # p=1 holds an old file (counted twice: kept); p=0 is protected
    assert _paths(rows) == ["a.parquet", "empty", "p=1/old.parquet"]


@pytest.mark.parametrize("chunk", [0, 1])
def test_a_repeated_path_is_never_selected(chunk: int) -> None:
    listing = _listing(
        [
            ("a", 3, OLD, False),  # an object store's key "a" beside the marker "a/"
            ("a", 0, OLD, True),
            ("b.parquet", 4, OLD, False),  # the same key listed twice
            ("c.parquet", 4, OLD, False),
            ("b.parquet", 4, OLD, False),
            ("d.parquet", 4, OLD, False),
        ],
        chunk=chunk,
    )
    assert _paths(selected_rows(listing, [], CUTOFF)) == ["c.parquet", "d.parquet"]


def test_a_repeat_that_is_not_kept_does_not_count() -> None:
    # a new file "a" beside an old directory marker "a": only the directory is kept
    listing = _listing([("a", 3, NEW, False), ("a", 0, OLD, True), ("z", 1, OLD, False)])
    assert _paths(selected_rows(listing, [], CUTOFF)) == ["a", "z"]


def test_a_file_whose_time_was_never_read_is_not_kept() -> None:
    # protected files on a local disk keep a null time (``file_stats``): never selected
    listing = _listing([("p=0/live.parquet", 0, None, False), ("p=0", 0, OLD, True)])
    assert _paths(selected_rows(listing, [], CUTOFF)) == ["p=0"]


def test_an_empty_listing_selects_nothing() -> None:
    assert selected_rows(_listing([]), ["x"], CUTOFF).num_rows == 0
    assert select_in_process(_listing([]), ["x"], CUTOFF) == ()


def test_selected_paths_is_a_sequence_of_vacuum_files_read_a_slice_at_a_time() -> None:
    names = [f"p={i % 3}/f-{i:05d}.parquet" for i in range(20_000)]
    rows = _listing([(n, i, OLD, False) for i, n in enumerate(names)] + [("d", 7, OLD, True)])
    paths = SelectedPaths(rows)
    expected = tuple(
        sorted(
            [VacuumFile(n, i, False) for i, n in enumerate(names)] + [VacuumFile("d", 0, True)],
            key=lambda f: f.path,
        )
    )
    assert len(paths) == len(expected) == 20_001
    assert paths == expected
    assert expected == paths  # a tuple compares with it too
    assert tuple(paths) == expected
    assert paths[0] == VacuumFile("d", 0, True)  # a directory's size is 0
    assert paths[-1] == expected[-1]
    assert paths[8_190:8_195] == expected[8_190:8_195]
    assert paths[::5000] == expected[::5000]
    with pytest.raises(IndexError, match="out of range"):
        paths[20_001]
    assert paths != expected[:-1]
    assert hash(SelectedPaths(rows)) == hash(paths)
