"""Maintenance over dbt-spark's ``thrift`` method, against a real Spark Thrift Server.

The server (from the installed pyspark) has no Delta, so dbt builds the models as Parquet at the
locations they declare (``location_root``); the test then writes Delta tables with delta-rs at
two of those locations, as another engine would. dbt's connection tells the adapter where each
table is; the ops run in the dbt process (the embedded ops engine only if one needs Spark), and
OPTIMIZE goes to delta-rs because the server answers the Delta probe with a parse error.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from dbt.cli.main import dbtRunnerResult

from python_ops.ops.health import table_health
from python_ops.spark_sessions import DeltaSql
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

pytest.importorskip("pyhive", reason="needs dbt-spark's PyHive extra (pip install -e '.[dev]')")

pytestmark = pytest.mark.slow

PROFILES = """
reach_thrift:
  target: thrift
  outputs:
    thrift:
      type: sparkdelta
      method: thrift
      host: 127.0.0.1
      port: {port}
      user: dbt
      schema: {schema}
      connect_retries: 0
      poll_interval: 1
      threads: 2
"""


@dataclass
class Scenario:
    project: Path
    lake: Path
    run: dbtRunnerResult
    run_messages: list[str]
    before: dict[str, tuple[int, str]]
    files_before: dict[str, int]


@pytest.fixture(scope="module")
def scenario(thrift_server: SparkServer, tmp_path_factory: pytest.TempPathFactory) -> Scenario:
    """dbt run on the thrift profile, then Delta tables at two of the models' locations."""
    profile = PROFILES.format(port=thrift_server.port, schema=SCHEMA)
    project, lake = write_project(tmp_path_factory.mktemp("reach-thrift"), "reach_thrift", profile)
    messages: list[str] = []
    run = dbt(project, "run", messages=messages)
    write_delta(lake / "orders", partitioned=True)
    write_delta(lake / "customers", partitioned=False)
    before = {m: rows_and_checksum(lake / m) for m in DELTA_MODELS}
    files = {m: table_health(str(lake / m)).num_files for m in DELTA_MODELS}
    return Scenario(project, lake, run, messages, before, files)


def test_dbt_run_with_the_post_hook_skips_non_delta_tables_and_says_why(
    scenario: Scenario,
) -> None:
    assert scenario.run.success, scenario.run.exception
    skipped = [m for m in scenario.run_messages if "skipped: not a Delta table" in m]
    assert len(skipped) == len(MODELS), scenario.run_messages
    assert any(
        m.startswith("maintenance plain_parquet: skipped: not a Delta table (no _delta_log at ")
        for m in skipped
    )


def test_maintain_all_compacts_the_delta_tables_and_records_history(scenario: Scenario) -> None:
    DeltaSql.forget_answers()  # another test may have asked this server already
    started = time.perf_counter()
    result = dbt(scenario.project, "run-operation", "maintain_all")
    print(f"maintain_all on thrift: {time.perf_counter() - started:.2f} s")
    assert result.success, result.exception
    records = [r for r in history(scenario.lake) if r.op == "optimize" and not r.dry_run]
    by_model = {r.model: r for r in records}
    assert set(by_model) == set(DELTA_MODELS), records
    for model, record in by_model.items():
        assert record.status == "succeeded", record.error
        # the server has no Delta: its answer to the probe routes OPTIMIZE to delta-rs
        writer = json.loads(record.parameters)["writer"]
        assert writer.startswith(("delta-rs", "python_ops z-order")), writer
        assert record.files_removed > record.files_added > 0
        location = scenario.lake / model
        assert table_health(str(location)).num_files < scenario.files_before[model]
        assert rows_and_checksum(location) == scenario.before[model]
    assert json.loads(by_model["orders"].parameters)["zorder_by"] == ["customer_id"]
    # Delta was asked for over dbt's connection, by the catalog's name, and refused to parse
    log = (scenario.project / "logs" / "dbt.log").read_text()
    assert f"DESCRIBE HISTORY {SCHEMA}." in log
    assert "PARSE_SYNTAX_ERROR" in log


def test_vacuum_all_dry_run_finds_untracked_files_and_deletes_nothing(
    scenario: Scenario,
) -> None:
    for model in DELTA_MODELS:
        leave_untracked_file(scenario.lake / model)
    on_disk = {m: parquet_files(scenario.lake / m) for m in DELTA_MODELS}
    result = dbt(scenario.project, "run-operation", "vacuum_all", "--args", "{dry_run: true}")
    assert result.success, result.exception
    dry = [r for r in history(scenario.lake) if r.op == "vacuum" and r.dry_run]
    assert {r.model for r in dry} == set(DELTA_MODELS)
    assert all(r.status == "succeeded" and r.files_removed == 1 for r in dry), dry
    for model, files in on_disk.items():
        assert parquet_files(scenario.lake / model) == files


def test_maintenance_report_on_thrift(
    scenario: Scenario, capsys: pytest.CaptureFixture[str]
) -> None:
    result = dbt(scenario.project, "run-operation", "maintenance_report")
    assert result.success, result.exception
    out = capsys.readouterr().out
    for model in DELTA_MODELS:
        assert f"\n{model} " in out, out
    assert "plain_parquet              not maintained: not a Delta table" in out, out
    assert "error:" not in out, out
