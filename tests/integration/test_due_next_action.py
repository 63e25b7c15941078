"""``maintenance_report``'s rows on real tables: the next action, sizes, the labelled total."""

from __future__ import annotations

import datetime as dt
import os
import time
from pathlib import Path
from typing import Any

import pytest

from python_ops.maintenance.configuration.config import parse_config
from python_ops.maintenance.records.history import HistoryRecord, HistoryStore
from python_ops.maintenance.running import report
from python_ops.maintenance.running.report import render_report, report_rows
from python_ops.maintenance.selection.targets import ModelTarget
from python_ops.ops import health
from tests.helpers.optimize import events_table


def _target(path: Path, **config: object) -> ModelTarget:
    return ModelTarget("events", str(path), parse_config("events", config))


def _ran(op: str, hours_ago: float) -> HistoryRecord:
    return HistoryRecord(
        invocation_id="t",
        model="events",
        table_location="",
        op=op,
        parameters="{}",
        dry_run=False,
        status="succeeded",
        error=None,
        started_at=dt.datetime.now(dt.UTC) - dt.timedelta(hours=hours_ago),
        duration_s=0.1,
    )


def test_next_action_waits_for_intervals_and_the_retention(tmp_path: Path, sail_spark) -> None:
    table = tmp_path / "events"
    name = events_table(sail_spark, table, batches=3)
    sail_spark.sql(f"insert overwrite {name} select * from {name}")  # removes every file: 6 tombs
    # then an append: the last write left earlier files live, so the overwrite's files are no
    # longer the whole table and the Z-order interval holds (a write that replaced every file
    # of a Z-ordered table is re-clustered whatever it: ``due_rules.rebuilt_layout``)
    sail_spark.sql(f"insert into {name} select * from {name} limit 1")
    history = HistoryStore(str(tmp_path / "history"))
    history.append([_ran("optimize", 4)])  # Z-order ran 4 h ago: 20 h to go of 24
    target = _target(table, maintenance_zorder_by=["customer_id"])

    (row,) = report_rows([target], spark=None, history=history)
    assert row["tombstones"] == 6  # removed just now: not past the 168 h retention
    assert row["reclaimable_bytes"] == 0
    assert row["next"] == "optimize in 20 h"
    # without the Z-order wait, the next thing is the removed files reaching the retention
    (row,) = report_rows([_target(table)], spark=None, history=history)
    assert row["next"] == "vacuum in 7 d"

    when = time.time() - 30 * 86_400
    junk = table / "day=2024-01-01" / "part-00000-failed-job.snappy.parquet"
    junk.write_bytes(os.urandom(2_500_000))
    os.utime(junk, (when, when))
    rows = report_rows([target], spark=None, history=history)
    assert rows[0]["next"] == "vacuum now"
    lines = render_report(rows).splitlines()
    assert "2.50 MB" in lines[1]  # reclaimable, in scaled units
    assert lines[-1].startswith("total (1 model)")
    assert lines[-1].rstrip().endswith("1 with work due now")


def test_a_disabled_model_and_a_bad_setting_keep_their_rows(tmp_path: Path, sail_spark) -> None:
    table = tmp_path / "events"
    events_table(sail_spark, table, batches=2)
    off = ModelTarget("off", str(table), parse_config("off", {"maintenance_enabled": False}))
    # below the table's 168 h minimum without the override: VACUUM refuses it
    short = ModelTarget(
        "short", str(table), parse_config("short", {"maintenance_vacuum_retention_hours": 1})
    )

    rows = report_rows([off, short], spark=None, history=None)

    assert rows[0]["next"] == "disabled (maintenance_enabled)"
    assert rows[1]["files"] == rows[0]["files"] > 0  # the health columns stay
    assert rows[1]["reclaimable_bytes"] is None
    assert rows[1]["next"] == "fix config (vacuum)"
    assert "maintenance_vacuum_retention_hours" in rows[1]["config_error"]
    text = render_report(rows)
    assert "total (2 models)" in text
    assert "short                      fix config: " in text
    assert "error:" not in text


def test_each_table_s_snapshot_is_read_once(
    tmp_path: Path, sail_spark, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Health, the VACUUM dry run and the next action share one read of the table's log."""
    tables = [tmp_path / "events_a", tmp_path / "events_b"]
    for table in tables:
        events_table(sail_spark, table, batches=2)
    reads: list[str] = []

    def counted(module: Any) -> None:
        real = module.read_snapshot

        def read(table: Any, *args: Any, **kwargs: Any) -> Any:
            reads.append(str(table))
            return real(table, *args, **kwargs)

        monkeypatch.setattr(module, "read_snapshot", read)

    for module in (report, health):  # the report's readers (VACUUM and due take its snapshot)
        counted(module)
    rows = report_rows([_target(t) for t in tables], spark=None, history=None)

    assert [r["files"] for r in rows] == [health.table_health(str(t)).num_files for t in tables]
    reads.clear()  # (the line above read them again)
    rows = report_rows([_target(t) for t in tables], spark=None, history=None)
    assert sorted(reads) == sorted(str(t) for t in tables)
