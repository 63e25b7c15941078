"""Tables another engine wrote: a file is what Delta says it is (trust round four, items 1-2).

Delta on Spark writes add paths with non-ASCII partition values raw (``p=café/part-…``);
delta-rs writes its removes percent-encoded. Delta keys file actions by the URI of the path
string, so those are two files to Delta. Each test here failed before: OPTIMIZE's removes (through
delta-rs) cancelled nothing and Delta read the rows twice; VACUUM cancelled an add by a remove
spelled differently and deleted a file Delta still reads.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from deltalake import DeltaTable

from python_ops.delta.log.commits import commit_actions, commit_versions
from python_ops.delta.state.snapshot import read_snapshot
from python_ops.ops.optimize.execute import optimize
from python_ops.ops.stats.run import compute_stats
from python_ops.ops.vacuum.run import vacuum
from python_ops.storage import open_storage
from tests.helpers.delta_reads import oracle, table_sql
from tests.helpers.mixed_writers import delta_vacuum_selection

VALUES = ("café", "日本", "cafe\u0301", "a%b", "x+y", "🙂")


def spark_written(spark: Any, table: Path, *, batches: int = 3) -> None:
    """A partitioned table Delta on Spark wrote in ``batches`` appends (raw non-ASCII paths)."""
    name = table_sql(table)
    spark.sql(f"CREATE TABLE {name} (id BIGINT, p STRING) USING delta PARTITIONED BY (p)")
    for b in range(batches):
        rows = ", ".join(f"({b * 100 + i}, '{v}')" for i, v in enumerate(VALUES))
        spark.sql(f"INSERT INTO {name} VALUES {rows}")


def log_adds(table: Path) -> set[str]:
    storage = open_storage(str(table))
    return {
        a["add"]["path"]
        for v in commit_versions(storage)
        for a in commit_actions(storage, v)
        if "add" in a
    }


@pytest.mark.parametrize("zorder", [False, True], ids=["compaction", "zorder"])
def test_optimize_removes_each_file_as_the_log_spells_it(
    tmp_path: Path, delta_spark: Any, zorder: bool
) -> None:
    table = tmp_path / "t"
    spark_written(delta_spark, table)
    before = oracle(delta_spark, table)
    assert any("café" in p for p in log_adds(table)), "Delta writes the value raw"
    adds_before = {f.path for f in read_snapshot(str(table)).files}

    result = optimize(
        str(table), zorder_by=["id"] if zorder else None, full=zorder, min_small_files=2
    )

    assert result.files_removed == len(adds_before)
    assert result.commits
    storage = open_storage(str(table))
    removed = {
        a["remove"]["path"]
        for v in result.commits
        for a in commit_actions(storage, v)
        if "remove" in a
    }
    assert removed == adds_before  # byte for byte, as the log spells each add
    assert oracle(delta_spark, table) == before  # Delta reads every row once
    assert DeltaTable(str(table)).to_pyarrow_table().num_rows == before[0]


@pytest.mark.parametrize("mode", ["full", "lite"])
def test_vacuum_keeps_a_file_whose_remove_is_spelled_otherwise(
    tmp_path: Path, delta_spark: Any, mode: str
) -> None:
    table = tmp_path / "t"
    spark_written(delta_spark, table, batches=1)
    (live,) = [f for f in read_snapshot(str(table)).files if f.partition_values["p"] == "café"]
    assert "café" in live.path
    encoded = live.path.replace("café", "caf%C3%A9")
    # the remove delta-rs writes for that file: the same physical file, another URI to Delta
    commit = [
        {"commitInfo": {"timestamp": 1, "operation": "DELETE"}},
        {
            "remove": {
                "path": encoded,
                "deletionTimestamp": 1,
                "dataChange": True,
                "partitionValues": {"p": "café"},
                "size": live.size_bytes,
            }
        },
    ]
    log = table / "_delta_log" / f"{read_snapshot(str(table)).version + 1:020d}.json"
    log.write_text("".join(json.dumps(a, ensure_ascii=False) + "\n" for a in commit))
    before = oracle(delta_spark, table)
    assert before[0] == len(VALUES)  # Delta still reads the café row

    snapshot = read_snapshot(str(table))
    assert live.path in {f.path for f in snapshot.files}
    if mode == "lite":  # measured: Delta 4.4's own LITE selects this file, which it still reads
        assert live.relative_path in delta_lite_selection(delta_spark, table)
    result = vacuum(
        str(table),
        retention_hours=0,
        allow_short_retention=True,
        dry_run=False,
        audit=False,
        mode=mode,
    )

    assert live.relative_path not in {f.path for f in result.paths}
    assert (table / str(live.relative_path)).exists()
    assert oracle(delta_spark, table) == before


def delta_lite_selection(spark: Any, table: Path) -> set[str]:
    """Delta's ``VACUUM ... LITE RETAIN 0 HOURS DRY RUN``, relative paths (check off for it)."""
    check = "spark.databricks.delta.retentionDurationCheck.enabled"
    spark.conf.set(check, "false")
    try:
        return delta_vacuum_selection(spark, table, lite=True)
    finally:
        spark.conf.unset(check)


def test_stats_rewrites_each_add_as_the_log_spells_it(tmp_path: Path, delta_spark: Any) -> None:
    table = tmp_path / "t"
    name = table_sql(table)
    delta_spark.sql(
        f"CREATE TABLE {name} (id BIGINT, p STRING) USING delta PARTITIONED BY (p) "
        "TBLPROPERTIES ('delta.dataSkippingNumIndexedCols' = '0')"
    )
    delta_spark.sql(f"INSERT INTO {name} VALUES (1, 'café'), (2, '日本')")
    before = oracle(delta_spark, table)
    paths = {f.path for f in read_snapshot(str(table)).files}

    compute_stats(str(table), columns=["id"], audit=False)

    assert {f.path for f in read_snapshot(str(table)).files} == paths
    assert oracle(delta_spark, table) == before
