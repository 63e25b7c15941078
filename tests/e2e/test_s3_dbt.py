"""The example project with its tables on S3 (profile target embedded_s3): post-hook and ops."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from deltalake import DeltaTable

from python_ops.maintenance.records.history import HistoryStore
from tests.helpers.dbt_runs import Dbt
from tests.helpers.s3 import S3Bucket, delta_options

pytestmark = pytest.mark.slow


def test_post_hook_maintains_a_model_on_s3(
    project: Path,
    dbt: Dbt,
    s3: S3Bucket,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root = s3.uri("shop")
    monkeypatch.setenv("SPARKDELTA_LOCATION_ROOT", root)
    built = dbt(project, "build", target="embedded_s3")
    assert built.success, built.exception
    fct = f"{root}/shop/fct_orders"
    assert any(k.startswith("shop/shop/fct_orders/_delta_log/") for k in s3.keys("shop/"))
    assert not (project.parent / "warehouse" / "shop" / "fct_orders").exists()

    history = HistoryStore(f"{root}/shop/maintenance_history")
    before = len(history.records())
    ran = dbt(
        project,
        "run",
        "--select",
        "landing_orders",
        "stg_orders",
        "fct_orders",
        batch=1,
        target="embedded_s3",
    )
    assert ran.success, ran.exception
    new: list[Any] = history.records()[before:]
    assert [(r.model, r.op, r.status) for r in new] == [("fct_orders", "optimize", "succeeded")]
    assert new[0].table_location == fct
    table = DeltaTable(fct, storage_options=delta_options(s3.endpoint))
    assert table.version() == new[0].version_after
    orders = table.to_pyarrow_table(columns=["order_id"]).column("order_id").to_pylist()
    assert len(orders) == len(set(orders)) > 0  # the merge kept one row per order

    dry = dbt(
        project, "run-operation", "vacuum_all", "--args", "{dry_run: true}", target="embedded_s3"
    )
    assert dry.success, dry.exception
    assert {r.model for r in history.records()[before + 1 :]} >= {"fct_orders", "dim_customers"}
