"""Sizes and times only where VACUUM's selection needs them (``ops/vacuum/sources/file_stats``).

On a local disk the listing leaves a protected file unstatted; these tests hold the selection
made that way to the one made from a listing that stats everything, on real Delta tables that
delta-rs writes, and check what happens when the protected set changes between listing and
selection (the due check's listing handed to the run) or a file vanishes in between.
"""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable, write_deltalake

from python_ops.delta.state.file_paths import read_file_paths
from python_ops.delta.state.parquet_file import ParquetBytes, decode_on_threads
from python_ops.ops.vacuum import vacuum
from python_ops.ops.vacuum.rule.selection import select_in_process
from python_ops.ops.vacuum.sources.file_stats import stat_unprotected
from python_ops.ops.vacuum.sources.listing import list_visible
from python_ops.storage import open_storage
from tests.helpers.python_run import python_stdout
from tests.helpers.vacuum import age_everything, content, untracked

ROOT = Path(__file__).resolve().parents[2]
FAR_FUTURE_MS = 2**62  # a cutoff after every file: only protection keeps a file


@pytest.fixture
def table(tmp_path: Path) -> Path:
    """A partitioned delta-rs table with an overwrite (tombstones), untracked files, a link."""
    path = tmp_path / "t"
    for i in range(3):
        batch = pa.table({"id": list(range(i * 10, i * 10 + 10)), "p": [f"{i % 2}"] * 10})
        write_deltalake(str(path), batch, partition_by=["p"], mode="append")
    write_deltalake(
        str(path), pa.table({"id": [1, 2], "p": ["0", "1"]}), partition_by=["p"], mode="overwrite"
    )
    DeltaTable(str(path)).create_checkpoint()
    untracked(path, "p=0/stray-1.parquet")
    untracked(path, "orphans/stray-2.parquet")
    age_everything(path)
    os.symlink(path / "p=0", path / "p=0" / "loop")  # never followed, never selected
    return path


def _selection(listing: pa.Table, protected: pa.Array) -> list[tuple[str, int, bool]]:
    return [
        (f.path, f.size_bytes, f.is_dir)
        for f in select_in_process(listing, protected, FAR_FUTURE_MS)
    ]


def test_protected_files_are_not_statted_and_the_selection_is_unchanged(table: Path) -> None:
    storage = open_storage(str(table))
    protected = read_file_paths(storage).protected(FAR_FUTURE_MS)
    full = list_visible(storage, partition_columns=["p"]).table()
    lean = list_visible(storage, partition_columns=["p"], protected=protected).table()

    assert lean.num_rows == full.num_rows
    unstatted = lean.filter(pc.is_null(lean.column("mtime"))).column("path").to_pylist()
    assert unstatted, "the live files were statted"
    assert set(unstatted) <= set(protected.to_pylist())
    live = {uri.split(str(table) + "/", 1)[1] for uri in DeltaTable(str(table)).file_uris()}
    assert live <= set(unstatted)
    assert "p=0/stray-1.parquet" not in unstatted  # an untracked file is always statted
    selected = _selection(lean, protected)
    assert selected == _selection(full, protected)
    assert ("p=0/stray-1.parquet", 100, False) in selected
    assert ("orphans/stray-2.parquet", 100, False) in selected


def test_a_vacuum_from_the_lean_listing_deletes_what_delta_rs_would_and_keeps_the_rows(
    table: Path,
) -> None:
    (table / "p=0" / "loop").unlink()  # delta-rs's listing fails on a link loop
    before = content(table)
    dry = vacuum(str(table), retention_hours=0, allow_short_retention=True)
    theirs = DeltaTable(str(table)).vacuum(
        retention_hours=0, dry_run=True, enforce_retention_duration=False, full=True
    )
    ours = {f.path for f in dry.paths if not f.is_dir}
    assert ours == set(theirs)
    real = vacuum(str(table), retention_hours=0, allow_short_retention=True, dry_run=False)
    assert real.files_deleted == len(ours)
    assert real.delete_failures == 0
    assert content(table) == before


def test_a_handed_listing_is_completed_for_a_smaller_protected_set(table: Path) -> None:
    storage = open_storage(str(table))
    protected = read_file_paths(storage).protected(FAR_FUTURE_MS)
    # the due check protected the stray too (a tombstone that expired since, say)
    wider = pa.concat_arrays([protected, pa.array(["p=0/stray-1.parquet"])])
    handed = list_visible(storage, partition_columns=["p"], protected=wider).table()
    assert "p=0/stray-1.parquet" not in _paths(_selection(handed, wider))

    completed, links = stat_unprotected(storage, handed, protected)

    assert links == 0
    assert ("p=0/stray-1.parquet", 100, False) in _selection(completed, protected)
    full = list_visible(storage, partition_columns=["p"]).table()
    assert _selection(completed, protected) == _selection(full, protected)


def test_a_file_gone_before_its_stat_is_left_out(table: Path) -> None:
    storage = open_storage(str(table))
    protected = read_file_paths(storage).protected(FAR_FUTURE_MS)
    wider = pa.concat_arrays([protected, pa.array(["orphans/stray-2.parquet"])])
    handed = list_visible(storage, partition_columns=["p"], protected=wider).table()
    (table / "orphans" / "stray-2.parquet").unlink()  # another VACUUM got there first

    completed, _ = stat_unprotected(storage, handed, protected)

    assert "orphans/stray-2.parquet" not in completed.column("path").to_pylist()
    assert completed.num_rows == handed.num_rows - 1
    assert ("orphans", 0, True) in _selection(completed, protected)  # now empty: selected


def _paths(selection: list[tuple[str, int, bool]]) -> set[str]:
    return {p for p, _, _ in selection}


@pytest.mark.parametrize("threads", [False, True], ids=["host-process", "command-line"])
def test_checkpoint_columns_read_without_pyarrow_parquet_match_it(
    table: Path, threads: bool
) -> None:
    checkpoint = next((table / "_delta_log").glob("*.checkpoint.parquet"))
    data = checkpoint.read_bytes()
    columns = ["add.path", "add.size", "remove.path", "remove.deletionTimestamp", "metaData"]
    decode_on_threads(threads)  # the command line's setting (python_ops/__main__.py) or not
    try:
        ours = ParquetBytes(data).read([*columns, "no.such.column"])
    finally:
        decode_on_threads(False)
    theirs = pq.ParquetFile(checkpoint).read(columns=columns, use_threads=False)
    assert ours.equals(theirs)
    assert ParquetBytes(data).schema_arrow == pq.ParquetFile(checkpoint).schema_arrow


def test_the_log_read_on_threads_is_the_log_read_on_one(table: Path) -> None:
    # the command line reads protocol and metaData on a thread of their own meanwhile
    decode_on_threads(True)
    try:
        threaded = read_file_paths(str(table))
    finally:
        decode_on_threads(False)
    single = read_file_paths(str(table))
    assert threaded.columns, "the checkpoint was not read as columns"
    assert threaded.head.metadata == single.head.metadata
    assert threaded.head.protocol == single.head.protocol
    assert threaded.head.version == single.head.version
    for ours, theirs in zip(threaded.columns, single.columns, strict=True):
        assert ours.live.equals(theirs.live)
        assert ours.removed.equals(theirs.removed)
        assert ours.removed_at_ms.equals(theirs.removed_at_ms)
    assert set(threaded.protected(0).to_pylist()) == set(single.protected(0).to_pylist())


def test_reading_a_checkpoint_loads_no_pyarrow_filesystem(table: Path) -> None:
    code = """
        import sys
        from python_ops.delta.state.file_paths import read_file_paths
        paths = read_file_paths(sys.argv[1])
        assert paths.columns, "the checkpoint was not read as columns"
        print(sorted(m for m in sys.modules if m.startswith(("pyarrow.fs", "pyarrow._s3fs"))))
    """
    assert python_stdout(code, str(table)) == "[]"
