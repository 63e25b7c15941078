"""What a dbt user sees of maintenance (issue 18), through real dbt on the example project.

A bad ``maintenance_*`` config fails the model before its SQL runs; a failed op under
``on_error: warn`` is a dbt warning that names the key the user wrote and fails only its own op;
a refused run-operation argument is one error and a failed run-operation; dry runs say "would";
run-operations report progress per model; the post-hook's line gives files and bytes.
"""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from python_ops.maintenance.records.history import HistoryRecord, HistoryStore
from tests.helpers.dbt_runs import Dbt
from tests.helpers.paths import ROOT

pytestmark = pytest.mark.slow


class Events:
    """Every event dbt fires during a run, as (name, level, message)."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, str]] = []

    def __call__(self, event: Any) -> None:
        self.seen.append((event.info.name, event.info.level, event.info.msg))

    def messages(self, name: str, level: str | None = None) -> list[str]:
        """Messages of the events called ``name`` (at ``level``, if given)."""
        return [m for n, lvl, m in self.seen if n == name and (level is None or lvl == level)]


def warehouse_of(project: Path) -> Path:
    return project.parent / "warehouse"


def history(project: Path) -> list[HistoryRecord]:
    return HistoryStore(str(warehouse_of(project) / "shop" / "maintenance_history")).records()


def log_version(table: Path) -> int:
    """The newest commit version in a Delta table's log."""
    return max(int(p.name[:20]) for p in (table / "_delta_log").glob("*.json"))


def edit_fct_orders(project: Path, old: str, new: str) -> None:
    sql = project / "models" / "marts" / "fct_orders.sql"
    text = sql.read_text()
    assert old in text
    sql.write_text(text.replace(old, new))


def test_a_bad_maintenance_config_fails_the_model_before_it_writes(
    built_project: Path, dbt: Dbt
) -> None:
    table = warehouse_of(built_project) / "shop" / "fct_orders"
    # new orders arrive, so fct_orders' MERGE would commit
    assert dbt(built_project, "run", "--select", "landing_orders", batch=1).success
    version = log_version(table)

    edit_fct_orders(
        built_project,
        "maintenance_vacuum_retention_hours=336",
        "maintenance_vacum_retention_hours=336",
    )
    misspelt = dbt(built_project, "run", "--select", "fct_orders", batch=1)
    assert not misspelt.success
    message = misspelt.result.results[0].message
    assert "model 'fct_orders'" in message
    assert "'maintenance_vacum_retention_hours' has bad value 336" in message
    assert "Did you mean 'maintenance_vacuum_retention_hours'?" in message
    assert "its table is unchanged" in message
    assert log_version(table) == version  # no MERGE committed

    edit_fct_orders(
        built_project,
        "maintenance_vacum_retention_hours=336",
        "maintenance_vacuum_retention_hours='a week'",
    )
    bad_value = dbt(built_project, "run", "--select", "fct_orders", batch=1)
    assert not bad_value.success
    message = bad_value.result.results[0].message
    assert "setting 'maintenance_vacuum_retention_hours' has bad value 'a week'" in message
    assert "Use a number greater than 0" in message
    assert log_version(table) == version

    # the same run with the config fixed does write: the refusals above held back a real MERGE
    edit_fct_orders(
        built_project,
        "maintenance_vacuum_retention_hours='a week'",
        "maintenance_vacuum_retention_hours=336",
    )
    assert dbt(built_project, "run", "--select", "fct_orders", batch=1).success
    assert log_version(table) > version


def test_a_failed_op_is_a_dbt_warning_naming_the_users_key(built_project: Path, dbt: Dbt) -> None:
    edit_fct_orders(built_project, "['customer_id', 'order_id']", "['usr_id']")
    before = len(history(built_project))
    events = Events()
    run = dbt(
        built_project,
        "run",
        "--select",
        "landing_orders",
        "fct_orders",
        batch=1,
        callbacks=[events],
    )
    assert run.success  # on_error: warn (the project default)

    warnings = [m for m in events.messages("JinjaLogWarning", "warn") if "usr_id" in m]
    assert len(warnings) == 1
    assert "maintenance optimize of model fct_orders failed" in warnings[0]
    assert "setting 'maintenance_zorder_by' has bad value 'usr_id'" in warnings[0]
    assert "'usr_id' is not a column of the table; choose from: order_id" in warnings[0]
    # no bare Python logging line, no internal parameter name anywhere
    everything = "\n".join(m for _, _, m in events.seen)
    assert "setting 'zorder_by'" not in everything
    assert "WARNING:python_ops" not in everything
    # python_ops' logging went through dbt only while maintenance ran; it is as it was now
    assert logging.getLogger("python_ops").propagate
    assert not logging.getLogger("python_ops").handlers
    # dbt.log keeps the full reason at warn level
    dbt_log = (built_project / "logs" / "dbt.log").read_text()
    assert re.search(r"\[warn \].*setting 'maintenance_zorder_by' has bad value 'usr_id'", dbt_log)

    # only OPTIMIZE failed: the bad Z-order column is OPTIMIZE's setting
    failed = [(r.model, r.op) for r in history(built_project)[before:] if r.status == "failed"]
    assert failed == [("fct_orders", "optimize")]

    # dbt's --warn-error makes the warning an error, as for any dbt warning (a new batch: a
    # build that wrote nothing is not maintained, so nothing would fail)
    strict = dbt(
        built_project, "--warn-error", "run", "--select", "landing_orders", "fct_orders", batch=2
    )
    assert not strict.success


def test_a_refused_run_operation_argument_is_one_error_and_fails_the_run(
    built_project: Path, dbt: Dbt
) -> None:
    before = len(history(built_project))
    events = Events()
    refused = dbt(
        built_project,
        "run-operation",
        "vacuum_all",
        "--args",
        "{retention_hours: 1}",
        callbacks=[events],
    )
    assert not refused.success  # the run-operation exits non-zero
    # shown once (dbt.log also keeps debug copies with the traceback)
    said = [m for _, level, m in events.seen if "has bad value 1" in m and level != "debug"]
    assert len(said) == 1, said
    assert "setting 'retention_hours' has bad value 1" in said[0]
    assert "fct_orders (168 h)" in said[0]
    assert "maintenance_vacuum_allow_short_retention: true" in said[0]
    assert len(history(built_project)) == before  # nothing ran


def test_a_dry_run_says_would_and_run_operations_show_progress(
    built_project: Path, dbt: Dbt, capfd: pytest.CaptureFixture[str]
) -> None:
    # an untracked data file, older than any retention: VACUUM's to delete
    table = warehouse_of(built_project) / "shop" / "fct_orders"
    stray = table / "part-00000-stray.snappy.parquet"
    stray.write_bytes(b"x" * 2048)
    month_ago = time.time() - 30 * 24 * 3600
    os.utime(stray, (month_ago, month_ago))

    events = Events()
    capfd.readouterr()
    dry = dbt(
        built_project,
        "run-operation",
        "vacuum_all",
        "--args",
        "{select: [marts], dry_run: true}",
        callbacks=[events],
    )
    assert dry.success
    assert stray.exists()
    printed = capfd.readouterr().out
    row = next(line for line in printed.splitlines() if line.startswith("fct_orders"))
    assert "dry run" in row
    assert "would delete 1 file (2.05 KB)" in row
    assert "succeeded" not in row
    assert "dry run: nothing was deleted or written" in printed

    progress = [m for m in events.messages("JinjaLogInfo") if re.match(r"vacuum \d+/\d+ ", m)]
    models = ["customer_order_summary", "dim_customers", "dim_products", "fct_orders"]
    assert len(progress) == len(models)
    assert [m.split()[1] for m in progress] == [f"{i}/{len(models)}" for i in range(1, 5)]
    assert sorted(m.split()[2].rstrip(":") for m in progress) == models
    assert any("fct_orders: vacuum would delete 1 file (2.05 KB)" in m for m in progress)

    # the one-table run-operation says it the same way
    capfd.readouterr()
    one = dbt(built_project, "run-operation", "vacuum_table", "--args", "{model: fct_orders}")
    assert one.success
    out = capfd.readouterr().out
    assert "would delete from shop.fct_orders: 1 file (2.05 KB), 0 directories" in out
    # the model's retention (336 h in fct_orders.sql), not the table's default of 168 h
    # worded as every front end words a retention (values.retention_text): "336 h", not "336.0"
    assert "(retention 336 h, the model's maintenance_vacuum_retention_hours;" in out
    assert stray.exists()


def test_the_post_hook_line_gives_files_and_bytes_per_op(built_project: Path, dbt: Dbt) -> None:
    events = Events()
    run = dbt(
        built_project,
        "run",
        "--select",
        "landing_orders",
        "stg_orders",
        "fct_orders",
        batch=1,
        callbacks=[events],
    )
    assert run.success
    lines = [m for m in events.messages("JinjaLogInfo") if m.startswith("maintenance fct_orders:")]
    assert len(lines) == 1
    size = r"\([\d.]+ (B|KB|MB|GB)\)"
    assert re.fullmatch(
        rf"maintenance fct_orders: optimize rewrote \d+ files {size} into \d+ files? {size} "
        r"in [\d.]+ s",
        lines[0],
    ), lines[0]
    record = [r for r in history(built_project) if r.op == "optimize"][-1]
    assert f"rewrote {record.files_removed} files" in lines[0]


def test_every_config_problem_of_the_project_is_shown_before_the_first_model(
    project: Path, dbt: Dbt
) -> None:
    edit_fct_orders(
        project,
        "maintenance_vacuum_retention_hours=336",
        "maintenance_vacuum_retention_hours='a week'",
    )
    dim = project / "models" / "marts" / "dim_customers.sql"
    dim.write_text("{{ config(maintenance_min_small_files=0) }}\n" + dim.read_text())
    view = project / "models" / "staging" / "stg_orders.sql"
    view.write_text("{{ config(maintenance_zorder_by='order_id') }}\n" + view.read_text())

    events = Events()
    run = dbt(project, "run", "--select", "landing_orders", callbacks=[events])
    assert run.success  # the selected model is sound: it builds
    warnings = [m for m in events.messages("JinjaLogWarning") if "maintenance" in m]
    together = [m for m in warnings if "2 bad setting(s)" in m]
    assert len(together) == 1, warnings  # both models' errors, in one warning, before any build
    assert "model 'fct_orders'" in together[0]
    assert "'a week'" in together[0]
    assert "model 'dim_customers'" in together[0]
    assert "maintenance_min_small_files" in together[0]
    ignored = [m for m in warnings if "stg_orders" in m]
    assert len(ignored) == 1
    assert "materialized as view" in ignored[0]
    assert "maintenance_zorder_by do nothing" in ignored[0]


def test_a_retention_vacuum_would_refuse_is_refused_at_build_time(
    built_project: Path, dbt: Dbt
) -> None:
    table = warehouse_of(built_project) / "shop" / "fct_orders"
    assert dbt(built_project, "run", "--select", "landing_orders", batch=1).success
    version = log_version(table)
    edit_fct_orders(
        built_project,
        "maintenance_vacuum_retention_hours=336",
        "maintenance_vacuum_retention_hours=24",
    )
    refused = dbt(built_project, "run", "--select", "fct_orders", batch=1)
    assert not refused.success
    message = refused.result.results[0].message
    assert "model 'fct_orders'" in message
    assert "has bad value 24" in message
    assert "The minimum for table" in message
    assert "Request at least 168 h," in message
    assert "maintenance_vacuum_allow_short_retention: true" in message
    assert "its table is unchanged" in message
    assert log_version(table) == version  # no MERGE committed

    edit_fct_orders(
        built_project,
        "maintenance_vacuum_retention_hours=24",
        "maintenance_vacuum_retention_hours=24, maintenance_vacuum_allow_short_retention=true",
    )
    assert dbt(built_project, "run", "--select", "fct_orders", batch=1).success
    assert log_version(table) > version


def test_dbt_docs_shows_each_tables_maintenance_state(built_project: Path, dbt: Dbt) -> None:
    import json

    docs = dbt(built_project, "docs", "generate")
    assert docs.success, docs.exception
    catalog = json.loads((built_project / "target" / "catalog.json").read_text())
    stats = catalog["nodes"]["model.shop_lakehouse.fct_orders"]["stats"]
    assert int(stats["maintenance_files"]["value"]) > 0
    assert stats["maintenance_files"]["include"] is True
    assert " of " in stats["maintenance_small_files"]["value"]
    assert stats["maintenance_bytes"]["value"].endswith("B")
    assert stats["maintenance_next"]["value"]  # e.g. "nothing due" or an op and when
    assert stats["maintenance_optimize"]["label"] == "last OPTIMIZE"
    assert stats["maintenance_vacuum"]["value"] != ""
    # a view has no Delta table: no maintenance stats
    view = catalog["nodes"]["model.shop_lakehouse.stg_orders"]["stats"]
    assert not any(key.startswith("maintenance_") for key in view)


def test_one_models_bad_config_is_that_models_problem_in_every_front_end(
    built_project: Path, dbt: Dbt
) -> None:
    """Trust round four, item 5: every bad model named with its fix, the rest maintained, exit 1."""
    for name in ("dim_customers", "dim_products"):
        sql = built_project / "models" / "marts" / f"{name}.sql"
        sql.write_text("{{ config(maintenance_memory_budget='lots') }}\n" + sql.read_text())
    edit_fct_orders(
        built_project,
        "maintenance_vacuum_retention_hours=336",
        "maintenance_vacuum_retention_hours='a week'",
    )
    before = len(history(built_project))
    events = Events()
    run = dbt(
        built_project,
        "run-operation",
        "vacuum_all",
        "--args",
        "{dry_run: true}",
        callbacks=[events],
    )
    assert not run.success  # exit 1: three models refused
    text = "\n".join(m for _, _, m in events.seen)
    assert "3 model(s) refused for their maintenance config" in text
    for name in ("dim_customers", "dim_products", "fct_orders"):
        assert f"model '{name}'" in text
    assert "'lots'" in text
    assert "'a week'" in text
    maintained = {r.model for r in history(built_project)[before:]}
    assert maintained  # the sound models were vacuumed (a dry run)
    assert not maintained & {"dim_customers", "dim_products", "fct_orders"}

    events = Events()
    report = dbt(built_project, "run-operation", "maintenance_report", callbacks=[events])
    assert not report.success
    assert "3 model(s) could not be reported" in "\n".join(m for _, _, m in events.seen)

    dbt(built_project, "parse")  # the manifest the CLI reads holds the edited configs
    env = {k: v for k, v in os.environ.items() if k != "DBT_PROFILES_DIR"}
    cli = subprocess.run(
        [
            sys.executable,
            "-m",
            "python_ops",
            "maintain",
            "--project-dir",
            str(built_project),
            "--profiles-dir",
            str(built_project / "profiles_example"),
            "--dry-run",
        ],
        capture_output=True,
        text=True,
        env={**env, "PYTHONPATH": str(ROOT)},
        timeout=300,
        check=False,
    )
    assert cli.returncode == 1, cli.stderr
    for name in ("dim_customers", "dim_products", "fct_orders"):
        assert f"model '{name}' refused" in cli.stderr
    assert "the others were maintained" in cli.stderr


def test_a_quoted_dry_run_is_named_as_the_string_it_is(built_project: Path, dbt: Dbt) -> None:
    """UX round three, item 9: ``{dry_run: "false"}`` is a string, and the message says so."""
    for operation in ("vacuum_all", "vacuum_table"):
        events = Events()
        args = (
            '{dry_run: "false", model: fct_orders}'
            if operation == "vacuum_table"
            else ('{dry_run: "false"}')
        )
        run = dbt(built_project, "run-operation", operation, "--args", args, callbacks=[events])
        assert not run.success
        text = "\n".join(m for _, _, m in events.seen)
        assert (
            "dry_run must be true or false (a YAML boolean, unquoted), got the string 'false'"
            in (text)
        ), text


def test_cleanup_logs_table_uses_the_models_log_retention(
    built_project: Path, dbt: Dbt, capfd: pytest.CaptureFixture[str]
) -> None:
    """UX round three, item 2: the model's ``maintenance_log_retention_days``, as elsewhere."""
    edit_fct_orders(
        built_project,
        "maintenance_vacuum_retention_hours=336",
        "maintenance_vacuum_retention_hours=336, maintenance_log_retention_days=2",
    )
    capfd.readouterr()
    run = dbt(built_project, "run-operation", "cleanup_logs_table", "--args", "{model: fct_orders}")
    out = capfd.readouterr().out
    assert run.success, run.exception
    assert "(retention 2 days, the model's maintenance_log_retention_days)" in out, out
    given = dbt(
        built_project,
        "run-operation",
        "cleanup_logs_table",
        "--args",
        "{model: fct_orders, retention_days: 5}",
    )
    assert given.success, given.exception
    assert "(retention 5 days, given)" in capfd.readouterr().out


def _op_reasons(table: str) -> dict[tuple[str, str], tuple[str, str]]:
    """(model, op) -> (status, reason) from an ops table as the run-operations and CLI print it."""
    rows = {}
    for line in table.splitlines():
        match = re.match(r"^(\w+)\s+(vacuum|optimize|cleanup_logs|purge|stats)\s+(\w+)\s", line)
        if match:
            rows[(match[1], match[2])] = (match[3], line.split("  ")[-1].strip())
    return rows


def test_every_front_end_words_the_same_situation_alike(
    built_project: Path, dbt: Dbt, capfd: pytest.CaptureFixture[str]
) -> None:
    """UX round three, what to build 2: one wording per reason, retention, size and count.

    The same warehouse, nothing changed in between: ``maintain_all``'s dry run, the CLI's
    ``maintain --dry-run`` and the post-hook's history rows say the same thing for each op of
    each model, word for word; the report's VACUUM retention is the same words too.
    """
    edit_fct_orders(
        built_project,
        "maintenance_vacuum_retention_hours=336",
        "maintenance_vacuum_retention_hours=0.01, maintenance_vacuum_allow_short_retention=true",
    )
    assert dbt(built_project, "build", "--select", "fct_orders").success
    posthook = {
        (r.model, r.op): r.reason for r in history(built_project) if r.model == "fct_orders"
    }
    capfd.readouterr()
    run = dbt(built_project, "run-operation", "maintain_all", "--args", "{dry_run: true}")
    assert run.success, run.exception
    operation = _op_reasons(capfd.readouterr().out)
    env = {k: v for k, v in os.environ.items() if k != "DBT_PROFILES_DIR"}
    cli = subprocess.run(
        [
            sys.executable,
            "-m",
            "python_ops",
            "maintain",
            "--dry-run",
            "--project-dir",
            str(built_project),
            "--profiles-dir",
            str(built_project / "profiles_example"),
        ],
        capture_output=True,
        text=True,
        env={**env, "PYTHONPATH": str(ROOT)},
        timeout=300,
        check=False,
    )
    assert cli.returncode == 0, cli.stderr
    command_line = _op_reasons(cli.stdout)
    assert operation, "no ops table in maintain_all's output"
    assert operation == command_line
    # the retention as the user set it, exact, in every front end (never "0 h", never "0.0 h")
    vacuum = operation[("fct_orders", "vacuum")][1]
    assert "0.01 h" in vacuum, vacuum
    for _, reason in operation.values():
        assert reason.count(" 0 h") == reason.count("rounded to 0 h"), reason
        assert "0.0 h" not in reason
    for key, reason in posthook.items():
        if key in operation and reason and operation[key][0] == "not_due":
            assert reason.endswith(operation[key][1]) or operation[key][1] in reason, key
    capfd.readouterr()
    assert dbt(built_project, "run-operation", "maintenance_report").success
    report = capfd.readouterr().out
    assert "0.01 h" in report
    # "0 h" only where it says what VACUUM applies: Delta rounds RETAIN n HOURS
    assert report.count(" 0 h") == report.count("rounded to 0 h"), report
    assert "0.0 h" not in report
