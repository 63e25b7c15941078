"""The dbt surface of maintenance on the example project, one feature per test.

Config inheritance; the post-hook (runs what is due, records it, reads the table's log once);
``on_error``; the run-operations (selection, threads, time budget, argument checks, report);
the history as a dbt source; ``python -m python_ops maintain`` reading dbt's manifest.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from deltalake import DeltaTable

from dbt.adapters.sparkdelta.common import runtime as adapter_runtime
from python_ops.delta.state.snapshot import snapshot_reads
from python_ops.maintenance.records.history import HistoryRecord, HistoryStore
from python_ops.maintenance.rules.empty_origin import ORIGIN_OP
from python_ops.maintenance.rules.log_bounds import BOUNDS_OP, PROOF_OPS
from tests.helpers.dbt_runs import Dbt

pytestmark = pytest.mark.slow

CHANGED_ORDERS = ("run", "--select", "landing_orders", "stg_orders", "fct_orders")


def warehouse_of(project: Path) -> Path:
    return project.parent / "warehouse"


def all_records(warehouse: Path) -> list[HistoryRecord]:
    return HistoryStore(str(warehouse / "shop" / "maintenance_history")).records()


def history(warehouse: Path) -> list[HistoryRecord]:
    """The op runs (what the due checks proved, ops ``vacuum_check`` and ``log_bounds``, left
    out)."""
    return [r for r in all_records(warehouse) if r.op not in PROOF_OPS]


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


def break_zorder(project: Path, *, on_error: str | None = None) -> None:
    """Give fct_orders a Z-order column its table does not have (and maybe an on_error)."""
    sql = project / "models" / "marts" / "fct_orders.sql"
    text = sql.read_text().replace("['customer_id', 'order_id']", "['nope']")
    if on_error is not None:
        text = text.replace(
            "maintenance_vacuum_retention_hours=336,",
            f"maintenance_vacuum_retention_hours=336, maintenance_on_error='{on_error}',",
        )
    sql.write_text(text)


# --- config ------------------------------------------------------------------------------------


def test_config_inherits_key_by_key_project_folder_model(built_project: Path) -> None:
    manifest = json.loads((built_project / "target" / "manifest.json").read_text())
    nodes = {n["name"]: n["config"] for n in manifest["nodes"].values() if "config" in n}
    fct = nodes["fct_orders"]
    assert fct["maintenance_on_error"] == "warn"  # project
    assert fct["maintenance_min_small_files"] == 4  # marts folder
    assert fct["maintenance_zorder_by"] == ["customer_id", "order_id"]  # model
    assert fct["maintenance_vacuum_retention_hours"] == 336  # model overrides nothing above
    assert nodes["landing_orders"]["maintenance_log_retention_days"] == 7  # landing folder
    assert nodes["dim_products"]["maintenance_enabled"] is False  # opted out


# --- the post-hook -----------------------------------------------------------------------------


def test_post_hook_runs_what_is_due_and_records_it(built_project: Path, dbt: Dbt) -> None:
    warehouse = warehouse_of(built_project)
    before = len(history(warehouse))
    assert dbt(built_project, *CHANGED_ORDERS, batch=1).success
    new = history(warehouse)[before:]
    # the Z-order of the partitions the new batch changed, and nothing else
    assert [(r.model, r.op, r.status, r.dry_run) for r in new] == [
        ("fct_orders", "optimize", "succeeded", False)
    ]
    assert new[0].files_removed > 0
    assert new[0].version_after > new[0].version_before
    assert matches_disk(new[0])  # the history row is what the Delta log says happened


def test_post_hook_reads_the_log_only_when_something_may_be_due(
    built_project: Path, dbt: Dbt
) -> None:
    warehouse = warehouse_of(built_project)
    table = warehouse / "shop" / "dim_customers"
    before = len(history(warehouse))
    reads = snapshot_reads(str(table))
    rebuilt = dbt(built_project, "run", "--select", "dim_customers")
    assert rebuilt.success, rebuilt.exception
    # nothing was due, and the rebuild's commit, the checksum Sail wrote beside it and the
    # bounds the history keeps prove it (``build_decisions``): the snapshot is not read
    assert snapshot_reads(str(table)) - reads == 0
    # without the bounds the post-hook decides on the snapshot: one read of the log, handed to
    # every op's rule; nothing was due (the removed files are younger than the retention, a
    # few files are not worth compacting, no checkpoint's commits can expire); it keeps the
    # bounds the snapshot proves, and the next rebuild reads nothing again
    kept = DeltaTable(str(warehouse / "shop" / "maintenance_history"))
    kept.delete(f"op in ('{BOUNDS_OP}', '{ORIGIN_OP}') and model = 'dim_customers'")
    with adapter_runtime.HISTORY_STORES.lock:  # as a new dbt process: the history read again
        adapter_runtime.HISTORY_STORES.value.clear()
    for expected_reads in (1, 0):
        reads = snapshot_reads(str(table))
        rebuilt = dbt(built_project, "run", "--select", "dim_customers")
        assert rebuilt.success, rebuilt.exception
        assert snapshot_reads(str(table)) - reads == expected_reads
    assert len(history(warehouse)) == before


def test_on_error_warn_records_the_failure_and_the_model_succeeds(
    built_project: Path, dbt: Dbt
) -> None:
    warehouse = warehouse_of(built_project)
    break_zorder(built_project)
    # a batch of changed orders: a build that writes nothing skips maintenance (build_writes)
    assert dbt(built_project, *CHANGED_ORDERS, batch=2).success
    failed = [r for r in history(warehouse) if r.status == "failed"]
    assert failed
    assert "'nope' is not a column of the table" in (failed[-1].error or "")


def test_a_failed_op_fails_the_run_operation_after_the_others_ran(
    built_project: Path, dbt: Dbt, capfd: pytest.CaptureFixture[str]
) -> None:
    warehouse = warehouse_of(built_project)
    break_zorder(built_project)  # on_error: warn: the model's build would stay green
    before = len(history(warehouse))
    capfd.readouterr()
    done = dbt(built_project, "run-operation", "optimize_all")
    assert not done.success  # a scheduler sees it (exit 1)
    captured = capfd.readouterr()
    out = captured.out
    assert "optimize_all: 1 op(s) failed (see the table above; the other ops ran)" in out
    # a failed op is dbt's runtime error, not a compilation problem (issue 65 item 6)
    assert "Runtime Error" in out + captured.err
    assert "Compilation Error" not in out + captured.err
    # its warning is a run-operation's: it says nothing of a model build that did not happen
    warned = [line for line in (out + captured.err).splitlines() if "failed" in line]
    assert any("maintenance optimize of model fct_orders failed:" in line for line in warned)
    assert not any("so the model itself succeeded" in line for line in warned)
    new = history(warehouse)[before:]
    assert [r.model for r in new if r.status == "failed"] == ["fct_orders"]
    assert {r.model for r in new if r.status == "succeeded"} >= {"dim_customers"}


def test_on_error_fail_fails_the_model(built_project: Path, dbt: Dbt) -> None:
    warehouse = warehouse_of(built_project)
    break_zorder(built_project, on_error="fail")
    assert not dbt(built_project, *CHANGED_ORDERS, batch=3).success
    failed = [r for r in history(warehouse) if r.status == "failed"]
    assert failed  # recorded too
    assert {r.model for r in failed} == {"fct_orders"}


# --- run-operations ----------------------------------------------------------------------------


def test_vacuum_all_selects_excludes_and_dry_runs(built_project: Path, dbt: Dbt) -> None:
    warehouse = warehouse_of(built_project)
    before = len(history(warehouse))
    args = "{select: [marts], exclude: [dim_customers], dry_run: true}"
    assert dbt(built_project, "run-operation", "vacuum_all", "--args", args).success
    new = history(warehouse)[before:]
    # dim_products is in marts but opts out of maintenance
    assert sorted(r.model for r in new) == ["customer_order_summary", "fct_orders"]
    assert all(r.op == "vacuum" and r.dry_run for r in new)


def test_cleanup_logs_all_by_tag_on_two_threads(built_project: Path, dbt: Dbt) -> None:
    warehouse = warehouse_of(built_project)
    before = len(history(warehouse))
    args = "{select: ['tag:landing'], threads: 2}"
    assert dbt(built_project, "run-operation", "cleanup_logs_all", "--args", args).success
    new = history(warehouse)[before:]
    assert sorted(r.model for r in new) == ["landing_customers", "landing_orders"]


def test_the_time_budget_stops_starting_new_tables(built_project: Path, dbt: Dbt) -> None:
    warehouse = warehouse_of(built_project)
    before = len(history(warehouse))
    args = "{time_budget_s: 0.000001}"
    assert dbt(built_project, "run-operation", "optimize_all", "--args", args).success
    assert len(history(warehouse)) == before


def test_bad_arguments_are_refused_with_a_clear_message(built_project: Path, dbt: Dbt) -> None:
    bad = dbt(built_project, "run-operation", "maintain_all", "--args", "{ops: [vacum]}")
    assert not bad.success
    # the message itself: tests/unit/test_registry.py
    assert bad.result.results[0].status == "error"
    # threads and the time budget are checked once, by the session's options
    # (tests/unit/test_session.py), before any table is located
    for args in ("{threads: 0}", "{threads: two}", "{time_budget_s: 0}"):
        refused = dbt(built_project, "run-operation", "vacuum_all", "--args", args)
        assert not refused.success, args


def test_maintenance_report(
    built_project: Path, dbt: Dbt, capfd: pytest.CaptureFixture[str]
) -> None:
    capfd.readouterr()
    assert dbt(built_project, "run-operation", "maintenance_report").success
    assert "fct_orders" in capfd.readouterr().out


# --- the history -------------------------------------------------------------------------------


def test_analysts_query_the_history_through_its_dbt_source(built_project: Path, dbt: Dbt) -> None:
    warehouse = warehouse_of(built_project)
    # record every op (the first build's post-hooks find nothing due: one file per partition)
    assert dbt(built_project, "run-operation", "vacuum_all", "--args", "{dry_run: true}").success
    assert dbt(built_project, "run-operation", "optimize_all", "--args", "{dry_run: true}").success
    assert dbt(built_project, "run-operation", "cleanup_logs_all").success
    shown = dbt(
        built_project,
        "show",
        "--inline",
        "select op, count(*) as runs from {{ source('maintenance', 'maintenance_history') }} "
        "group by op order by op",
    )
    assert shown.success, shown.exception
    runs = {row[0]: row[1] for row in shown.result.results[0].agate_table.rows}
    recorded = all_records(warehouse)
    assert runs == {op: sum(1 for r in recorded if r.op == op) for op in runs}
    # the first builds keep, beside the runs, that each table was created where nothing
    # existed (what bounds its VACUUM check and its log), and the post-hook's decisions that
    # read a snapshot the bounds of the table's log
    assert set(runs) == {"vacuum", "optimize", "cleanup_logs", ORIGIN_OP, BOUNDS_OP}


# --- outside dbt -------------------------------------------------------------------------------


def test_cli_maintain_reads_the_manifest(built_project: Path, dbt: Dbt) -> None:
    warehouse = warehouse_of(built_project)
    for batch in (1, 2, 3):  # small files pile up in fct_orders with the post-hook off
        assert dbt(
            built_project,
            *CHANGED_ORDERS,
            batch=batch,
            extra_vars={"maintenance_post_hook": False},
        ).success
    before = len(history(warehouse))

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "python_ops",
                "maintain",
                "--project-dir",
                str(built_project),
                *args,
            ],
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

    missing = cli("--select", "fct_orders", "--project-dir", str(built_project / "nowhere"))
    assert missing.returncode == 2
    assert "target/manifest.json does not exist. Run 'dbt parse'" in missing.stderr
