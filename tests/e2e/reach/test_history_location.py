"""The post-hook on a thrift profile with no history var and no ``location_root`` in the profile.

Then no setting says where the maintenance history goes; it goes where the cluster puts a
managed table of its name: ``<the schema's location in the catalog>/maintenance_history``
(``DESCRIBE SCHEMA EXTENDED``). Before, the post-hook failed every model with a Delta table,
even with ``on_error: warn``, asking for var ``maintenance_history_location``.

The server (a Spark Thrift Server with Delta) builds ``orders`` as a Delta table at the location
the model declares; the test appends small files to it with delta-rs (as another writer would),
and the next incremental run appends to it and runs the post-hook, whose OPTIMIZE runs on the
server (Delta's own) and records the history.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from dbt.cli.main import dbtRunner, dbtRunnerResult
from deltalake import DeltaTable, write_deltalake

from python_ops.maintenance.records.history import HistoryStore
from tests.helpers.spark_servers import SparkServer

pytest.importorskip("pyhive", reason="needs dbt-spark's PyHive extra (pip install -e '.[dev]')")

pytestmark = pytest.mark.slow

SCHEMA = "reach_history"

PROJECT = """
name: reach_history
version: "1.0.0"
config-version: 2
profile: reach_history
models:
  reach_history:
    +file_format: delta
    +location_root: "{lake}"
    +post-hook: "{{{{ maintain_model() }}}}"
    +maintenance_on_error: warn
    +maintenance_min_small_files: 4
"""

ORDERS = """
{{ config(materialized='incremental', incremental_strategy='append') }}
select 1000 as order_id, 1 as customer_id, '2024-01-01' as day
"""

PROFILES = f"""
reach_history:
  target: thrift
  outputs:
    thrift:
      type: sparkdelta
      method: thrift
      host: 127.0.0.1
      port: {{port}}
      user: dbt
      schema: {SCHEMA}
      connect_retries: 0
      poll_interval: 1
      threads: 1
"""


def dbt(project: Path, *args: str, messages: list[str] | None = None) -> dbtRunnerResult:
    """``dbt <args>`` in-process on the project's profile; log messages go to ``messages``."""

    def collect(event: Any) -> None:
        if messages is not None:
            messages.append(str(event.info.msg))

    return dbtRunner(callbacks=[collect]).invoke(
        [*args, "--project-dir", str(project), "--profiles-dir", str(project)]
    )


def append_small_files(location: Path, batches: int = 12) -> None:
    """Append ``batches`` one-file commits to the Delta table at ``location`` (delta-rs)."""
    for batch in range(batches):
        ids = list(range(batch * 50, batch * 50 + 50))
        data = pa.table(
            {
                "order_id": pa.array(ids, pa.int32()),
                "customer_id": pa.array([i * 7919 % 101 for i in ids], pa.int32()),
                "day": pa.array([f"2024-01-0{1 + i % 3}" for i in ids], pa.string()),
            }
        )
        write_deltalake(str(location), data, mode="append")


def test_post_hook_on_thrift_records_history_beside_the_schema(
    thrift_server: SparkServer, tmp_path: Path
) -> None:
    lake, project = tmp_path / "lake", tmp_path / "project"
    (project / "models").mkdir(parents=True)
    (project / "dbt_project.yml").write_text(textwrap.dedent(PROJECT.format(lake=lake)))
    (project / "profiles.yml").write_text(PROFILES.format(port=thrift_server.port))
    (project / "models" / "orders.sql").write_text(ORDERS)

    first = dbt(project, "run")
    assert first.success, first.exception
    append_small_files(lake / "orders")  # 12 small files: compaction is due

    messages: list[str] = []
    second = dbt(project, "run", messages=messages)

    assert second.success, second.exception
    expected = thrift_server.workdir / "spark-warehouse" / f"{SCHEMA}.db" / "maintenance_history"
    assert DeltaTable.is_deltatable(str(expected)), messages
    records = HistoryStore(str(expected)).records()
    assert {(r.model, r.op, r.status) for r in records} >= {("orders", "optimize", "succeeded")}
    assert any(m.startswith("maintenance orders: ") and "optimize" in m for m in messages), [
        m for m in messages if "maintenance" in m
    ]

    # No place for the history (a schema the catalog does not know: as Sail's catalog, which
    # gives schemas no location): maintenance cannot start; with on_error: warn that is a dbt
    # warning naming the fix, and the model still succeeds (it failed every model before).
    warned: list[str] = []
    third = dbt(
        project, "run", "--vars", "{maintenance_history_schema: no_such_schema}", messages=warned
    )
    assert third.success, third.exception
    reason = [m for m in warned if "did not run" in m]
    assert reason, warned
    assert "maintenance_history_location" in reason[0]
    assert any(m.startswith("maintenance orders: not run") for m in warned), warned
