"""Delta's own SQL where the engine has Delta: the probe, the statements, the history read-back.

No engine here has Delta (its JVM jars come from Maven Central, which these machines cannot
reach), so the statements go to a recording stand-in for such an engine; the real run is the
last test, skipped here. ``LazySession`` (the embedded ops engine for thrift/http/odbc) runs on
real Sail.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import write_deltalake

from python_ops.ops.optimize.execute import WRITER_DELTA_SQL, optimize, optimize_statements
from python_ops.ops.optimize.plan import plan_optimize
from python_ops.spark_sessions import DeltaSql, LazySession


def small_files(location: Path, batches: int = 6, *, one_file_day: bool = True) -> None:
    """One file per batch in partition ``it's``; partition ``2024-01-01`` gets one file only."""
    for batch in range(batches):
        ids = list(range(batch * 30, batch * 30 + 30))
        days = ["2024-01-01" if one_file_day and batch == 0 and i % 2 else "it's" for i in ids]
        data = pa.table(
            {
                "id": pa.array(ids, pa.int64()),
                "customer_id": pa.array([i % 11 for i in ids], pa.int64()),
                "day": pa.array(days, pa.string()),
            }
        )
        write_deltalake(str(location), data, mode="append", partition_by=["day"])


class DeltaEngine:
    """Records statements and answers as Spark with Delta would (history newest first)."""

    def __init__(self, version: int, *, metrics_as_json: bool = False) -> None:
        self.version = version
        self.statements: list[str] = []
        self.metrics_as_json = metrics_as_json

    def __call__(self, statement: str) -> list[dict[str, Any]]:
        self.statements.append(statement)
        if statement.startswith("DESCRIBE HISTORY") and statement.endswith("LIMIT 1"):
            return [{"version": self.version, "operation": "WRITE"}]
        if statement.startswith("DESCRIBE HISTORY"):
            metrics = {
                "numAddedFiles": "1",
                "numRemovedFiles": "6",
                "numAddedBytes": "900",
                "numRemovedBytes": "4000",
            }
            return [
                {
                    "version": self.version + 1,
                    "operation": "OPTIMIZE",
                    # over thrift a map column arrives as JSON text
                    "operationMetrics": json.dumps(metrics) if self.metrics_as_json else metrics,
                },
                {"version": self.version, "operation": "WRITE", "operationMetrics": {}},
            ]
        return []


class NoDelta:
    """An engine without Delta's SQL: every statement is a parse error."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, statement: str) -> list[dict[str, Any]]:
        self.calls += 1
        raise RuntimeError("[PARSE_SYNTAX_ERROR] Syntax error at or near 'LIMIT'")


@pytest.mark.parametrize("metrics_as_json", [False, True])
def test_optimize_hands_our_scope_to_delta_sql_and_reads_its_history(
    tmp_path: Path, metrics_as_json: bool
) -> None:
    table = tmp_path / "events"
    small_files(table)
    engine = DeltaEngine(version=5, metrics_as_json=metrics_as_json)
    sql = DeltaSql(engine, where="a Delta cluster", names={str(table): "shop.events"})
    # partition 2024-01-01 has one file: only it's has work, so the statement names it
    result = optimize(str(table), min_small_files=2, target_size_bytes=64 * 1024 * 1024, sql=sql)
    assert engine.statements == [
        "DESCRIBE HISTORY shop.events LIMIT 1",
        f"SET spark.databricks.delta.optimize.maxFileSize = {64 * 1024 * 1024}",
        "OPTIMIZE shop.events WHERE (`day` = 'it\\'s')",
        "DESCRIBE HISTORY shop.events LIMIT 20",
    ]
    assert result.writer == f"{WRITER_DELTA_SQL} on a Delta cluster"
    assert result.commits == (6,)
    assert (result.files_added, result.files_removed) == (1, 6)
    assert (result.bytes_added, result.bytes_removed) == (900, 4000)
    assert result.partitions_optimized == 1


def test_z_order_within_a_where_scope(tmp_path: Path) -> None:
    table = tmp_path / "events"
    small_files(table)
    plan = plan_optimize(str(table), zorder_by=["customer_id", "id"], where="day = '2024-01-01'")
    assert optimize_statements(plan, "shop.events")[1] == (
        "OPTIMIZE shop.events WHERE (`day` = '2024-01-01') ZORDER BY (`customer_id`, `id`)"
    )


def test_every_partition_with_work_needs_no_where_and_paths_are_quoted(tmp_path: Path) -> None:
    table = tmp_path / "odd`name"
    small_files(table, one_file_day=False)
    plan = plan_optimize(str(table), min_small_files=2)
    assert len(plan.work) == len(plan.partitions) == 1
    statements = optimize_statements(plan, DeltaSql(NoDelta(), where="x").table(plan.location))
    assert statements[1] == f"OPTIMIZE delta.`{str(table).replace('`', '``')}`"


def test_no_delta_answer_is_asked_once_and_routes_to_delta_rs(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    small_files(first)
    small_files(second)
    engine = NoDelta()
    sql = DeltaSql(engine, where="a cluster without Delta", key=("test", str(tmp_path)))
    results = [optimize(str(t), min_small_files=2, sql=sql.named({})) for t in (first, second)]
    assert engine.calls == 1  # the answer is kept for the engine (key), across named copies
    assert [r.writer for r in results] == ["delta-rs optimize.compact"] * 2
    assert all(r.files_removed == 6 for r in results), results


def test_a_no_op_or_a_dry_run_sends_no_statement(tmp_path: Path) -> None:
    table = tmp_path / "t"
    small_files(table, batches=1)
    engine = DeltaEngine(version=0)
    optimize(str(table), min_small_files=2, sql=DeltaSql(engine, where="x"))
    small_files(table, batches=3)
    optimize(str(table), min_small_files=2, dry_run=True, sql=DeltaSql(engine, where="x"))
    assert engine.statements == []


def test_lazy_session_starts_the_embedded_engine_on_first_use_only() -> None:
    lazy = LazySession({"spark.hadoop.fs.s3a.endpoint": "http://127.0.0.1:9"})
    try:
        # storage settings are read without starting anything
        assert lazy.conf.get("spark.hadoop.fs.s3a.endpoint", None) == "http://127.0.0.1:9"
        assert lazy.conf.get("spark.hadoop.fs.s3a.region", None) is None
        assert not lazy.started
        assert lazy.range(3).count() == 3  # first real use starts Sail
        assert lazy.started
        assert lazy.starts == 1
        assert lazy.conf.get("spark.hadoop.fs.s3a.endpoint") == "http://127.0.0.1:9"
        assert lazy.createDataFrame(pa.table({"x": [1, 2]})).count() == 2
        assert lazy.starts == 1
    finally:
        lazy.stop()
    assert not lazy.started


def _delta_jars() -> list[Path]:
    ivy = Path.home() / ".ivy2" / "jars"
    return sorted(ivy.glob("io.delta_delta-spark_2.13-*.jar")) if ivy.is_dir() else []


@pytest.mark.delta_jars
@pytest.mark.skipif(
    not _delta_jars(),
    reason="needs the Delta JVM jars (io.delta:delta-spark_2.13; Maven Central unreachable)",
)
def test_optimize_runs_as_delta_sql_on_a_delta_enabled_session(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        from delta import configure_spark_with_delta_pip
        from pyspark.sql import SparkSession
        from python_ops.ops.optimize.execute import optimize
        from python_ops.spark_sessions import session_sql

        builder = (
            SparkSession.builder.master("local[1]")
            .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
            .config("spark.sql.catalog.spark_catalog",
                    "org.apache.spark.sql.delta.catalog.DeltaCatalog")
        )
        spark = configure_spark_with_delta_pip(builder).getOrCreate()
        location = "{tmp_path}/t"
        for i in range(6):
            spark.range(i * 10, i * 10 + 10).selectExpr("id", "id % 2 as p").write.format(
                "delta").mode("append").partitionBy("p").save(location)
        assert session_sql(spark).has_delta(location)
        result = optimize(location, spark=spark, zorder_by=["id"], min_small_files=2)
        assert result.writer.startswith("Delta OPTIMIZE (SQL)"), result.writer
        assert result.files_removed == 12 and result.files_added == 2, result
        print(spark.sql(f"describe history delta.`{{location}}` limit 1").first()["operation"])
        """
    )
    env = {k: v for k, v in os.environ.items() if k != "SPARK_CONNECT_MODE_ENABLED"}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=600, env=env
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "OPTIMIZE"
