"""The example profiles' ``spark-submit`` commands work from the repository root as written.

``profiles_example/profiles.yml`` starts the Spark Connect and Thrift servers with the pyspark
package's ``spark-submit``; it is run here with the documented prefix (``--version``: the JVM
starts and exits, no server is left running).
"""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.helpers.classic import classic_env
from tests.helpers.paths import ROOT
from tests.unit.test_example_project import spark_submit_commands


@pytest.mark.classic_spark
@pytest.mark.parametrize("command", sorted(set(spark_submit_commands())))
def test_the_documented_spark_submit_runs_from_the_repository_root(command: str) -> None:
    assert command.endswith("spark-submit")  # its options follow on the next lines
    # a shell whose python3 has no pyspark, as on a machine where only the venv has it
    env = {**classic_env(), "PATH": os.pathsep.join(["/usr/bin", "/bin"])}
    env.pop("SPARK_HOME", None)
    done = subprocess.run(
        ["bash", "-c", f"{command} --version"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "version 4." in done.stdout + done.stderr
    assert "Could not find valid SPARK_HOME" not in done.stdout + done.stderr
