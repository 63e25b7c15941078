"""Z-order in bounded memory: runs spilled and merged, the same rows in Z-key order, no spill left.

Tables are written by delta-rs (several appends: several files, nulls in a key column, strings,
timestamps); Delta (the JVM server) reads them back before and after.
"""

from __future__ import annotations

import json
import logging
import os
import re
import socket
import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from python_ops.delta.log.actions import AddFile
from python_ops.delta.state.snapshot import read_snapshot
from python_ops.delta.table.stats import delta_stats
from python_ops.errors import ConfigError, StorageError
from python_ops.maintenance.configuration.config import parse_config
from python_ops.ops.optimize.execute import optimize
from python_ops.ops.optimize.planning.plan import plan_optimize
from python_ops.ops.optimize.sorting.external_sort import sort_by_key
from python_ops.ops.optimize.sorting.partition_batches import PartitionSource
from python_ops.ops.optimize.sorting.spill_directory import SPILL_PREFIX, remove_orphans
from python_ops.ops.optimize.sorting.zorder import (
    ZOrderKeys,
    write_clustered,
    zorder_sort,
)
from python_ops.ops.optimize.writers.own_compact import read_inputs
from python_ops.storage import open_storage
from tests.helpers.delta_reads import oracle
from tests.helpers.trust import cli
from tests.helpers.vacuum import content

COLUMNS = ["customer_id", "country"]
STATS = ["customer_id", "event_ts", "country", "amount"]
BUDGET = 2_000_000  # ~6 runs of the 120,000 rows below


def _events(path: Path, *, appends: int = 6, rows: int = 20_000) -> None:
    from deltalake import write_deltalake

    rng = np.random.default_rng(3)
    for _ in range(appends):
        ids = rng.integers(0, 50_000, rows)
        table = pa.table(
            {
                "customer_id": pa.array(ids, mask=ids % 13 == 0),  # nulls in a key column
                "event_ts": pa.array(rng.integers(0, 10**14, rows), pa.timestamp("us", "UTC")),
                "country": pa.array([f"c{x:03d}" for x in rng.integers(0, 400, rows)]),
                "amount": rng.random(rows),
            }
        )
        write_deltalake(str(path), table, mode="append")


def _files(path: Path) -> list[AddFile]:
    return sorted(read_snapshot(str(path)).files, key=lambda f: str(f.relative_path))


def _planned(path: Path) -> list[AddFile]:
    """The partition's files in the order the Z-order reads them (the plan's)."""
    by_path = {f.relative_path: f for f in read_snapshot(str(path)).files}
    (partition,) = plan_optimize(str(path), zorder_by=COLUMNS, full=True).work
    return [by_path[p] for b in partition.bins for p in b.files]


def _keys_in_order(path: Path, inputs: list[AddFile], budget: int) -> np.ndarray:
    """Z-keys of the table's rows, file after file, with the ranges the rewrite used.

    ``inputs`` in the order the rewrite read them: a sample is drawn in that order.
    """
    storage = open_storage(str(path))
    keys = ZOrderKeys(PartitionSource(storage, inputs), COLUMNS, sample_bytes=budget // 4)
    keys.prepare(None)
    return np.concatenate([keys(pq.read_table(path / str(f.relative_path))) for f in _files(path)])


def test_tiny_budget_spills_runs_keeps_rows_and_sorts_by_key(
    tmp_path: Path, delta_spark, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    table = tmp_path / "ev"
    _events(table)
    inputs = _planned(table)
    before, oracle_before = content(table), oracle(delta_spark, table)
    spill = tmp_path / "spill"
    spill.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spill))  # the OS temp directory of this op
    size = sum(f.size_bytes for f in inputs)

    with caplog.at_level(logging.INFO, logger="python_ops.ops.optimize.sorting.zorder"):
        result = optimize(
            str(table),
            zorder_by=COLUMNS,
            full=True,
            target_size_bytes=size // 8 + 1,
            memory_budget_bytes=BUDGET,
        )

    spilled = [r.getMessage() for r in caplog.records if "spilled runs" in r.getMessage()]
    assert spilled, [r.getMessage() for r in caplog.records]
    runs = int(spilled[0].split(" in ")[1].split()[0])
    assert runs >= 3, spilled
    assert list(spill.iterdir()) == []  # the spill directory is gone
    assert content(table) == before
    assert oracle(delta_spark, table) == oracle_before  # Delta reads the same rows
    assert result.files_removed == len(inputs) == 6
    assert result.files_added == len(_files(table)) == 8
    keys = _keys_in_order(table, inputs, BUDGET)
    assert bool(np.all(keys[1:] >= keys[:-1]))  # sorted by Z-key across the files
    for f in _files(table):  # the statistics merged per row group are the whole file's
        assert f.stats == delta_stats(pq.read_table(table / str(f.relative_path)), STATS)
    (version,) = result.commits
    lines = (table / "_delta_log" / f"{version:020d}.json").read_text().splitlines()
    actions = [json.loads(line) for line in lines]
    info = next(a["commitInfo"] for a in actions if "commitInfo" in a)
    assert info["python_ops.operation"] == "OPTIMIZE"
    assert json.loads(info["operationParameters"]["zOrderBy"]) == COLUMNS
    assert all(a[k]["dataChange"] is False for a in actions for k in ("add", "remove") if k in a)


def test_a_partition_that_fits_is_ordered_as_the_in_memory_z_order(tmp_path: Path) -> None:
    table = tmp_path / "ev"
    _events(table, appends=3)
    storage = open_storage(str(table))
    inputs = _files(table)
    expected = zorder_sort(read_inputs(storage, inputs), COLUMNS)

    written = write_clustered(
        storage, inputs, columns=COLUMNS, target_size_bytes=200_000, stats_columns=STATS
    )

    files = [pq.read_table(table / f.path) for f in written]
    assert pa.concat_tables(files).equals(expected)  # row for row, as before
    assert [f.rows for f in written] == [t.num_rows for t in files]
    assert [f.stats for f in written] == [delta_stats(t, STATS) for t in files]


def test_spill_files_are_removed_when_the_sort_fails_midway(tmp_path: Path) -> None:
    table = tmp_path / "ev"
    _events(table)
    storage = open_storage(str(table))
    source = PartitionSource(storage, _files(table))
    keys = ZOrderKeys(source, COLUMNS, sample_bytes=BUDGET // 4)
    seen: list[int] = []

    def failing_sink(rows: pa.Table) -> None:
        (directory,) = [p for p in tmp_path.iterdir() if p.name.startswith(SPILL_PREFIX)]
        seen.append(len(list(directory.iterdir())))
        raise RuntimeError("the output failed")

    with pytest.raises(RuntimeError, match="the output failed"):
        sort_by_key(
            source, keys, failing_sink, memory_budget_bytes=BUDGET, spill_root=str(tmp_path)
        )

    assert seen[0] >= 3  # runs had been spilled when the merge began
    assert [p.name for p in tmp_path.iterdir()] == ["ev"]


def _corrupt(path: Path, column: str) -> None:
    """Overwrite the first page header of ``column``: the footer still reads, the data not."""
    meta = pq.ParquetFile(path).metadata
    index = meta.schema.to_arrow_schema().get_field_index(column)
    chunk = meta.row_group(0).column(index)
    offset = chunk.dictionary_page_offset or chunk.data_page_offset
    data = bytearray(path.read_bytes())
    data[offset : offset + 64] = b"\xab" * 64
    path.write_bytes(bytes(data))


def test_an_unreadable_file_after_runs_were_spilled_commits_nothing_and_leaves_no_spill(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = tmp_path / "ev"
    _events(table)
    (partition,) = plan_optimize(str(table), zorder_by=COLUMNS, full=True).work
    last_read = partition.bins[-1].files[-1]  # read after the runs of the 5 files before it
    _corrupt(table / str(last_read), "amount")  # not a key column: the key pass reads it
    version = read_snapshot(str(table)).version
    spill = tmp_path / "spill"
    spill.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spill))

    with pytest.raises(StorageError, match="cannot be read as Parquet"):
        optimize(str(table), zorder_by=COLUMNS, full=True, memory_budget_bytes=BUDGET)

    assert list(spill.iterdir()) == []
    assert read_snapshot(str(table)).version == version


def test_the_cli_takes_a_memory_budget_and_refuses_a_bad_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = tmp_path / "ev"
    _events(table, appends=4)
    before = content(table)
    spill = tmp_path / "spill"
    spill.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spill))
    zorder = ["optimize", str(table), "--zorder-by", ",".join(COLUMNS), "--full"]

    code, out, err = cli([*zorder, "--memory-budget", "2MB", "--dry-run"], None)
    assert code == 0, err
    assert "would rewrite 4 of 4 files" in out, out

    code, out, err = cli([*zorder, "--memory-budget", "2MB", "--json", "-v"], None)

    assert code == 0, err
    assert re.search(r"80000 rows sorted in \d+ spilled runs", err), err
    assert json.loads(out.strip().splitlines()[-1])["files_removed"] == 4
    assert content(table) == before
    assert list(spill.iterdir()) == []
    with pytest.raises(SystemExit) as refused:
        cli([*zorder, "--memory-budget", "lots"], None)
    assert refused.value.code == 2


def test_the_memory_budget_key_takes_bytes_or_units() -> None:
    assert parse_config("m", {}).memory_budget_bytes == 1 << 30
    config = parse_config("m", {"maintenance_memory_budget": "512MiB"})
    assert config.memory_budget_bytes == 512 * 2**20
    assert parse_config("m", {"maintenance_memory_budget": 10**9}).memory_budget_bytes == 10**9
    with pytest.raises(ConfigError, match="maintenance_memory_budget"):
        parse_config("m", {"maintenance_memory_budget": "a lot"})


def test_a_killed_process_spill_directory_is_removed_by_the_next_z_order(tmp_path: Path) -> None:
    host = socket.gethostname()
    gone = tmp_path / f"{SPILL_PREFIX}{host}-p{2**22 + 1}-abc"  # above Linux's largest pid
    gone.mkdir()
    (gone / "run-00000.parquet").write_bytes(b"x")
    alive = tmp_path / f"{SPILL_PREFIX}{host}-p{os.getpid()}-abc"
    alive.mkdir()
    elsewhere = tmp_path / f"{SPILL_PREFIX}another-host-p{2**22 + 1}-abc"
    elsewhere.mkdir()
    link = tmp_path / f"{SPILL_PREFIX}{host}-p{2**22 + 2}-abc"
    link.symlink_to(alive)

    assert remove_orphans(str(tmp_path)) == [str(gone)]

    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [alive.name, elsewhere.name, link.name]
    )
