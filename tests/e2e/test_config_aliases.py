"""dbt-databricks habits: ``zorder`` and ``liquid_clustered_by`` are aliases of our keys.

The alias is resolved while dbt parses, so the manifest (which the post-hook, the
run-operations and ``python -m python_ops maintain`` all read) holds ``maintenance_zorder_by``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from dbt.cli.main import dbtRunner
from dbt_common.events.base_types import EventMsg

from python_ops.maintenance.configuration.config import parse_config
from python_ops.maintenance.selection.targets import node_config
from tests.helpers.dbt_runs import Dbt

pytestmark = pytest.mark.slow

OURS = "maintenance_zorder_by=['customer_id', 'order_id'],"


def edit_fct_orders(project: Path, replacement: str) -> None:
    model = project / "models" / "marts" / "fct_orders.sql"
    text = model.read_text()
    assert OURS in text
    model.write_text(text.replace(OURS, replacement, 1))


def fct_orders_config(project: Path, dbt: Dbt) -> dict[str, object]:
    parsed = dbt(project, "parse")
    assert parsed.success, parsed.exception
    return node_config(parsed.result.nodes["model.shop_lakehouse.fct_orders"])


def test_zorder_is_maintenance_zorder_by(project: Path, dbt: Dbt) -> None:
    edit_fct_orders(project, "zorder=['customer_id', 'order_id'],")

    config = fct_orders_config(project, dbt)

    assert "zorder" not in config
    assert config["maintenance_zorder_by"] == ["customer_id", "order_id"]
    assert parse_config("fct_orders", config).zorder_by == ("customer_id", "order_id")


def test_zorder_in_dbt_project_yml(project: Path, dbt: Dbt) -> None:
    edit_fct_orders(project, "")
    project_yml = project / "dbt_project.yml"
    text = project_yml.read_text()
    marts = "    marts:\n      +materialized: table\n"
    assert marts in text
    project_yml.write_text(text.replace(marts, marts + "      +zorder: customer_id\n", 1))

    config = fct_orders_config(project, dbt)

    assert config["maintenance_zorder_by"] == "customer_id"
    assert parse_config("fct_orders", config).zorder_by == ("customer_id",)


def test_zorder_and_maintenance_zorder_by_that_differ_are_refused(project: Path, dbt: Dbt) -> None:
    edit_fct_orders(project, OURS + " zorder=['order_id'],")

    parsed = dbt(project, "parse")

    assert not parsed.success
    message = str(parsed.exception)
    assert "config 'zorder' (['order_id']) and 'maintenance_zorder_by'" in message
    assert "are both set, to different values" in message
    assert "keep one of them" in message


def test_zorder_and_maintenance_zorder_by_that_agree_are_accepted(project: Path, dbt: Dbt) -> None:
    edit_fct_orders(project, OURS + " zorder='customer_id, order_id',")

    config = fct_orders_config(project, dbt)

    assert parse_config("fct_orders", config).zorder_by == ("customer_id", "order_id")


def test_liquid_clustered_by_is_maintenance_cluster_by(project: Path, dbt: Dbt) -> None:
    edit_fct_orders(project, "liquid_clustered_by=['customer_id'],")

    config = fct_orders_config(project, dbt)

    assert "liquid_clustered_by" not in config
    assert config["maintenance_cluster_by"] == ["customer_id"]
    assert parse_config("fct_orders", config).cluster_by == ("customer_id",)


def test_clustering_a_partitioned_model_is_refused_before_its_table_exists(
    project: Path, dbt: Dbt
) -> None:
    edit_fct_orders(project, "liquid_clustered_by=['customer_id'],")

    run = dbt(project, "run", "--select", "fct_orders")

    assert not run.success
    message = "\n".join(str(r.message) for r in run.result.results)
    assert "model 'fct_orders': setting 'maintenance_cluster_by' has bad value ['customer_id']" in (
        message
    )
    assert "Drop partition_by (clustering replaces it)" in message
    assert not (project.parent / "warehouse" / "marts" / "fct_orders").exists()


def test_clustering_on_the_embedded_engine_is_a_warning_naming_the_model(project: Path) -> None:
    (project / "models" / "marts" / "clustered_probe.sql").write_text(
        "{{ config(materialized='table', liquid_clustered_by=['id']) }} select 1 as id\n"
    )
    warnings: list[str] = []

    def collect(event: EventMsg) -> None:
        if event.info.level == "warn":
            warnings.append(event.info.msg)

    built = dbtRunner(callbacks=[collect]).invoke(
        [
            "run",
            "--select",
            "clustered_probe",
            "--project-dir",
            str(project),
            "--profiles-dir",
            str(project / "profiles_example"),
        ]
    )

    assert built.success, built.exception
    assert any(
        "model 'clustered_probe': maintenance_cluster_by is not applied on the embedded engine" in w
        and "mode: local or attach" in w
        for w in warnings
    ), warnings
