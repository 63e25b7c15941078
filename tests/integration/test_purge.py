"""Deletion-vector purge (issue 24 item 4): REORG ... APPLY (PURGE) of the partitions whose
deleted-row share passes the threshold, on Delta's writer; health shows the share.

The table is Delta 4.4's own (the ``delta_spark`` server); the purge runs without an engine,
so the local Delta writer starts for it. Delta reads the table back afterwards.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from python_ops.delta.log.commits import commit_actions
from python_ops.delta.state.snapshot import read_snapshot
from python_ops.delta.writing.local_writer import LOCAL_DELTA_ENV
from python_ops.errors import ConfigError
from python_ops.ops.health import table_health
from python_ops.ops.purge import WRITER_NATIVE, WRITER_REORG, purge, purge_statement
from python_ops.ops.vacuum import vacuum
from python_ops.storage import open_storage
from tests.helpers.delta_reads import oracle, table_sql

pytestmark = [pytest.mark.classic_spark, pytest.mark.delta_jars]


def files_on_disk(table: Path) -> tuple[int, int]:
    paths = [p for p in table.rglob("*") if p.is_file() and "_delta_log" not in p.parts]
    data = [p for p in paths if not p.name.startswith(".")]
    return len(data), sum(p.stat().st_size for p in data)


ROWS = 200_000


def dv_table(spark: Any, table: Path) -> None:
    """Partition a: 20 % of its rows deleted; partition b: 2 %."""
    name = table_sql(table)
    spark.sql(
        f"CREATE TABLE {name} (id BIGINT, v STRING, p STRING) USING delta PARTITIONED BY (p) "
        "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')"
    ).collect()
    for p in ("a", "b"):
        spark.sql(
            f"INSERT INTO {name} SELECT id, concat('value-', id), '{p}' FROM range(0, {ROWS}, 1, 2)"
        ).collect()
    spark.sql(f"DELETE FROM {name} WHERE p = 'a' AND id % 5 = 0").collect()
    spark.sql(f"DELETE FROM {name} WHERE p = 'b' AND id % 50 = 0").collect()


@pytest.mark.parametrize("route", ["here", "delta"])
def test_purge_rewrites_the_partition_past_the_threshold(
    tmp_path: Path, delta_spark: Any, route: str
) -> None:
    table = tmp_path / "dv"
    dv_table(delta_spark, table)
    health = table_health(str(table))
    assert health.deleted_rows == ROWS // 5 + ROWS // 50
    assert health.deleted_row_share == pytest.approx(0.11)
    assert health.max_partition_deleted_share == pytest.approx(0.2)
    assert 0 < health.purge_reclaimable_bytes < health.total_bytes
    before_rows = oracle(delta_spark, table)
    before_files = files_on_disk(table)
    before = read_snapshot(str(table))
    b_files = {f.relative_path for f in before.files if f.partition_values["p"] == "b"}

    dry = purge(str(table), dry_run=True)
    assert [p["partition_values"] for p in dry.partitions_due] == [{"p": "a"}]
    assert dry.partitions_due[0]["deleted_share"] == pytest.approx(0.2)
    assert dry.commit is None
    assert read_snapshot(str(table)).version == before.version

    started = time.perf_counter()
    result = purge(str(table), spark=delta_spark if route == "delta" else None)
    took = time.perf_counter() - started
    # without an engine that has Delta, the purge is written here (no JVM); with one, Delta's
    # own REORG runs it
    assert (
        result.writer == WRITER_NATIVE
        if route == "here"
        else result.writer.startswith(WRITER_REORG)
    )
    assert result.commit == before.version + 1
    actions = commit_actions(open_storage(str(table)), result.commit)
    info = next(a["commitInfo"] for a in actions if "commitInfo" in a)
    assert info["operation"] == "REORG"
    after = read_snapshot(str(table))
    # partition a rewritten without deletion vectors; partition b (2 %) untouched
    assert not any(f.deletion_vector for f in after.files if f.partition_values["p"] == "a")
    assert {f.relative_path for f in after.files if f.partition_values["p"] == "b"} == b_files
    assert oracle(delta_spark, table) == before_rows
    # VACUUM (ours) reclaims the replaced files once past the retention
    vacuum(str(table), retention_hours=0, allow_short_retention=True, dry_run=False, mode="full")
    after_files = files_on_disk(table)
    assert oracle(delta_spark, table) == before_rows
    assert after_files[1] < before_files[1]
    print(
        f"\npurge of a table with 20 % deleted rows in one partition ({ROWS} rows each): "
        f"files {before_files[0]} -> {after_files[0]}, bytes {before_files[1]} -> "
        f"{after_files[1]} (estimated to free {health.purge_reclaimable_bytes}); purge "
        f"{took:.1f} s "
        f"(REORG rewrote {result.files_removed} file(s) into {result.files_added})"
    )
    again = purge(str(table))
    assert again.commit is None
    assert again.skipped_reason == "no partition has more than 0.05 rows deleted"


def test_purge_without_a_delta_writer_runs_here_and_delta_reads_the_same_rows(
    tmp_path: Path, delta_spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = tmp_path / "dv"
    name = table_sql(table)
    delta_spark.sql(
        f"CREATE TABLE {name} (id BIGINT) USING delta "
        "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')"
    ).collect()
    delta_spark.sql(f"INSERT INTO {name} SELECT id FROM range(0, 100, 1, 1)").collect()
    delta_spark.sql(f"DELETE FROM {name} WHERE id < 10").collect()
    before = oracle(delta_spark, table)
    monkeypatch.setenv(LOCAL_DELTA_ENV, "off")  # no JVM may start: the purge runs here
    with pytest.raises(ConfigError, match=r"deleted_ratio"):
        purge(str(table), deleted_ratio=1.5)
    # a threshold above the share: nothing due
    assert purge(str(table), deleted_ratio=0.2).skipped_reason is not None

    result = purge(str(table))

    assert result.writer == WRITER_NATIVE
    assert (result.files_removed, result.files_added) == (1, 1)
    assert oracle(delta_spark, table) == before  # the 10 deleted rows stay deleted
    assert all(f.deletion_vector is None for f in read_snapshot(str(table)).files)
    actions = commit_actions(open_storage(str(table)), int(result.commit or 0))
    (info,) = [a["commitInfo"] for a in actions if "commitInfo" in a]
    assert info["operation"] == "REORG"
    (removed,) = [a["remove"] for a in actions if "remove" in a]
    assert removed["deletionVector"]["cardinality"] == 10
    assert purge(str(table)).commit is None  # nothing left to purge


def test_purge_statement_scopes_partitions_and_quotes_values() -> None:
    from python_ops.delta.state.deletes import PartitionDeletes

    parts = [
        PartitionDeletes({"p": "it's", "d": None}, 10, 5, 1, 100, 50),
        PartitionDeletes({"p": "b", "d": "1"}, 10, 5, 1, 100, 50),
    ]
    assert purge_statement("delta.`/t`", parts) == (
        "REORG TABLE delta.`/t` WHERE (`p` = 'it\\'s' AND `d` IS NULL) OR (`p` = 'b' AND "
        "`d` = '1') APPLY (PURGE)"
    )
    # under column mapping the log's physical names become the logical ones Delta's SQL takes
    mapped = [PartitionDeletes({"col-1a": "x"}, 10, 5, 1, 100, 50)]
    assert purge_statement("t", mapped, {"col-1a": "my p"}) == (
        "REORG TABLE t WHERE (`my p` = 'x') APPLY (PURGE)"
    )
    unpartitioned = [PartitionDeletes({}, 10, 5, 1, 100, 50)]
    assert purge_statement("t", unpartitioned) == "REORG TABLE t APPLY (PURGE)"


def test_purge_of_a_column_mapped_table_names_partitions_as_delta_s_sql_does(
    tmp_path: Path, delta_spark: Any
) -> None:
    # the log keys partition values by physical name (col-<uuid>): before, the REORG's WHERE
    # named that and Delta refused it (DELTA_NON_PARTITION_COLUMN_REFERENCE), as a raw
    # AnalysisException through a caller's session
    table = tmp_path / "mapped"
    name = table_sql(table)
    delta_spark.sql(
        f"CREATE TABLE {name} (id BIGINT, `v x` STRING, p STRING) USING delta PARTITIONED BY (p) "
        "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true', "
        "'delta.columnMapping.mode' = 'name')"
    ).collect()
    for p in ("a", "b"):
        delta_spark.sql(
            f"INSERT INTO {name} SELECT id, concat('v', id), '{p}' FROM range(0, 1000, 1, 1)"
        ).collect()
    delta_spark.sql(f"DELETE FROM {name} WHERE p = 'a' AND id % 4 = 0").collect()
    assert "p" not in read_snapshot(str(table)).files[0].partition_values  # physical keys
    before = oracle(delta_spark, table)

    result = purge(str(table), spark=delta_spark)

    assert result.writer.startswith(WRITER_REORG)
    assert [p["partition_values"] for p in result.partitions_due] != []
    assert result.files_removed == 1
    assert not any(f.deletion_vector for f in read_snapshot(str(table)).files)
    assert oracle(delta_spark, table) == before


def test_a_statement_delta_fails_is_a_named_error_and_nothing_changed(
    tmp_path: Path, delta_spark: Any
) -> None:
    from python_ops.delta_sql import session_sql
    from python_ops.errors import EngineError

    table = tmp_path / "dv"
    dv_table(delta_spark, table)
    version = read_snapshot(str(table)).version
    sql = session_sql(delta_spark)
    with pytest.raises(EngineError, match=r"DELTA_NON_PARTITION_COLUMN_REFERENCE|id"):
        sql.run_with_settings(f"REORG TABLE {table_sql(table)} WHERE id = 1 APPLY (PURGE)", {})
    assert read_snapshot(str(table)).version == version


def test_a_purge_with_a_live_file_missing_refuses_before_writing(
    tmp_path: Path, delta_spark: Any
) -> None:
    from python_ops.errors import LiveFilesMissingError

    table = tmp_path / "dv-missing"
    name = table_sql(table)
    delta_spark.sql(
        f"CREATE TABLE {name} (id BIGINT, p STRING) USING delta PARTITIONED BY (p) "
        "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')"
    ).collect()
    for p in ("a", "b"):
        delta_spark.sql(f"INSERT INTO {name} SELECT id, '{p}' FROM range(0, 100, 1, 1)").collect()
    delta_spark.sql(f"DELETE FROM {name} WHERE id % 3 = 0").collect()
    snapshot = read_snapshot(str(table))
    (gone,) = [f for f in snapshot.files if f.partition_values == {"p": "b"}]
    (table / str(gone.relative_path)).unlink()
    on_disk = sorted(p for p in table.rglob("*") if p.is_file())

    with pytest.raises(LiveFilesMissingError, match=r"purge of .* refused: 1 live data file.*p=b/"):
        purge(str(table), audit=False)

    assert read_snapshot(str(table)).version == snapshot.version  # nothing committed
    assert sorted(p for p in table.rglob("*") if p.is_file()) == on_disk  # nothing written


def test_delta_s_reorg_answering_a_removal_it_did_not_commit_is_no_change(
    tmp_path: Path, delta_spark: Any
) -> None:
    # found by the campaign: a file written without statistics whose one row a DELETE marked
    # deleted (a deletion vector, as Delta cannot know the file holds no other row); Delta's
    # REORG ... APPLY (PURGE) answered numFilesRemoved = 1 and committed nothing. We said
    # "rewrote 1 file(s) ... history cannot be attributed" (exit 1) though nothing changed
    from python_ops.errors import EngineError

    table = tmp_path / "dv-one-row"
    name = table_sql(table)
    delta_spark.sql(
        f"CREATE TABLE {name} (id BIGINT, p STRING) USING delta PARTITIONED BY (p) "
        "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')"
    ).collect()
    delta_spark.sql(f"INSERT INTO {name} VALUES (0, 'x'), (1, 'y')").collect()
    delta_spark.conf.set("spark.databricks.delta.stats.collect", "false")
    try:
        delta_spark.sql(f"INSERT INTO {name} VALUES (3, 'x')").collect()
    finally:
        delta_spark.conf.unset("spark.databricks.delta.stats.collect")
    delta_spark.sql(f"DELETE FROM {name} WHERE id = 3").collect()
    snapshot = read_snapshot(str(table))
    assert any(f.deletion_vector for f in snapshot.files)
    before = oracle(delta_spark, table)

    # Delta's answer and its log disagree: said so, as nothing changed (exit 2)
    with pytest.raises(EngineError, match=r"answered it rewrote 1 file.*committed nothing"):
        purge(str(table), deleted_ratio=0.0, spark=delta_spark, audit=False)
    assert read_snapshot(str(table)).version == snapshot.version
    assert oracle(delta_spark, table) == before
    # here (no engine): the file whose rows are all deleted is removed, nothing added
    done = purge(str(table), deleted_ratio=0.0, audit=False)
    assert done.writer == WRITER_NATIVE
    assert done.files_removed >= 1
    assert not any(f.deletion_vector for f in read_snapshot(str(table)).files)
    assert oracle(delta_spark, table) == before
