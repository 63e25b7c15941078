"""OPTIMIZE against a second writer process committing between our plan and our commit."""

from __future__ import annotations

from pathlib import Path

import pytest

from python_ops.delta.state.snapshot import read_snapshot
from python_ops.errors import OptimizeConflictError
from python_ops.ops.optimize.execute import execute, optimize
from python_ops.ops.optimize.planning.plan import plan_optimize
from python_ops.ops.optimize.writers import native
from tests.helpers.optimize import events_table, run_writer, small_files_table
from tests.helpers.vacuum import content

# Compact any partition with two small files, as Delta's OPTIMIZE does (the default is 10).
FEW = 2

ZORDER = ["customer_id", "event_ts"]


@pytest.mark.parametrize("zorder", [False, True], ids=["compaction", "zorder"])
def test_concurrent_append_survives(tmp_path: Path, sail_spark, zorder: bool) -> None:
    table = tmp_path / "t"
    if zorder:
        events_table(sail_spark, table, batches=3)
    else:
        small_files_table(sail_spark, table, batches=3)
    plan = plan_optimize(str(table), zorder_by=ZORDER if zorder else None, min_small_files=FEW)
    row = (
        "{'customer_id': [7], 'event_ts': pa.array([0], pa.timestamp('us', 'UTC')), "
        "'amount': [1.0], 'country': ['DE'], 'day': ['2024-01-01']}"
        if zorder
        else "{'id': [999999], 'amount': [1.0], 'day': ['2024-01-01']}"
    )
    run_writer(
        table,
        f"schema = pa.schema(dt.schema().to_arrow())\n"
        f"write_deltalake(dt, pa.Table.from_pydict({row}, schema), mode='append')",
    )
    appended = {f.relative_path for f in read_snapshot(str(table)).files} - {
        p for part in plan.work for b in part.bins for p in b.files
    }
    before = content(table)

    result = execute(plan)

    assert result.failed_partitions == ()
    live = {f.relative_path for f in read_snapshot(str(table)).files}
    assert appended <= live  # the concurrent append is neither lost nor compacted away
    assert content(table) == before


@pytest.mark.parametrize("zorder", [False, True], ids=["compaction", "zorder"])
def test_concurrent_delete_fails_cleanly_when_retries_run_out(
    tmp_path: Path, sail_spark, zorder: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(native, "REPLANS", 0)  # no second plan: the conflict stands
    table = tmp_path / "t"
    if zorder:
        events_table(sail_spark, table, batches=3)
        predicate = "day = '2024-01-01' AND amount < 50"
    else:
        small_files_table(sail_spark, table, batches=3)
        predicate = "day = '2024-01-01' AND id % 2 = 0"
    plan = plan_optimize(str(table), zorder_by=ZORDER if zorder else None, min_small_files=FEW)
    run_writer(table, f"dt.delete({predicate!r})")
    after_delete = content(table)
    before_files = {str(p.relative_to(table)) for p in table.rglob("*.parquet")}

    with pytest.raises(OptimizeConflictError, match=r"day=2024-01-01\) was not committed") as err:
        execute(plan)

    result = err.value.result
    assert result.failed_partitions[0]["partition_values"] == {"day": "2024-01-01"}
    assert result.failed_partitions[0]["inputs_still_live"] is False
    assert content(table) == after_delete  # deleted rows stay deleted, nothing lost
    live = {f.relative_path for f in read_snapshot(str(table)).files}
    # the failed attempt's files were deleted: nothing it wrote is left behind
    assert result.untracked_files == ()
    on_disk = {str(p.relative_to(table)) for p in table.rglob("*.parquet")}
    assert on_disk - {str(p) for p in live} == before_files - live
    # the other partitions were committed all the same; a rerun plans on the new version
    assert result.partitions_optimized == len(plan.work) - 1
    again = optimize(str(table), zorder_by=ZORDER if zorder else None, min_small_files=FEW)
    assert again.failed_partitions == ()
    assert content(table) == after_delete


def test_conflict_loses_one_partition_not_the_run(
    tmp_path: Path, sail_spark, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the soak (bench/optimize_soak_bench.py): a run stopped at its first conflicted partition
    # and compacted nothing after it; the other partitions' inputs are untouched, so they commit
    monkeypatch.setattr(native, "REPLANS", 0)  # no second plan: the conflict stands
    table = tmp_path / "t"
    small_files_table(sail_spark, table, batches=3)
    plan = plan_optimize(str(table), min_small_files=FEW)
    first = plan.work[0].partition_values  # the partition rewritten first
    assert len(plan.work) == 3
    run_writer(table, f"dt.delete(\"day = '{first['day']}' AND id % 2 = 0\")")
    after_delete = content(table)
    live = read_snapshot(str(table)).files
    conflicted = {f.relative_path for f in live if f.partition_values == first}

    with pytest.raises(OptimizeConflictError, match=r"Partitions committed: 2 of 3") as err:
        execute(plan)

    result = err.value.result
    assert [f["partition_values"] for f in result.failed_partitions] == [first]
    assert result.partitions_optimized == 2
    assert len(result.commits) == 2
    assert result.untracked_files == ()
    files = read_snapshot(str(table)).files
    others = [f.partition_values["day"] for f in files if f.partition_values != first]
    assert sorted(others) == sorted(set(others))  # compacted: one file each
    assert len(others) == 2
    # the conflicted partition is exactly as the delete left it
    assert {f.relative_path for f in files if f.partition_values == first} == conflicted
    assert content(table) == after_delete  # deleted rows stay deleted, nothing lost


@pytest.mark.parametrize("zorder", [False, True], ids=["compaction", "zorder"])
def test_a_conflicted_partition_is_planned_again_and_committed(
    tmp_path: Path, sail_spark, zorder: bool
) -> None:
    # issue 64 item 4: a concurrent delete removed the partition's inputs; it is planned again
    # on the new snapshot (the delete's files now) and committed: nothing resurrected
    table = tmp_path / "t"
    if zorder:
        events_table(sail_spark, table, batches=3)
        predicate = "day = '2024-01-01' AND amount < 50"
    else:
        small_files_table(sail_spark, table, batches=3)
        predicate = "day = '2024-01-01' AND id % 2 = 0"
    plan = plan_optimize(str(table), zorder_by=ZORDER if zorder else None, min_small_files=FEW)
    run_writer(table, f"dt.delete({predicate!r})")
    after_delete = content(table)
    deleted_version = read_snapshot(str(table)).version

    result = execute(plan)

    assert result.failed_partitions == ()
    assert min(result.commits) > deleted_version
    assert content(table) == after_delete  # deleted rows stay deleted, nothing lost
    # the conflicted partition was committed on its second plan, or the delete left nothing
    # there worth rewriting (delta-rs wrote its survivors into one file)
    live = read_snapshot(str(table)).files
    left = [f for f in live if f.partition_values == {"day": "2024-01-01"}]
    assert result.partitions_optimized == len(plan.work) or len(left) < FEW
    assert result.partitions_optimized >= len(plan.work) - 1
    if zorder:  # a Z-order rewrites the whole partition again: its second plan committed
        assert result.partitions_optimized == len(plan.work)


def test_conflict_elsewhere_is_retried(tmp_path: Path, sail_spark) -> None:
    table = tmp_path / "t"
    small_files_table(sail_spark, table, batches=3)
    plan = plan_optimize(str(table), where="day = '2024-01-01'", min_small_files=FEW)
    run_writer(table, """dt.delete("day = '2024-01-03' AND id % 2 = 0")""")
    after_delete = content(table)
    result = execute(plan)
    # delta-rs's checker fails the commit (a delete anywhere conflicts with its read of the
    # table); every input file is still live, so SPEC §3.7 retries and the retry commits
    assert result.retries == 1
    assert result.failed_partitions == ()
    assert result.partitions_optimized == 1
    assert content(table) == after_delete


def test_null_partition_is_compacted_alone(tmp_path: Path, sail_spark) -> None:
    table = tmp_path / "t"
    name = small_files_table(sail_spark, table, batches=2)
    for i in range(3):
        sail_spark.sql(f"insert into {name} values ({50_000 + i}, 1.0, null)")
    before = content(table)
    result = optimize(str(table), min_small_files=FEW)
    per_partition = {}
    for f in read_snapshot(str(table)).files:
        key = f.partition_values["day"]
        per_partition[key] = per_partition.get(key, 0) + 1
    assert per_partition == {None: 1, "2024-01-01": 1, "2024-01-02": 1, "2024-01-03": 1}
    assert result.partitions_optimized == 4
    assert content(table) == before
