"""LITE's selection: its few candidates checked against the log's paths (``kept_among``)."""

from __future__ import annotations

import dataclasses

import pyarrow as pa

from python_ops.delta.state.file_columns import FileColumns
from python_ops.delta.state.file_paths import FilePaths
from python_ops.delta.state.snapshot import read_snapshot
from python_ops.ops.vacuum.sources.lite import select_lite

OLD, CUTOFF = 1_000, 2_000


def _paths(
    fixture_table, live: list[str], *, reconciled: frozenset[str] = frozenset()
) -> FilePaths:
    """A real table's head with ``live`` as one checkpoint's add column."""
    head = read_snapshot(str(fixture_table("simple_table_with_checkpoint")))
    head = dataclasses.replace(head, files=(), tombstones=())
    empty = pa.array([], pa.string())
    paths = pa.array(live, pa.string())
    column = FileColumns(paths, empty, pa.array([], pa.int64()), paths, empty)
    return FilePaths(head, (column,), reconciled)


def test_a_candidate_that_is_a_parent_of_a_protected_path_is_kept(fixture_table) -> None:
    # an object store holds key "p=1/a" beside "p=1/a/live.parquet"; Delta keeps the key too
    paths = _paths(fixture_table, ["p=1/a/live.parquet", "p=2/kept.parquet", "é/x/y.parquet"])
    candidates = {
        "p=1/a": (10, OLD),
        "p=2/kept.parquet": (10, OLD),
        "p=2/gone.parquet": (10, OLD),
        "é/x": (10, OLD),
        "p=1/a/live": (10, OLD),  # a prefix of a name, not a directory above it
    }
    kept = paths.kept_among(candidates, CUTOFF)
    assert kept == {"p=1/a", "p=2/kept.parquet", "é/x"}
    chosen = [f.path for f in select_lite(candidates, kept, CUTOFF)]
    assert chosen == ["p=1/a/live", "p=2/gone.parquet"]


def test_a_checkpoint_row_a_later_commit_reconciled_protects_nothing(fixture_table) -> None:
    paths = _paths(
        fixture_table, ["a/x.parquet", "b/y.parquet"], reconciled=frozenset({"a/x.parquet"})
    )
    assert paths.kept_among(["a/x.parquet", "a", "b/y.parquet", "b"], CUTOFF) == {
        "b/y.parquet",
        "b",
    }


def test_candidates_removed_after_the_cutoff_are_not_selected() -> None:
    assert select_lite({"new.parquet": (5, CUTOFF)}, set(), CUTOFF) == []
