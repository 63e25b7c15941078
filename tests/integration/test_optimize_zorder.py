"""Z-order: our clustering committed through delta-rs, on tables the embedded engine writes."""

from __future__ import annotations

import json
import random
from pathlib import Path

from deltalake import DeltaTable

from python_ops.delta.state.snapshot import read_snapshot
from python_ops.ops.optimize.execute import WRITER_ZORDER, optimize
from python_ops.ops.optimize.planning.plan import plan_optimize
from tests.helpers.optimize import admitted_files, events_table
from tests.helpers.vacuum import content, engine_content


def test_zorder_clusters_every_column_and_keeps_content(tmp_path: Path, sail_spark) -> None:
    table = tmp_path / "ev"
    name = events_table(sail_spark, table, batches=8)
    before = content(table)
    files_before = len(read_snapshot(str(table)).files)
    rng = random.Random(7)
    customers = [rng.randrange(100_000) for _ in range(50)]
    times = [
        f"2024-01-0{rng.randrange(1, 3)}T{rng.randrange(24):02d}:00:00.000Z" for _ in range(50)
    ]
    before_c = admitted_files(table, "customer_id", customers)
    before_t = admitted_files(table, "event_ts", times)
    size = sum(f.size_bytes for f in read_snapshot(str(table)).files)

    result = optimize(
        str(table), zorder_by=["customer_id", "event_ts"], target_size_bytes=size // 32
    )

    assert result.writer == WRITER_ZORDER
    assert result.files_removed == files_before == 16
    files_after = len(read_snapshot(str(table)).files)
    assert files_after == result.files_added >= 30
    assert content(table) == before
    assert engine_content(sail_spark, table)[0] == before[0]
    assert sail_spark.sql(f"select count(*) c from {name}").collect()[0]["c"] == before[0]
    after_c = admitted_files(table, "customer_id", customers)
    after_t = admitted_files(table, "event_ts", times)
    # every Z-order column skips: well under the file count, within 3*sqrt(F) of the ideal
    # random small files: every file admits every customer, a day's files every time of day
    assert before_c == files_before
    assert before_t >= files_before / 2 - 1
    assert after_c <= 3 * files_after**0.5, (after_c, files_after)
    assert after_t <= 3 * files_after**0.5, (after_t, files_after)
    # the commit: dataChange=false everywhere, parameters recorded, marked as OPTIMIZE
    assert len(result.commits) == 2  # one per partition
    for v in result.commits:
        lines = (table / "_delta_log" / f"{v:020d}.json").read_text().splitlines()
        actions = [json.loads(line) for line in lines]
        info = next(a["commitInfo"] for a in actions if "commitInfo" in a)
        assert info["python_ops.operation"] == "OPTIMIZE"
        assert json.loads(info["operationParameters"]["zOrderBy"]) == ["customer_id", "event_ts"]
        for a in actions:
            for kind in ("add", "remove"):
                if kind in a:
                    assert a[kind]["dataChange"] is False
    history = DeltaTable(str(table)).history(1)[0]
    assert history["operationParameters"]["zOrderBy"] == '["customer_id", "event_ts"]'


def test_zorder_is_incremental_and_sees_new_data(tmp_path: Path, sail_spark) -> None:
    table = tmp_path / "ev"
    name = events_table(sail_spark, table, batches=3)
    optimize(str(table), zorder_by=["customer_id", "event_ts"])
    again = plan_optimize(str(table), zorder_by=["customer_id", "event_ts"])
    assert again.scope == "incremental"
    assert again.work == ()  # nothing changed since our Z-order commit
    sail_spark.sql(
        f"insert into {name} values (1, timestamp'2024-01-02 10:00:00', 1.0, 'DE', '2024-01-02')"
    )
    after_insert = plan_optimize(str(table), zorder_by=["customer_id", "event_ts"])
    assert [p.partition_values for p in after_insert.work] == [{"day": "2024-01-02"}]
    before = content(table)
    optimize(str(table), zorder_by=["customer_id", "event_ts"])
    assert content(table) == before
    assert (
        len(
            [
                f
                for f in read_snapshot(str(table)).files
                if f.partition_values["day"] == "2024-01-02"
            ]
        )
        == 1
    )


def test_a_one_file_table_has_nothing_to_z_order(tmp_path: Path, sail_spark) -> None:
    table = tmp_path / "one"
    sail_spark.range(0, 100).repartition(1).write.format("delta").save(str(table))
    plan = plan_optimize(str(table), zorder_by=["id"])
    assert plan.work == ()
    assert plan.partitions[0].skipped_reason == (
        "one file: Z-ordering it changes no file's statistics"
    )
    result = optimize(str(table), zorder_by=["id"], dry_run=True)
    assert result.plan["files_to_rewrite"] == 0
    full = optimize(str(table), zorder_by=["id"], full=True, dry_run=True)
    assert full.plan["files_to_rewrite"] == 1  # asked for explicitly: Delta sorts it within
