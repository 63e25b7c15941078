"""The dbt surface of maintenance: config inheritance, the post-hook, run-operations, history."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from python_ops.maintenance.history import HistoryRecord, HistoryStore
from tests.test_dbt_project import dbt, project  # noqa: F401  (the project fixture)

pytestmark = pytest.mark.slow


def history(warehouse: Path) -> list:
    return HistoryStore(str(warehouse / "shop" / "maintenance_history")).records()


def log_actions(table: Path, first: int, last: int) -> tuple[int, int, int, int]:
    """(removes, removed bytes, adds, added bytes) in commits first..last of a Delta log."""
    removes = removed = adds = added = 0
    for version in range(first, last + 1):
        for line in (table / "_delta_log" / f"{version:020d}.json").read_text().splitlines():
            action = json.loads(line)
            if "remove" in action:
                removes, removed = removes + 1, removed + action["remove"]["size"]
            if "add" in action:
                adds, added = adds + 1, added + action["add"]["size"]
    return removes, removed, adds, added


def matches_disk(record: HistoryRecord) -> bool:
    """An OPTIMIZE record's counts equal the actions of the commits it made."""
    assert record.version_before is not None
    assert record.version_after is not None
    actions = log_actions(
        Path(record.table_location), record.version_before + 1, record.version_after
    )
    counts = (record.files_removed, record.bytes_removed, record.files_added, record.bytes_added)
    return actions == counts


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
    assert matches_disk(new[0])  # the history row is what the Delta log says happened

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

    # analysts query the history through its dbt source
    shown = dbt(
        project,
        "show",
        "--inline",
        "select op, count(*) as runs from {{ source('maintenance', 'maintenance_history') }} "
        "group by op order by op",
    )
    assert shown.success, shown.exception
    runs = {row[0]: row[1] for row in shown.result.results[0].agate_table.rows}
    recorded = history(warehouse)
    assert runs == {op: sum(1 for r in recorded if r.op == op) for op in runs}
    assert set(runs) == {"vacuum", "optimize", "cleanup_logs"}


def test_cli_maintain_reads_the_manifest(project: Path) -> None:  # noqa: F811
    warehouse = Path(project).parent / "warehouse"
    assert dbt(project, "build").success
    for batch in (1, 2, 3):  # small files pile up in fct_orders with the post-hook off
        assert dbt(
            project,
            "run",
            "--select",
            "landing_orders",
            "stg_orders",
            "fct_orders",
            batch=batch,
            extra_vars={"maintenance_post_hook": False},
        ).success
    before = len(history(warehouse))

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "python_ops", "maintain", "--project-dir", str(project), *args],
            capture_output=True,
            text=True,
            env={**os.environ, "SPARKDELTA_WAREHOUSE": str(warehouse)},
            timeout=300,
        )

    done = cli("--select", "marts", "--exclude", "customer_order_summary", "--threads", "2")
    assert done.returncode == 0, done.stderr
    assert "3/3 models" in done.stderr  # the progress bar: fct_orders, dim_customers, dim_products
    assert "fct_orders" in done.stdout
    assert "total" in done.stdout
    new = history(warehouse)[before:]
    assert [(r.model, r.op, r.status) for r in new] == [("fct_orders", "optimize", "succeeded")]
    assert new[0].invocation_id.startswith("cli-")
    assert matches_disk(new[0])

    # the same history the dbt side reads: the Z-order just done is not due again
    again = cli("--select", "fct_orders", "--json")
    assert again.returncode == 0, again.stderr
    outcomes = json.loads(again.stdout)["outcomes"]
    assert {o["op"]: o["status"] for o in outcomes}["optimize"] == "not_due"

    missing = cli("--select", "fct_orders", "--project-dir", str(project / "nowhere"))
    assert missing.returncode == 2
    assert "target/manifest.json does not exist. Run 'dbt parse'" in missing.stderr
