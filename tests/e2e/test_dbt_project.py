"""The example project end to end through real dbt (in-process dbtRunner) on real engines."""

from __future__ import annotations

from pathlib import Path

import pyarrow.compute as pc
import pytest
import yaml
from deltalake import DeltaTable

from dbt.adapters.sparkdelta.engines import shutdown_engines
from python_ops.delta.log.commits import read_history
from tests.helpers.dbt_runs import CUSTOMERS, PER_BATCH, Dbt
from tests.helpers.vacuum import content, untracked

pytestmark = pytest.mark.slow


def table(warehouse: Path, name: str) -> DeltaTable:
    return DeltaTable(str(warehouse / "shop" / name))


def test_build_twice_in_separate_engine_sessions(
    project: Path, dbt: Dbt, capfd: pytest.CaptureFixture[str]
) -> None:
    warehouse = project.parent / "warehouse"
    first = dbt(project, "build", batch=0)
    assert first.success, first.exception
    fct = table(warehouse, "fct_orders")
    assert fct.metadata().partition_columns == ["order_date"]
    assert fct.to_pyarrow_table().num_rows == PER_BATCH
    assert table(warehouse, "dim_customers").to_pyarrow_table().num_rows == CUSTOMERS
    assert table(warehouse, "raw_products").to_pyarrow_table().num_rows == 20

    shutdown_engines()  # the next invocation gets a new Sail server with an empty catalog
    second = dbt(project, "build", batch=1)
    assert second.success, second.exception
    failed = [r.node.name for r in second.result if r.status not in ("success", "pass")]
    assert failed == []

    fct = table(warehouse, "fct_orders")
    rows = fct.to_pyarrow_table()
    assert rows.num_rows == 2 * PER_BATCH
    assert pc.sum(rows.column("order_id")).as_py() == sum(range(2 * PER_BATCH))
    # status changes of batch-0 orders were merged into their rows, not appended
    assert "shipped" in set(rows.column("status").to_pylist())
    history = read_history(str(warehouse / "shop" / "fct_orders"))
    # the data commits, and after the merge the post-hook's Z-order (the model's maintenance
    # config); the create wrote one file per partition, which a Z-order would not improve
    assert [
        "OPTIMIZE" if "zOrderBy" in c.operation_parameters else c.operation for c in history
    ] == ["OPTIMIZE", "MERGE", "CREATE TABLE"]
    # seeds are rebuilt (drop + create), not appended to
    assert table(warehouse, "raw_products").to_pyarrow_table().num_rows == 20
    summary = table(warehouse, "customer_order_summary").to_pyarrow_table()
    assert pc.sum(summary.column("order_count")).as_py() == 2 * PER_BATCH

    shutdown_engines()
    tested = dbt(project, "test")
    assert tested.success, tested.exception
    assert len(tested.result) == 31
    assert all(r.status == "pass" for r in tested.result)

    shutdown_engines()
    capfd.readouterr()
    health = dbt(project, "run-operation", "print_table_health", "--args", "{select: [fct_orders]}")
    assert health.success, health.exception
    out = capfd.readouterr().out
    line = next(line for line in out.splitlines() if line.startswith("shop.fct_orders"))
    assert line.split()[1] == "2"  # the create, one merge, its Z-order
    assert line.split()[-1] == "order_date"
    assert " KB " in line  # the size in scaled units, not "0.0" in an MB column

    # VACUUM through the adapter method: a failed job's leftover goes, the table stays whole
    fct_path = warehouse / "shop" / "fct_orders"
    partition = next(p for p in fct_path.iterdir() if p.name.startswith("order_date="))
    leftover = untracked(fct_path, f"{partition.name}/part-failed-job.parquet", days=30)
    before = content(fct_path)
    args = "{model: fct_orders, dry_run: false}"
    vacuumed = dbt(project, "run-operation", "vacuum_table", "--args", args)
    assert vacuumed.success, vacuumed.exception
    assert "deleted from shop.fct_orders: 1 file (" in capfd.readouterr().out
    assert not leftover.exists()
    assert content(fct_path) == before


def test_unknown_mode_in_profile_is_one_clear_error(project: Path, dbt: Dbt) -> None:
    profiles = project / "profiles_example" / "profiles.yml"
    profiles.write_text(profiles.read_text().replace("mode: embedded", "mode: turbo"))
    result = dbt(project, "build")
    assert not result.success
    assert "'mode' has bad value 'turbo'" in str(result.exception)


def test_attach_mode_with_a_spark_connect_url(
    project: Path, dbt: Dbt, sail_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    warehouse = project.parent / "attached-warehouse"
    monkeypatch.setenv("SPARK_CONNECT_URL", sail_server)
    # the attached server places the tables under the profile's location_root
    profiles = project / "profiles_example" / "profiles.yml"
    settings = yaml.safe_load(profiles.read_text())
    settings["sparkdelta_shop"]["outputs"]["connect"]["location_root"] = str(warehouse)
    profiles.write_text(yaml.safe_dump(settings))
    result = dbt(
        project,
        "build",
        "--select",
        "raw_products",
        "stg_products",
        "dim_products",
        "--indirect-selection",
        "cautious",
        target="connect",
    )
    assert result.success, result.exception
    dim = DeltaTable(str(warehouse / "shop" / "dim_products")).to_pyarrow_table()
    assert dim.num_rows == 20
    assert pc.sum(dim.column("product_id")).as_py() == sum(range(1, 21))
