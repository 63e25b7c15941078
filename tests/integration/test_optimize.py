"""OPTIMIZE planning and compaction on tables the embedded engine writes (delta-rs commits)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from deltalake import DeltaTable

from python_ops.delta.state.snapshot import read_snapshot
from python_ops.errors import ConfigError
from python_ops.maintenance.configuration.op_keys import as_model_setting
from python_ops.ops.optimize.execute import optimize
from python_ops.ops.optimize.planning.plan import plan_optimize
from tests.helpers.optimize import small_files_table
from tests.helpers.vacuum import content, engine_content

# Compact any partition with two small files, as Delta's OPTIMIZE does (the default is 10).
FEW = 2


def test_compaction_follows_the_plan_and_keeps_content(tmp_path: Path, sail_spark) -> None:
    table = tmp_path / "t"
    small_files_table(sail_spark, table)
    before = content(table)
    plan = plan_optimize(str(table), min_small_files=FEW)
    assert [len(p.bins) for p in plan.work] == [1, 1, 1]
    assert plan.files_to_rewrite == 18
    result = optimize(str(table), min_small_files=FEW)
    assert result.files_removed == 18
    assert result.files_added == 3  # one bin per partition, as planned
    assert len(DeltaTable(str(table)).file_uris()) == 3
    assert content(table) == before
    assert engine_content(sail_spark, table)[0] == before[0]
    history = DeltaTable(str(table)).history(len(result.commits))
    assert {h["operation"] for h in history} == {"OPTIMIZE"}
    assert all("targetSize" in h["operationParameters"] for h in history)
    # OPTIMIZE commits do not change data: every add and remove has dataChange=false
    log = table / "_delta_log"
    for version in result.commits:
        for line in (log / f"{version:020d}.json").read_text().splitlines():
            action = json.loads(line)
            for kind in ("add", "remove"):
                if kind in action:
                    assert action[kind]["dataChange"] is False


def test_second_run_is_a_no_op(tmp_path: Path, sail_spark) -> None:
    table = tmp_path / "t"
    small_files_table(sail_spark, table, batches=3)
    optimize(str(table), min_small_files=FEW)
    version = DeltaTable(str(table)).version()
    again = optimize(str(table), min_small_files=FEW)
    assert again.commits == ()
    assert again.skipped_reason == "nothing worth rewriting in scope"
    assert DeltaTable(str(table)).version() == version


def test_incremental_scope_only_changed_partitions(tmp_path: Path, sail_spark) -> None:
    table = tmp_path / "t"
    name = small_files_table(sail_spark, table, batches=3)
    optimize(str(table), min_small_files=FEW)
    for i in range(3):
        sail_spark.sql(f"insert into {name} values ({10_000 + i}, 1.0, '2024-01-02')")
    plan = plan_optimize(str(table), min_small_files=FEW)
    assert plan.scope == "incremental"
    assert [p.partition_values for p in plan.work] == [{"day": "2024-01-02"}]
    full = plan_optimize(str(table), full=True, min_small_files=FEW)
    assert full.scope == "full"
    assert [p.partition_values for p in full.work] == [{"day": "2024-01-02"}]  # others: 1 file


def test_thresholds_mean_no_commit(tmp_path: Path, sail_spark) -> None:
    table = tmp_path / "t"
    small_files_table(sail_spark, table, batches=3)
    version = DeltaTable(str(table)).version()
    result = optimize(str(table), min_small_files=4)  # 3 small files per partition
    assert result.commits == ()
    assert DeltaTable(str(table)).version() == version
    tiny_target = optimize(
        str(table), target_size_bytes=1, min_small_files=FEW
    )  # no file is "small"
    assert tiny_target.commits == ()


def test_where_limits_partitions_and_refuses_other_columns(tmp_path: Path, sail_spark) -> None:
    table = tmp_path / "t"
    small_files_table(sail_spark, table, batches=2)
    result = optimize(str(table), where="day >= '2024-01-02'", min_small_files=FEW)
    assert result.partitions_optimized == 2
    files = read_snapshot(str(table)).files
    days = ("2024-01-01", "2024-01-02", "2024-01-03")
    per_day = {d: sum(1 for f in files if f.partition_values["day"] == d) for d in days}
    assert per_day == {"2024-01-01": 2, "2024-01-02": 1, "2024-01-03": 1}
    with pytest.raises(
        ConfigError,
        match=r"'amount' is a non-partition column; only partition columns may be used: day",
    ):
        optimize(str(table), where="amount > 3", min_small_files=FEW)


def test_zorder_validation(tmp_path: Path, sail_spark) -> None:
    table = tmp_path / "t"
    small_files_table(sail_spark, table, batches=1)
    with pytest.raises(
        ConfigError,
        match=r"^setting 'zorder_by' .*'day' is a partition column.*choose from: id, "
        "amount",
    ):
        optimize(str(table), zorder_by=["day"], min_small_files=FEW)
    # for a model, through the maintenance layer: the model and its key
    with (
        pytest.raises(
            ConfigError,
            match=r"^model 'fct': setting 'maintenance_zorder_by' .*'day' is a partition column",
        ),
        as_model_setting("fct", "optimize"),
    ):
        optimize(str(table), zorder_by=["day"], min_small_files=FEW)
    with pytest.raises(ConfigError, match=r"'nope' is not a column of the table"):
        optimize(str(table), zorder_by=["nope"], min_small_files=FEW)
    DeltaTable(str(table)).alter.set_table_properties({"delta.dataSkippingNumIndexedCols": "1"})
    with pytest.raises(ConfigError, match=r"'amount' has no statistics"):
        optimize(str(table), zorder_by=["amount"], min_small_files=FEW)


def test_unpartitioned_table_and_cli_plan(tmp_path: Path, sail_spark) -> None:
    table = tmp_path / "t"
    small_files_table(sail_spark, table, batches=2, partitioned=False)
    before = content(table)
    cli = [sys.executable, "-m", "python_ops", "optimize", str(table), "--min-small-files", "2"]
    plan = subprocess.run(
        [*cli, "--dry-run"], capture_output=True, text=True, timeout=120, check=True
    )
    assert "total: 1 partition(s), 1 bin(s), 6 files" in plan.stdout
    done = subprocess.run([*cli, "--json"], capture_output=True, text=True, timeout=120, check=True)
    report = json.loads(done.stdout)
    assert (report["files_removed"], report["files_added"]) == (6, 1)
    assert content(table) == before
