"""The dbt surface of maintenance: config inheritance, the post-hook, run-operations, history."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from python_ops.history import HistoryStore
from tests.test_dbt_project import dbt, project  # noqa: F401  (the project fixture)

pytestmark = pytest.mark.slow


def history(warehouse: Path) -> list:
    return HistoryStore(str(warehouse / "shop" / "maintenance_history")).records()


def test_config_post_hook_run_operations_and_history(project: Path) -> None:  # noqa: F811
    warehouse = Path(project).parent / "warehouse"
    assert dbt(project, "build").success

    # inheritance, key by key: project -> folder -> model
    manifest = json.loads((project / "target" / "manifest.json").read_text())
    nodes = {n["name"]: n["config"] for n in manifest["nodes"].values() if "config" in n}
    fct = nodes["fct_orders"]
    assert fct["maintenance_on_error"] == "warn"  # project
    assert fct["maintenance_min_small_files"] == 4  # marts folder
    assert fct["maintenance_zorder_by"] == ["customer_id", "order_id"]  # model
    assert fct["maintenance_vacuum_retention_hours"] == 336  # model overrides nothing above
    assert nodes["landing_orders"]["maintenance_log_retention_days"] == 7  # landing folder
    assert nodes["dim_products"]["maintenance_enabled"] is False  # opted out

    # the post-hook runs what is due (Z-order of the changed partitions) and nothing else
    before = len(history(warehouse))
    assert dbt(
        project, "run", "--select", "landing_orders", "stg_orders", "fct_orders", batch=1
    ).success
    new = history(warehouse)[before:]
    assert [(r.model, r.op, r.status, r.dry_run) for r in new] == [
        ("fct_orders", "optimize", "succeeded", False)
    ]
    assert new[0].files_removed > 0
    assert new[0].version_after > new[0].version_before

    # on_error: warn -> recorded, model succeeds; fail -> the model fails
    sql = project / "models" / "marts" / "fct_orders.sql"
    original = sql.read_text()
    sql.write_text(original.replace("['customer_id', 'order_id']", "['nope']"))
    assert dbt(project, "run", "--select", "fct_orders", batch=2).success
    failed = [r for r in history(warehouse) if r.status == "failed"]
    assert failed
    assert "'nope' is not a column of the table" in failed[-1].error
    sql.write_text(
        original.replace("['customer_id', 'order_id']", "['nope']").replace(
            "maintenance_optimize_interval_hours=0,",
            "maintenance_optimize_interval_hours=0, maintenance_on_error='fail',",
        )
    )
    assert not dbt(project, "run", "--select", "fct_orders", batch=3).success
    sql.write_text(original)

    # run-operations: select / exclude / dry_run, recorded in the history
    before = len(history(warehouse))
    args = "{select: [marts], exclude: [dim_customers], dry_run: true}"
    assert dbt(project, "run-operation", "vacuum_all", "--args", args).success
    new = history(warehouse)[before:]
    assert sorted(r.model for r in new) == ["customer_order_summary", "fct_orders"]
    assert all(r.op == "vacuum" and r.dry_run for r in new)

    before = len(history(warehouse))
    args = "{select: ['tag:landing'], threads: 2}"
    assert dbt(project, "run-operation", "cleanup_logs_all", "--args", args).success
    new = history(warehouse)[before:]
    assert sorted(r.model for r in new) == ["landing_customers", "landing_orders"]

    # the time budget stops starting new tables
    before = len(history(warehouse))
    args = "{time_budget_s: 0.000001}"
    assert dbt(project, "run-operation", "optimize_all", "--args", args).success
    assert len(history(warehouse)) == before

    # bad arguments are refused with a clear message
    bad = dbt(project, "run-operation", "maintain_all", "--args", "{ops: [vacum]}")
    assert not bad.success
    assert bad.result.results[0].status == "error"  # message: test_maintenance_config.py

    assert dbt(project, "run-operation", "maintenance_report").success
