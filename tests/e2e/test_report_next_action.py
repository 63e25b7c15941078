"""What a dbt user sees of maintenance on the example project (issue 18).

Untracked files make VACUUM due and the reason column says what was done; Z-order's default
cadence does not rewrite on every build; a retention the package recorded follows the model's
config; ``maintenance_report`` has scaled sizes, a next-action column and a labelled total.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

from python_ops.delta.state.snapshot import read_snapshot
from python_ops.maintenance.records.history import HistoryRecord, HistoryStore
from tests.helpers.dbt_runs import Dbt

pytestmark = pytest.mark.slow

CHANGED_ORDERS = ("run", "--select", "landing_orders", "stg_orders", "fct_orders")
RETENTION = "delta.deletedFileRetentionDuration"


def _warehouse(project: Path) -> Path:
    return project.parent / "warehouse" / "shop"


def _history(project: Path) -> list[HistoryRecord]:
    return HistoryStore(str(_warehouse(project) / "maintenance_history")).records()


def _failed_job_files(table: Path, *, count: int, size: int, age_days: float) -> list[Path]:
    when = time.time() - age_days * 86_400
    paths = []
    for i in range(count):
        path = table / f"part-{i:05d}-failed-job.snappy.parquet"
        path.write_bytes(os.urandom(size))
        os.utime(path, (when, when))
        paths.append(path)
    return paths


def _set_retention(project: Path, text: str) -> None:
    sql = project / "models" / "marts" / "fct_orders.sql"
    sql.write_text(re.sub(r"maintenance_vacuum_retention_hours=\d+,", text, sql.read_text()))


def test_untracked_files_are_due_and_the_report_says_what_comes_next(
    built_project: Path, dbt: Dbt, capfd: pytest.CaptureFixture[str]
) -> None:
    table = _warehouse(built_project) / "fct_orders"
    junk = _failed_job_files(table, count=6, size=1_000_000, age_days=30)
    capfd.readouterr()
    assert dbt(built_project, "run-operation", "maintenance_report").success
    report = capfd.readouterr().out.splitlines()
    head = next(line for line in report if line.startswith("model "))
    assert "next action" in head
    assert "MB" not in head  # units are in the cells
    fct = next(line for line in report if line.startswith("fct_orders "))
    assert "6.00 MB" in fct  # reclaimable, in scaled units
    assert "vacuum now" in fct
    total = next(line for line in report if line.startswith("total ("))
    assert "models)" in total
    assert "with work due now" in total

    result = dbt(
        built_project,
        "run-operation",
        "maintain_all",
        "--args",
        "{select: [fct_orders], ops: [vacuum]}",
    )
    assert result.success
    out = capfd.readouterr().out
    # the reason column: what was done, then why it was due (untracked files, not tombstones)
    assert (
        "deleted 6 files (6.00 MB); 6 untracked file(s) (6.00 MB) older than the 336 h retention"
    ) in out
    assert not any(p.exists() for p in junk)
    (vacuum,) = [r for r in _history(built_project) if r.op == "vacuum"]
    assert (vacuum.files_removed, vacuum.bytes_removed) == (6, 6_000_000)

    assert dbt(built_project, "run-operation", "maintenance_report").success
    fct = next(line for line in capfd.readouterr().out.splitlines() if line.startswith("fct_"))
    assert "vacuum now" not in fct


def test_zorder_does_not_rewrite_on_every_build_by_default(built_project: Path, dbt: Dbt) -> None:
    for batch in range(1, 5):  # with the first build: 5 builds, each changing partitions
        assert dbt(built_project, *CHANGED_ORDERS, batch=batch).success
    zorders = [
        r
        for r in _history(built_project)
        if r.model == "fct_orders" and r.op == "optimize" and not r.dry_run
    ]
    # the first build writes one file per partition (nothing to gain); the second Z-orders
    # what it changed; the default 24 h interval holds the next three back
    assert len(zorders) == 1
    assert zorders[0].status == "succeeded"
    assert zorders[0].files_removed > 1


def test_a_retention_the_package_recorded_follows_the_config(built_project: Path, dbt: Dbt) -> None:
    table = _warehouse(built_project) / "fct_orders"
    args = ("run-operation", "cleanup_logs_all", "--args", "{select: [fct_orders]}")
    assert dbt(built_project, *args).success
    assert read_snapshot(str(table)).metadata.configuration[RETENTION] == "interval 336 hours"

    _set_retention(built_project, "maintenance_vacuum_retention_hours=200,")
    before = len(_history(built_project))
    assert dbt(built_project, *CHANGED_ORDERS, batch=1).success
    # the post-hook decided with 200 h: no op failed on the package's own 336 h
    assert [r for r in _history(built_project)[before:] if r.status == "failed"] == []
    assert dbt(built_project, *args).success
    assert read_snapshot(str(table)).metadata.configuration[RETENTION] == "interval 200 hours"

    _set_retention(built_project, "")
    assert dbt(built_project, *args, batch=1).success
    assert read_snapshot(str(table)).metadata.configuration[RETENTION] == "interval 168 hours"
