"""Snapshots are maintained like incremental models (issue 27).

dbt snapshots are Delta ``MERGE`` targets: every ``dbt snapshot`` adds files to the table. The
project's ``+post-hook: maintain_model()`` under ``snapshots:`` maintains one after it is built,
and the run-operations select and maintain snapshots as they do models.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from python_ops.maintenance.records.history import HistoryStore
from tests.helpers.dbt_runs import Dbt

pytestmark = pytest.mark.slow

SNAPSHOT = """
{% snapshot customers_snapshot %}
{{ config(
    target_schema='shop',
    unique_key='customer_id',
    strategy='check',
    check_cols=['customer_name'],
    file_format='delta',
    maintenance_min_small_files=2,
    maintenance_vacuum_retention_hours=336
) }}
select customer_id, concat(customer_name, ' v{{ var("batch") }}') as customer_name
from {{ ref('landing_customers') }}
where customer_id <= 20
{% endsnapshot %}
"""

SNAPSHOT_CONFIG = """
snapshot-paths: ["snapshots"]
snapshots:
  shop_lakehouse:
    +post-hook: "{{ maintain_model() }}"
    +maintenance_on_error: fail
"""


def test_a_snapshot_is_maintained_by_the_post_hook_and_the_run_operations(
    project: Path, dbt: Dbt
) -> None:
    (project / "snapshots").mkdir()
    (project / "snapshots" / "customers_snapshot.sql").write_text(SNAPSHOT)
    with (project / "dbt_project.yml").open("a") as handle:
        handle.write(SNAPSHOT_CONFIG)

    assert dbt(project, "run", "--select", "landing_customers").success
    for batch in range(3):  # each snapshot run MERGEs changed rows: one more small file
        run = dbt(project, "snapshot", batch=batch)
        assert run.success, run.exception

    warehouse = project.parent / "warehouse"
    table = warehouse / "shop" / "customers_snapshot"
    assert (table / "_delta_log").is_dir()
    records = HistoryStore(str(warehouse / "shop" / "maintenance_history")).records()
    ours = [r for r in records if r.model == "customers_snapshot"]
    assert ours, "the post-hook never maintained the snapshot"
    assert any(r.op == "optimize" and r.status == "succeeded" for r in ours), ours

    report = dbt(
        project,
        "run-operation",
        "vacuum_all",
        "--args",
        "{select: [customers_snapshot], dry_run: true}",
    )
    assert report.success, report.exception
    assert any(
        r.model == "customers_snapshot" and r.op == "vacuum" and r.dry_run
        for r in HistoryStore(str(warehouse / "shop" / "maintenance_history")).records()
    )


def _log_version(table: Path) -> int:
    return max(int(p.name[:20]) for p in (table / "_delta_log").glob("*.json"))


def test_a_misspelt_key_under_snapshots_stops_the_snapshot_before_it_writes(
    project: Path, dbt: Dbt
) -> None:
    (project / "snapshots").mkdir()
    (project / "snapshots" / "customers_snapshot.sql").write_text(SNAPSHOT)
    with (project / "dbt_project.yml").open("a") as handle:
        handle.write(SNAPSHOT_CONFIG)
    assert dbt(project, "run", "--select", "landing_customers").success
    assert dbt(project, "snapshot", batch=0).success
    table = project.parent / "warehouse" / "shop" / "customers_snapshot"
    version = _log_version(table)

    with (project / "dbt_project.yml").open("a") as handle:  # under snapshots: shop_lakehouse:
        handle.write("    +maintenance_vacum_retention_hours: 336\n")
    misspelt = dbt(project, "snapshot", batch=1)  # batch 1 changes every name: a MERGE is due
    assert not misspelt.success
    message = misspelt.result.results[0].message
    assert "'maintenance_vacum_retention_hours' has bad value 336" in message
    assert "Did you mean 'maintenance_vacuum_retention_hours'?" in message
    assert "The snapshot was not built: its table is unchanged" in message
    assert _log_version(table) == version  # refused before its MERGE, not after
