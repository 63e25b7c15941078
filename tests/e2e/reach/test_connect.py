"""Maintenance on ``method: session`` with ``mode: attach`` to a real JVM Spark Connect server.

The server (from the installed pyspark) has no Delta: dbt builds the models as Parquet at their
declared locations, the test writes Delta tables there with delta-rs. VACUUM's selection runs as
a DataFrame program on the server (its Spark UI lists the anti-join), and the Delta probe gets a
parse error there, so OPTIMIZE runs through delta-rs in the dbt process.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from dbt.cli.main import dbtRunnerResult

from python_ops.ops.health import table_health
from tests.e2e.reach.project import (
    DELTA_MODELS,
    MODELS,
    SCHEMA,
    dbt,
    history,
    leave_untracked_file,
    parquet_files,
    rows_and_checksum,
    write_delta,
    write_project,
)
from tests.helpers.spark_servers import SparkServer

pytestmark = pytest.mark.slow

PROFILES = """
reach_connect:
  target: connect
  outputs:
    connect:
      type: sparkdelta
      method: session
      mode: attach
      connect_url: sc://127.0.0.1:{port}
      schema: {schema}
      threads: 1
"""


@dataclass
class Scenario:
    project: Path
    lake: Path
    server: SparkServer
    run: dbtRunnerResult
    run_messages: list[str]


def anti_joins(server: SparkServer) -> int:
    """SQL executions on the server whose plan has VACUUM's selection anti-join."""
    executions = server.ui("sql?details=true&planDescription=true&length=10000")
    return sum(1 for e in executions if "LeftAnti" in e.get("planDescription", ""))


@pytest.fixture(scope="module")
def scenario(
    connect_server: SparkServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Scenario]:
    from dbt.adapters.sparkdelta.engine import shutdown_engines

    profile = PROFILES.format(port=connect_server.port, schema=SCHEMA)
    project, lake = write_project(
        tmp_path_factory.mktemp("reach-connect"), "reach_connect", profile
    )
    messages: list[str] = []
    run = dbt(project, "run", messages=messages)
    write_delta(lake / "orders", partitioned=True)
    write_delta(lake / "customers", partitioned=False)
    for model in DELTA_MODELS:
        leave_untracked_file(lake / model)
    yield Scenario(project, lake, connect_server, run, messages)
    shutdown_engines()  # the attached Connect client, before the server stops


def test_dbt_run_on_spark_connect_skips_non_delta_tables(scenario: Scenario) -> None:
    assert scenario.run.success, scenario.run.exception
    skipped = [m for m in scenario.run_messages if "skipped: not a Delta table" in m]
    assert len(skipped) == len(MODELS), scenario.run_messages


def test_vacuum_selection_runs_on_the_connect_server(scenario: Scenario) -> None:
    on_disk = {m: parquet_files(scenario.lake / m) for m in DELTA_MODELS}
    before = anti_joins(scenario.server)
    result = dbt(scenario.project, "run-operation", "vacuum_all", "--args", "{dry_run: true}")
    assert result.success, result.exception
    # one selection per Delta model, executed by the server
    assert anti_joins(scenario.server) - before == len(DELTA_MODELS)
    dry = [r for r in history(scenario.lake) if r.op == "vacuum" and r.dry_run]
    assert {r.model for r in dry} == set(DELTA_MODELS)
    assert all(r.status == "succeeded" and r.files_removed == 1 for r in dry), dry
    for model, files in on_disk.items():
        assert parquet_files(scenario.lake / model) == files


def test_no_delta_on_the_server_routes_optimize_to_delta_rs(scenario: Scenario) -> None:
    before = {m: rows_and_checksum(scenario.lake / m) for m in DELTA_MODELS}
    files = {m: table_health(str(scenario.lake / m)).num_files for m in DELTA_MODELS}
    started = time.perf_counter()
    result = dbt(scenario.project, "run-operation", "maintain_all")
    print(f"maintain_all on Spark Connect: {time.perf_counter() - started:.2f} s")
    assert result.success, result.exception
    # the server was asked (a statement only Delta knows) and could not parse it
    log = scenario.server.log_text()
    assert "DESCRIBE HISTORY " in log
    assert "PARSE_SYNTAX_ERROR" in log
    records = {r.model: r for r in history(scenario.lake) if r.op == "optimize" and not r.dry_run}
    assert set(records) == set(DELTA_MODELS)
    for model, record in records.items():
        assert record.status == "succeeded", record.error
        writer = json.loads(record.parameters)["writer"]
        assert writer.startswith(("delta-rs", "python_ops z-order")), writer
        assert table_health(str(scenario.lake / model)).num_files < files[model]
        assert rows_and_checksum(scenario.lake / model) == before[model]
