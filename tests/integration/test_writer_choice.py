"""The right writer for each table, and every write does only what was asked (issue 24 item 1).

Compaction and Z-order write and commit here (no post-commit log cleanup at all); tables only Delta
writes (deletion vectors, ...) are written by a local Spark with Delta 4.4 that starts only
when a table needs it. Delta reads every table back after our writes.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake

from python_ops.delta.log.commits import commit_actions
from python_ops.delta.state.snapshot import read_snapshot
from python_ops.delta.writing.local_writer import LOCAL_DELTA_ENV, WHERE, writer
from python_ops.errors import UnsupportedFeatureError
from python_ops.ops.log_cleanup import cleanup_logs
from python_ops.ops.optimize.execute import WRITER_COMPACT, WRITER_DELTA_SQL, optimize
from python_ops.storage import open_storage
from tests.helpers.delta_reads import oracle, table_sql

DAY_S = 86_400


def log_names(table: Path) -> set[str]:
    return {p.name for p in (table / "_delta_log").iterdir() if p.is_file()}


def age_log(table: Path, days: float) -> None:
    when = time.time() - days * DAY_S
    for path in (table / "_delta_log").iterdir():
        if path.is_file():
            os.utime(path, (when, when))


def issue_repro(table: Path) -> None:
    """The issue's repro: 19 appends with deltalake, a checkpoint after the 11th, aged 40 days."""
    for i in range(19):
        write_deltalake(str(table), pa.table({"id": [i], "v": [str(i)]}), mode="append")
        if i == 10:
            DeltaTable(str(table)).create_checkpoint()
    age_log(table, 40)


def test_compaction_deletes_no_log_file(tmp_path: Path, delta_spark: Any) -> None:
    table = tmp_path / "t"
    issue_repro(table)
    before_rows = oracle(delta_spark, table)
    before = log_names(table)
    assert "00000000000000000010.checkpoint.parquet" in before
    result = optimize(str(table), min_small_files=2)
    # delta-rs's optimize.compact would have deleted commits 0-9 (its hook ignores the setting)
    assert result.writer == WRITER_COMPACT
    assert (result.files_removed, result.files_added) == (19, 1)
    assert before - log_names(table) == set()
    (version,) = result.commits
    actions = commit_actions(open_storage(str(table)), version)
    assert all(not a[k]["dataChange"] for a in actions for k in ("add", "remove") if k in a)
    info = next(a["commitInfo"] for a in actions if "commitInfo" in a)
    assert info["python_ops.operation"] == "OPTIMIZE"
    assert oracle(delta_spark, table) == before_rows
    assert len(read_snapshot(str(table)).files) == 1


def test_young_log_compaction_reads_back_in_delta(tmp_path: Path, delta_spark: Any) -> None:
    table = tmp_path / "t"
    for i in range(4):
        write_deltalake(str(table), pa.table({"id": [i], "v": [str(i)]}), mode="append")
    DeltaTable(str(table)).create_checkpoint()
    before_rows = oracle(delta_spark, table)
    result = optimize(str(table), min_small_files=2)
    assert result.writer == WRITER_COMPACT
    assert oracle(delta_spark, table) == before_rows


def test_cleanup_logs_deletes_exactly_what_it_reports(tmp_path: Path, delta_spark: Any) -> None:
    # Delta writes a .crc beside each commit and checkpoints at version 10
    table = tmp_path / "t"
    name = table_sql(table)
    delta_spark.sql(
        f"CREATE TABLE {name} (id BIGINT) USING delta "
        "TBLPROPERTIES ('delta.checkpointInterval' = '10')"
    ).collect()
    for i in range(12):
        delta_spark.sql(f"INSERT INTO {name} VALUES ({i})").collect()
    assert "00000000000000000010.checkpoint.parquet" in log_names(table)
    assert "00000000000000000003.crc" in log_names(table)
    age_log(table, 40)
    before_rows = oracle(delta_spark, table)
    before = log_names(table)
    optimize(str(table), min_small_files=2)
    assert before - log_names(table) == set()  # our commit deleted no log file
    dry = cleanup_logs(str(table), dry_run=True)
    before = log_names(table)
    real = cleanup_logs(str(table), dry_run=False)
    gone = before - log_names(table)
    # the checkpoint at the head (delta-rs) comes first: every older commit and .crc goes
    assert real.checkpoint_first == dry.checkpoint_first == 13
    assert gone == {Path(f.path).name for f in dry.files} == {Path(f.path).name for f in real.files}
    assert real.files_deleted == len(gone) == dry.files_found
    assert sum(n.endswith(".crc") for n in gone) == 13  # versions 0-12
    assert sum(n.endswith(".json") for n in gone) == 13
    assert oracle(delta_spark, table) == before_rows
    # recording the policy is a commit too: it deletes nothing, the cleanup counts what it does
    before = log_names(table)
    again = cleanup_logs(
        str(table),
        dry_run=False,
        record_policy={"delta.checkpointRetentionDuration": "interval 2 days"},
    )
    assert again.properties_recorded
    assert before - log_names(table) == {Path(f.path).name for f in again.files}
    assert again.files_deleted == len(again.files)
    assert oracle(delta_spark, table) == before_rows


def _dv_table(spark: Any, table: Path) -> None:
    """A table only Delta writes: column mapping in id mode (name mode and deletion vectors are
    rewritten here now)."""
    name = table_sql(table)
    spark.sql(
        f"CREATE TABLE {name} (id BIGINT, v STRING) USING delta "
        "TBLPROPERTIES ('delta.columnMapping.mode' = 'id', 'delta.minReaderVersion' = '2', "
        "'delta.minWriterVersion' = '5')"
    ).collect()
    for i in range(3):
        spark.sql(
            f"INSERT INTO {name} SELECT id, cast(id AS STRING) FROM range({i * 50}, {i * 50 + 50})"
        ).collect()
    spark.sql(f"ALTER TABLE {name} RENAME COLUMN v TO label").collect()


def _deletion_vector_table(spark: Any, table: Path) -> None:
    """Three appends and a DELETE that leaves deletion vectors (delta-rs cannot checkpoint it)."""
    name = table_sql(table)
    spark.sql(
        f"CREATE TABLE {name} (id BIGINT, v STRING) USING delta "
        "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')"
    ).collect()
    for i in range(3):
        spark.sql(
            f"INSERT INTO {name} SELECT id, cast(id AS STRING) FROM range({i * 50}, {i * 50 + 50})"
        ).collect()
    spark.sql(f"DELETE FROM {name} WHERE id % 5 = 0").collect()
    assert any(f.deletion_vector for f in read_snapshot(str(table)).files)


@pytest.mark.classic_spark
@pytest.mark.delta_jars
def test_a_table_only_delta_writes_is_optimized_by_the_local_delta_writer(
    tmp_path: Path, delta_spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = tmp_path / "dv"
    _dv_table(delta_spark, table)
    before = oracle(delta_spark, table)
    with monkeypatch.context() as off:
        off.setenv(LOCAL_DELTA_ENV, "off")
        with pytest.raises(
            UnsupportedFeatureError,
            match=r"columnMapping.*Delta's own writer.*would run it, but here "
            r"SPARKDELTA_LOCAL_DELTA=off",
        ):
            optimize(str(table), min_small_files=2)
    live = len(read_snapshot(str(table)).files)
    started = time.perf_counter()
    result = optimize(str(table), min_small_files=2)
    print(
        f"OPTIMIZE through the lazily started Delta writer: {time.perf_counter() - started:.1f} s"
    )
    assert result.writer == f"{WRITER_DELTA_SQL} on {WHERE}"
    assert writer().started
    (version,) = result.commits
    assert result.files_removed == live
    row = delta_spark.sql(f"DESCRIBE HISTORY {table_sql(table)}").collect()
    assert next(r for r in row if int(r["version"]) == version)["operation"] == "OPTIMIZE"
    assert oracle(delta_spark, table) == before


@pytest.mark.classic_spark
@pytest.mark.delta_jars
def test_cleanup_logs_checkpoint_of_a_deletion_vector_table_is_written_by_delta(
    tmp_path: Path, delta_spark: Any
) -> None:
    table = tmp_path / "dv"
    _deletion_vector_table(delta_spark, table)  # 5 commits, no checkpoint (interval 10)
    assert not any(n.endswith(".checkpoint.parquet") for n in log_names(table))
    age_log(table, 40)
    before = oracle(delta_spark, table)
    head = read_snapshot(str(table)).version
    result = cleanup_logs(str(table), dry_run=False)
    assert (result.checkpoint_first, result.checkpoint_writer) == (head, "Delta")
    assert f"{head:020d}.checkpoint.parquet" in log_names(table)
    last = json.loads((table / "_delta_log" / "_last_checkpoint").read_text())
    assert last["version"] == head
    # the checkpoint's commits were old: everything before it went, and Delta still reads it
    assert result.files_deleted == head * 2  # a commit and its .crc per version
    assert oracle(delta_spark, table) == before
    assert read_snapshot(str(table)).version == head


def test_log_files_deleted_by_deltas_own_commit_are_counted(
    tmp_path: Path, delta_spark: Any
) -> None:
    # Delta checkpoints after a commit landing on a multiple of delta.checkpointInterval and
    # then cleans expired log files (delta.enableExpiredLogCleanup): not ours to prevent on
    # Delta's writer, but the result names what went
    table = tmp_path / "t"
    name = table_sql(table)
    delta_spark.sql(
        f"CREATE TABLE {name} (id BIGINT) USING delta "
        "TBLPROPERTIES ('delta.checkpointInterval' = '3')"
    ).collect()
    for i in range(5):
        delta_spark.sql(f"INSERT INTO {name} VALUES ({i})").collect()
    assert "00000000000000000003.checkpoint.parquet" in log_names(table)
    age_log(table, 40)
    before_rows = oracle(delta_spark, table)
    before = log_names(table)
    result = optimize(str(table), min_small_files=2, spark=delta_spark)
    assert result.commits == (6,)
    gone = before - log_names(table)
    assert gone  # commits before checkpoint 3 (Delta's own cleanup after its checkpoint at 6)
    assert set(result.log_files_deleted) == gone
    assert oracle(delta_spark, table) == before_rows
