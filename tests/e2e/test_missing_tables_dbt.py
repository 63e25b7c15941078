"""A selected name that is nothing, a snapshot, a table whose files are gone: said as such.

What the user reads (the printed table on stdout, dbt's events, the exit status):

- ``print_table_health`` with a name that is no model, snapshot or seed failed nothing and
  printed an empty table (exit 0); it now fails naming the selection, as every other
  run-operation that takes a selection does;
- a snapshot's table was left out of ``print_table_health`` (empty table, exit 0); its health
  is now reported, as the other run-operations maintain snapshots;
- a table whose directory was removed by hand after it was built was "not built yet" in
  ``maintain_all`` (exit 0) and absent from ``print_table_health`` (exit 0): the embedded
  engine forgets such a table when it starts, so the catalog no longer answers for it. It is
  now "missing" (the journal recorded it, and nothing is where it was): ``print_table_health``
  fails (exit 1), ``maintain_all`` fails under the model's ``maintenance_on_error: fail`` (exit
  1) and reports it as missing, with a dbt warning, under ``warn``.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_maintenance_ux_dbt import Events
from tests.e2e.test_snapshot_maintenance import SNAPSHOT, SNAPSHOT_CONFIG
from tests.helpers.dbt_runs import Dbt

pytestmark = pytest.mark.slow

GONE = "dim_customers"


def _said(events: Events, result: Any) -> str:
    """Everything dbt said, the error it ended with included."""
    return "\n".join([m for _, _, m in events.seen] + [str(result.exception or "")])


def _delete_table_files(project: Path, model: str) -> Path:
    table = project.parent / "warehouse" / "shop" / model
    assert (table / "_delta_log").is_dir()
    shutil.rmtree(table)
    return table


def _missing_words(table: Path, model: str = GONE) -> str:
    return f"table shop.{model} was built at {table}, but nothing is there now"


def test_print_table_health_of_a_name_that_is_nothing_fails_naming_it(
    project: Path, dbt: Dbt, capfd: pytest.CaptureFixture[str]
) -> None:
    events = Events()
    args = "{select: [no_such_model, fct_orders]}"
    result = dbt(project, "run-operation", "print_table_health", "--args", args, callbacks=[events])

    assert not result.success  # was: success, and an empty table
    said = _said(events, result)
    assert (
        "print_table_health: the selection criterion 'no_such_model' does not match any "
        "model, snapshot or seed"
    ) in said, said
    assert "fct_orders'" not in said  # the name that matches is not blamed
    assert "partitioned by" not in capfd.readouterr().out  # refused before any table is read


def test_print_table_health_reports_a_snapshots_table(
    built_project: Path, dbt: Dbt, capfd: pytest.CaptureFixture[str]
) -> None:
    (built_project / "snapshots").mkdir()
    (built_project / "snapshots" / "customers_snapshot.sql").write_text(SNAPSHOT)
    with (built_project / "dbt_project.yml").open("a") as handle:
        handle.write(SNAPSHOT_CONFIG)
    assert dbt(built_project, "snapshot").success

    capfd.readouterr()
    args = "{select: [customers_snapshot]}"
    result = dbt(built_project, "run-operation", "print_table_health", "--args", args)

    assert result.success, result.exception
    out = capfd.readouterr().out
    rows = [line.split() for line in out.splitlines() if line.startswith("shop.")]
    assert [row[0] for row in rows] == ["shop.customers_snapshot"], out  # was: no row at all
    assert rows[0][1] == "0"  # its version: the snapshot's first MERGE target commit


def test_print_table_health_calls_a_table_whose_files_were_deleted_missing(
    built_project: Path, dbt: Dbt, capfd: pytest.CaptureFixture[str]
) -> None:
    table = _delete_table_files(built_project, GONE)
    capfd.readouterr()

    events = Events()
    args = f"{{select: [{GONE}]}}"
    result = dbt(
        built_project, "run-operation", "print_table_health", "--args", args, callbacks=[events]
    )

    assert not result.success  # was: success, and an empty table
    out = capfd.readouterr().out
    line = next((line for line in out.splitlines() if line.startswith(GONE)), "")
    assert line.split()[1:2] == ["missing:"], out
    assert _missing_words(table) in line
    said = _said(events, result)
    assert "print_table_health: 1 table(s) missing" in said, said

    everything = dbt(built_project, "run-operation", "print_table_health")  # no selection
    assert not everything.success
    out = capfd.readouterr().out
    assert any(line.startswith("shop.fct_orders") for line in out.splitlines()), out
    assert any(line.split()[:2] == [GONE, "missing:"] for line in out.splitlines()), out


def _maintain_all(project: Path, dbt: Dbt) -> tuple[Any, Events]:
    events = Events()
    result = dbt(project, "run-operation", "maintain_all", callbacks=[events])
    return result, events


def test_maintain_all_calls_a_table_whose_files_were_deleted_missing(
    built_project: Path, dbt: Dbt, capfd: pytest.CaptureFixture[str]
) -> None:
    table = _delete_table_files(built_project, GONE)
    capfd.readouterr()

    # on_error: warn (the project's): reported as missing, with a warning; the others maintained
    result, events = _maintain_all(built_project, dbt)
    captured = capfd.readouterr()
    out = captured.out
    # UX round three, item 5: the engine's notices are dbt's events, never raw logging lines
    assert "WARNING:dbt.adapters" not in captured.out + captured.err
    assert result.success, result.exception
    assert "not built yet" not in out, out  # was: "dim_customers  not maintained: not built yet"
    line = next((line for line in out.splitlines() if line.startswith(GONE)), "")
    assert line.split()[1:2] == ["missing:"], out
    assert _missing_words(table) in line
    warned = [m for m in events.messages("JinjaLogWarning") if GONE in m]
    assert warned, events.seen[-10:]
    assert "its table is missing" in warned[0]

    # on_error: fail: the run-operation fails (exit 1), the table still called missing
    sql = built_project / "models" / "marts" / f"{GONE}.sql"
    sql.write_text("{{ config(maintenance_on_error='fail') }}\n" + sql.read_text())
    result, events = _maintain_all(built_project, dbt)
    out = capfd.readouterr().out
    assert not result.success  # was: success, "not maintained: not built yet"
    assert "not built yet" not in out, out
    assert _missing_words(table) in out, out
    failed = [row.split() for row in out.splitlines() if row.startswith(f"{GONE} ")]
    assert ["vacuum", "failed"] in [row[1:3] for row in failed], out
    assert "op(s) failed" in _said(events, result)

    # the report says the same of that model's row, and fails (a row it could not read)
    report = dbt(built_project, "run-operation", "maintenance_report")
    out = capfd.readouterr().out
    assert not report.success
    assert any(row.split()[:2] == [GONE, "missing:"] for row in out.splitlines()), out
    assert f"{GONE:<26} error:" not in out  # was: "error: no Delta table at ..."
