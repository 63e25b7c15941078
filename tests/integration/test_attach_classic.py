"""Attach mode on the process's classic (JVM) Spark session, as under spark-submit."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.helpers.classic import classic_env

pytestmark = pytest.mark.classic_spark


def run_classic(script: str) -> str:
    """Run a script with a classic JVM session in a fresh process; return its last output line."""
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env=classic_env(),
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout.strip().splitlines()[-1]


def test_attach_uses_the_classic_session_of_the_process(tmp_path: Path) -> None:
    # A subprocess: a JVM-backed session must not share this process with the Connect tests.
    script = textwrap.dedent(
        f"""
        from pyspark.sql import SparkSession
        from dbt.adapters.sparkdelta.engine import get_engine, shutdown_engines

        started = SparkSession.builder.master("local[1]").appName("host-job").getOrCreate()
        engine = get_engine(mode="attach", warehouse=None, connect_url=None)
        assert engine.spark is started, "attach must reuse the running session"
        engine.sql("create table t using parquet location '{tmp_path}/t' as select 41 + 1 as x")
        print(engine.sql("select x from t").collect()[0][0])
        shutdown_engines()
        assert not started.sparkContext._jsc.sc().isStopped(), "the host's session stays up"
        started.stop()
        """
    )
    assert run_classic(script) == "42"


def _delta_jars() -> list[Path]:
    ivy = Path.home() / ".ivy2" / "jars"
    return sorted(ivy.glob("io.delta_delta-spark_2.13-*.jar")) if ivy.is_dir() else []


@pytest.mark.delta_jars
@pytest.mark.skipif(
    not _delta_jars(),
    reason="needs the Delta JVM jars (io.delta:delta-spark_2.13 from Maven Central), "
    "which cannot be downloaded on this machine",
)
def test_attach_to_a_delta_enabled_classic_session(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        from delta import configure_spark_with_delta_pip
        from pyspark.sql import SparkSession
        from dbt.adapters.sparkdelta.engine import get_engine
        from python_ops.ops.health import table_health

        builder = (
            SparkSession.builder.master("local[1]")
            .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
            .config("spark.sql.catalog.spark_catalog",
                    "org.apache.spark.sql.delta.catalog.DeltaCatalog")
        )
        configure_spark_with_delta_pip(builder).getOrCreate()
        engine = get_engine(mode="attach", warehouse=None, connect_url=None)
        engine.sql("create table t using delta location '{tmp_path}/t' as select 1 as x")
        engine.sql("insert into t values (2)")
        print(table_health("{tmp_path}/t").num_files)
        """
    )
    assert run_classic(script) == "2"
