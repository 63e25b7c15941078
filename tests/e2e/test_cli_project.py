"""The command line finds a dbt project's tables where dbt put them, from dbt's own profile.

The example project with its profile in the project directory saying ``warehouse: wh`` (the
issue's setup: before, ``maintain --project-dir .`` looked in ``<project>/warehouse``, found
nothing, printed "0 of 0 built models" and exited 0). Real dbt builds the tables; the CLI runs
as a scheduler runs it, in a process of its own started from another directory, with no
``SPARKDELTA_WAREHOUSE`` and no ``--warehouse``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from dbt.cli.main import dbtRunner

from tests.e2e.conftest import WITH_DELTA_WRITER
from tests.helpers.dbt_runs import CUSTOMERS, PER_BATCH, PROJECT_PARTS
from tests.helpers.paths import ROOT

pytestmark = pytest.mark.slow

PROFILE = """
sparkdelta_shop:
  target: dev
  outputs:
    dev:
      type: sparkdelta
      method: session
      mode: embedded
      schema: shop
      warehouse: wh
      threads: 2
    empty:
      type: sparkdelta
      schema: shop
      warehouse: "{{ env_var('NOT_SET_ANYWHERE', 'empty-wh') }}"
"""


def _dbt(project: Path, *args: str, batch: int = 0, post_hook: bool = True) -> None:
    variables = {
        "batch": batch,
        "orders_per_batch": PER_BATCH,
        "customers": CUSTOMERS,
        "maintenance_post_hook": post_hook,
    }
    result = dbtRunner().invoke(
        [
            *args,
            "--project-dir",
            str(project),
            "--profiles-dir",
            str(project),
            "--vars",
            json.dumps(variables),
        ]
    )
    failures = [
        (r.node.name, r.status, r.message)
        for r in getattr(result.result, "results", [])
        if str(r.status) not in ("success", "pass")
    ]
    assert result.success, (args, result.exception, failures)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The example project built into ``<project>/wh``; fct_orders then gets 2 more batches
    with the post-hook off (small files to Z-order)."""
    from dbt.adapters.sparkdelta.engines import shutdown_engines

    root = tmp_path_factory.mktemp("cli") / "project"
    root.mkdir()
    for part in PROJECT_PARTS:
        if part == "profiles_example":
            continue
        source = ROOT / part
        if source.is_dir():
            shutil.copytree(source, root / part)
        else:
            shutil.copy(source, root / part)
    for name in WITH_DELTA_WRITER:  # as the e2e ``project`` fixture: no JVM per module
        (root / "models" / "marts" / name).unlink()
    (root / "profiles.yml").write_text(PROFILE)
    saved = os.environ.pop("SPARKDELTA_WAREHOUSE", None)
    shutdown_engines()
    try:
        _dbt(root, "build")
        for batch in (1, 2):
            _dbt(
                root,
                "run",
                "--select",
                "landing_orders",
                "fct_orders",
                batch=batch,
                post_hook=False,
            )
        yield root
    finally:
        shutdown_engines()
        if saved is not None:
            os.environ["SPARKDELTA_WAREHOUSE"] = saved


def python_ops(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m python_ops <args>`` from a directory that is not the project's."""
    env = {k: v for k, v in os.environ.items() if k not in ("SPARKDELTA_WAREHOUSE", "DBT_TARGET")}
    env.pop("DBT_PROFILES_DIR", None)
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run(
        [sys.executable, "-m", "python_ops", *args],
        cwd=project.parent,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


def test_maintain_finds_the_tables_the_profile_put_in_its_warehouse(project: Path) -> None:
    assert (project / "wh" / "shop" / "fct_orders" / "_delta_log").is_dir()
    assert not (project / "warehouse").exists()
    done = python_ops(
        project, "maintain", "--project-dir", str(project), "--dry-run", "--all", "--json"
    )
    assert done.returncode == 0, done.stderr
    profile = f"profile 'sparkdelta_shop' target 'dev' in {project / 'profiles.yml'}"
    assert f"6 of 6 built table models, tables under {project / 'wh'} ({profile})" in done.stderr
    outcomes = json.loads(done.stdout)["outcomes"]
    assert {o["model"] for o in outcomes} == {
        "landing_customers",
        "landing_orders",
        "dim_customers",
        "dim_products",
        "fct_orders",
        "customer_order_summary",
    }
    optimize = next(o for o in outcomes if (o["model"], o["op"]) == ("fct_orders", "optimize"))
    assert optimize["dry_run"]
    assert optimize["files_removed"] >= 2
    assert "python_ops.ops.audit" not in done.stderr  # no audit JSON lines by default


def test_maintain_dry_run_output_says_would(project: Path) -> None:
    done = python_ops(
        project,
        "maintain",
        "--project-dir",
        str(project),
        "--dry-run",
        "--all",
        "--ops",
        "optimize",
    )
    assert done.returncode == 0, done.stderr
    assert "(dry run: nothing is changed)" in done.stderr
    row = next(line for line in done.stdout.splitlines() if line.startswith("fct_orders"))
    assert "would rewrite" in row
    assert "succeeded" not in row


def test_maintain_that_finds_nothing_exits_2_saying_where_it_looked(project: Path) -> None:
    done = python_ops(project, "maintain", "--project-dir", str(project), "--target", "empty")
    assert done.returncode == 2
    assert (
        "None of the 6 table models of the manifest has a Delta table where profile "
        "'sparkdelta_shop' target 'empty'"
    ) in done.stderr
    assert f"looked at {project / 'empty-wh' / 'shop' / 'landing_customers'}" in done.stderr
    assert "nothing was run" in done.stderr

    view_only = python_ops(
        project, "maintain", "--project-dir", str(project), "--select", "stg_orders"
    )
    assert view_only.returncode == 2
    assert "The selection keeps none of the 6 built table models" in view_only.stderr


def test_path_commands_apply_a_models_policy_with_model(project: Path) -> None:
    table = project / "wh" / "shop" / "fct_orders"
    alone = python_ops(project, "vacuum", str(table), "--dry-run")
    assert alone.returncode == 0, alone.stderr
    assert "retention 168 h: Delta's default" in alone.stdout
    assert "applies only with --model NAME --project-dir DIR" in alone.stdout

    # fct_orders says maintenance_vacuum_retention_hours: 336 (models/marts/fct_orders.sql)
    with_model = python_ops(
        project, "vacuum", "--model", "fct_orders", "--project-dir", str(project), "--dry-run"
    )
    assert with_model.returncode == 0, with_model.stderr
    assert f"vacuum {table} at version" in with_model.stdout
    assert "retention 336 h: maintenance_vacuum_retention_hours of model fct_orders" in (
        with_model.stdout
    )
    as_json = python_ops(
        project,
        "vacuum",
        str(table),
        "--model",
        "fct_orders",
        "--project-dir",
        str(project),
        "--dry-run",
        "--json",
    )
    assert as_json.returncode == 0, as_json.stderr
    assert json.loads(as_json.stdout)["retention_hours"] == 336

    plan = python_ops(
        project,
        "optimize",
        "--model",
        "fct_orders",
        "--project-dir",
        str(project),
        "--dry-run",
        "--json",
    )
    assert plan.returncode == 0, plan.stderr
    assert json.loads(plan.stdout)["zorder_by"] == ["customer_id", "order_id"]

    off = python_ops(project, "vacuum", "--model", "dim_products", "--project-dir", str(project))
    assert off.returncode == 2
    assert "model 'dim_products': setting 'maintenance_enabled' has bad value False" in off.stderr


def test_path_commands_with_model_write_a_history_row_each(project: Path) -> None:
    from python_ops.maintenance.records.history import HistoryStore

    table = project / "wh" / "shop" / "fct_orders"
    history = HistoryStore(str(project / "wh" / "shop" / "maintenance_history"))
    records_before = history.records()
    seen = {(r.invocation_id, r.op) for r in records_before}
    model = ("--model", "fct_orders", "--project-dir", str(project))
    for command in (
        ("vacuum", *model, "--dry-run"),
        ("optimize", *model, "--dry-run"),
        ("cleanup-logs", *model, "--dry-run", "--json"),
    ):
        done = python_ops(project, *command)
        assert done.returncode == 0, done.stderr
    rows = sorted(
        (r for r in history.records() if (r.invocation_id, r.op) not in seen),
        key=lambda r: r.started_at,
    )
    assert [(r.op, r.model, r.dry_run, r.status) for r in rows] == [
        ("vacuum", "fct_orders", True, "succeeded"),
        ("optimize", "fct_orders", True, "succeeded"),
        ("cleanup_logs", "fct_orders", True, "succeeded"),
    ]
    assert all(r.invocation_id.startswith("cli-") for r in rows)
    assert all(r.table_location.rstrip("/").endswith("shop/fct_orders") for r in rows)
    assert json.loads(rows[0].parameters)["retention_hours"] == 336

    # a path command without --model knows no project: it records nothing
    assert python_ops(project, "vacuum", str(table), "--dry-run").returncode == 0
    assert len(history.records()) == len(records_before) + 3
