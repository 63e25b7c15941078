"""The maintenance history as a dbt source works from the first build of a fresh warehouse.

The example project declares the source (``models/maintenance/_maintenance__sources.yml``); the
README's example model reads it. Before any maintenance ran, the adapter creates the table empty,
with its full schema, and registers it, so the model builds and ``dbt show`` answers.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from deltalake import DeltaTable

from python_ops.maintenance.records.history import HistoryRecord, HistoryStore
from python_ops.maintenance.records.history_read import SCHEMA_FIELDS
from tests.helpers.dbt_runs import Dbt

pytestmark = pytest.mark.slow

README_MODEL = """
select model, op, status, count(*) as runs, sum(bytes_removed) / 1e6 as mb_removed
from {{ source('maintenance', 'maintenance_history') }}
group by 1, 2, 3
"""


def add_readme_model(project: Path) -> None:
    (project / "models" / "maintenance" / "maintenance_summary.sql").write_text(README_MODEL)


def test_a_model_on_the_history_source_builds_on_a_fresh_warehouse(project: Path, dbt: Dbt) -> None:
    add_readme_model(project)
    location = project.parent / "warehouse" / "shop" / "maintenance_history"
    assert not location.exists()

    ran = dbt(project, "run", "--select", "maintenance_summary")

    assert ran.success, ran.exception
    table = DeltaTable(str(location))
    assert [f.name for f in table.schema().fields] == [name for name, _ in SCHEMA_FIELDS]
    assert table.to_pyarrow_table().num_rows == 0

    # what maintenance appends later shows through the same model
    HistoryStore(str(location)).append(
        [
            HistoryRecord(
                invocation_id="test",
                model="fct_orders",
                table_location="/somewhere",
                op="vacuum",
                parameters="{}",
                dry_run=False,
                status="succeeded",
                error=None,
                started_at=dt.datetime.now(dt.UTC),
                duration_s=0.1,
                files_removed=3,
                bytes_removed=2_000_000,
            )
        ]
    )
    shown = dbt(project, "show", "--select", "maintenance_summary")
    assert shown.success, shown.exception
    rows = [tuple(row) for row in shown.result.results[0].agate_table.rows]
    assert [row[:4] for row in rows] == [("fct_orders", "vacuum", "succeeded", 1)]
    assert float(rows[0][4]) == pytest.approx(2.0)


def test_dbt_show_on_the_source_works_before_anything_was_built(project: Path, dbt: Dbt) -> None:
    shown = dbt(
        project,
        "show",
        "--inline",
        "select count(*) as runs from {{ source('maintenance', 'maintenance_history') }}",
    )

    assert shown.success, shown.exception
    assert [tuple(row) for row in shown.result.results[0].agate_table.rows] == [(0,)]


def test_the_history_follows_its_vars(project: Path, dbt: Dbt) -> None:
    add_readme_model(project)
    variables = {"maintenance_history_name": "ops_history"}

    ran = dbt(project, "run", "--select", "maintenance_summary", extra_vars=variables)

    assert ran.success, ran.exception
    shop = project.parent / "warehouse" / "shop"
    assert DeltaTable.is_deltatable(str(shop / "ops_history"))
    assert not (shop / "maintenance_history").exists()


def test_no_history_table_for_a_project_without_the_source(project: Path, dbt: Dbt) -> None:
    (project / "models" / "maintenance" / "_maintenance__sources.yml").unlink()

    seeded = dbt(project, "seed", "--select", "order_statuses")

    assert seeded.success, seeded.exception
    assert not (project.parent / "warehouse" / "shop" / "maintenance_history").exists()
