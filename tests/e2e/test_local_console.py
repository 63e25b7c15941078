"""``mode: local`` keeps Hive's and the JVM's start-up noise out of dbt's console.

A Delta table rebuilt on classic local Spark with Hive's metastore (``mode: local``) makes Hive
refuse the schema change before Spark stores the table in its own format: Hive's
``HiveAlterHandler`` logged an ERROR with a stack trace of about 140 lines, and
``HiveExternalCatalog``, ``HiveConf`` and ``SessionState`` warned, on every rebuild, while the
build passed. dbt runs twice in one process of its own here (classic Spark cannot share the test
process with Spark Connect), the second run a rebuild of the table, and its whole output is read.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.classic import classic_env
from tests.helpers.paths import ROOT

pytestmark = [
    pytest.mark.slow,
    pytest.mark.classic_spark,
    pytest.mark.delta_jars,
    pytest.mark.timeout(1800),
]

PROJECT = """
name: loc
version: "1.0.0"
config-version: 2
profile: loc
models:
  loc:
    +file_format: delta
    +materialized: table
"""

PROFILES = """
loc:
  target: dev
  outputs:
    dev:
      type: sparkdelta
      method: session
      mode: local
      schema: loc
      warehouse: "{{ env_var('LOC_WAREHOUSE') }}"
      threads: 1
"""

TWO_RUNS = """
import sys
from dbt.cli.main import dbtRunner
runner = dbtRunner()
args = ["run", "--project-dir", sys.argv[1], "--profiles-dir", sys.argv[1]]
ok = [runner.invoke(args).success for _ in range(2)]
print("RUNS", *ok)
"""


def test_a_rebuild_on_mode_local_prints_no_hive_warning_or_stack_trace(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "models").mkdir(parents=True)
    (project / "dbt_project.yml").write_text(PROJECT)
    (project / "profiles.yml").write_text(PROFILES)
    (project / "models" / "t1.sql").write_text("select id, id * 2 as v from range(0, 10)\n")
    env = {**classic_env(), "LOC_WAREHOUSE": str(tmp_path / "warehouse"), "PYTHONPATH": str(ROOT)}
    env.pop("SPARKDELTA_WAREHOUSE", None)
    done = subprocess.run(
        [sys.executable, "-c", TWO_RUNS, str(project)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=1500,
        check=False,
    )
    console = done.stdout + done.stderr
    assert "RUNS True True" in done.stdout, console[-5000:]
    assert (tmp_path / "warehouse" / "loc" / "t1" / "_delta_log").is_dir()
    for noise in (
        "HiveAlterHandler",
        "WARN HiveExternalCatalog",
        "WARN HiveConf",
        "InvocationTargetException",
        # the JVM's start (issue 65 item 14): Spark's default profile, the loopback host name,
        # the native Hadoop library, a schema directory already there
        "Using Spark's default log4j profile",
        "resolves to a loopback address",
        "NativeCodeLoader",
        "was created concurrently",
        "RetryingHMSHandler",
    ):
        assert noise not in console, console[-5000:]
