"""Attach mode on the process's classic (JVM) Spark session, as under ``spark-submit``."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.e2e.reach.project import (
    Scenario,
    check_build,
    check_incremental_merge,
    check_maintain_all,
    check_report,
    new_process,
    run_scenario,
    write_project,
)
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
        from dbt.adapters.sparkdelta.engines import get_engine, shutdown_engines

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


def spark_submit(lake: Path) -> list[str]:
    """``spark-submit`` (the pyspark package's) with the project's Delta jars and a catalog.

    The session's catalog is Spark's own (Hive support, Derby metastore in ``lake``), so the
    tables outlive each ``spark-submit`` process, as a scheduled job's would.
    """
    import pyspark

    from dbt.adapters.sparkdelta.engines import local_session_conf
    from python_ops.delta_jars import require_delta_jars

    jars = require_delta_jars()
    command = [
        str(Path(pyspark.__file__).resolve().parent / "bin" / "spark-submit"),
        "--master",
        "local[2]",
        "--driver-class-path",
        os.pathsep.join(jars),
    ]
    for key, value in local_session_conf(str(lake), jars).items():
        command += ["--conf", f"{key}={value}"]
    return command


@pytest.mark.slow
@pytest.mark.timeout(2400)  # two spark-submit processes: minutes on a busy machine
def test_attach_under_spark_submit_with_delta(tmp_path: Path) -> None:
    """The reach scenario, every dbt command in its own ``spark-submit`` process with Delta."""
    import pyspark

    project, lake = write_project(tmp_path, "spark-submit")
    submit = new_process(
        spark_submit(lake),
        env={
            "SPARK_HOME": str(Path(pyspark.__file__).resolve().parent),
            "PYSPARK_PYTHON": sys.executable,
            "PYSPARK_DRIVER_PYTHON": sys.executable,
            "SPARK_LOCAL_IP": "127.0.0.1",
        },
    )
    s: Scenario = run_scenario(
        "spark-submit", project, lake, first=submit, later=submit, maintain_in_later=True
    )
    print(
        f"\nspark-submit: build {s.build.seconds:.1f} s + maintain_all {s.maintain.seconds:.1f} s"
    )
    check_build(s)
    check_incremental_merge(s)
    check_maintain_all(s, delta_sql="Delta OPTIMIZE (SQL) on the classic Spark session")
    check_report(s)
    # the session was spark-submit's (attach), its catalog in the lake; no catalog journal
    assert (lake / "metastore_db").is_dir()
    assert not (lake / "_sparkdelta_catalog.json").exists()
