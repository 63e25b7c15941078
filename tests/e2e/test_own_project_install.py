"""docs/engines.md's "your own project" path, followed as a new user would.

A fresh virtual environment (``python3.11 -m venv``), the repository installed into it with a
plain, non-editable ``pip install`` (pinned by constraints.txt; pip's cache makes a rerun quick),
a two-model dbt project of the test's own built with ``dbt run`` on the embedded engine, and the
Delta jars fetched and checked by the installed package (``python -m python_ops jars fetch``).
Nothing of the checkout is on the path: the processes run without ``PYTHONPATH``, outside the
checkout, so they can only use what pip installed.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from python_ops.delta_jars import pinned_jars
from tests.helpers.paths import NOT_COPIED, ROOT

# a pip install of the whole stack, pip cache warm: 214 s at load ~10 and 460 s at load 20-29 on
# a 2-core machine shared by other test runs (the whole test 560 s there)
pytestmark = [pytest.mark.slow, pytest.mark.timeout(2400)]

PYTHON = shutil.which("python3.11")

PROJECT = """
name: own_shop
version: "1.0.0"
config-version: 2
profile: own
models:
  own_shop:
    +file_format: delta
    +materialized: table
    +post-hook: "{{ maintain_model() }}"
    +maintenance_on_error: fail
"""

PROFILES = """
own:
  target: dev
  outputs:
    dev:
      type: sparkdelta
      method: session
      mode: embedded
      schema: own
      warehouse: "{{ env_var('OWN_WAREHOUSE') }}"
      threads: 1
"""

ORDERS = "select id as order_id, id % 5 as customer_id, id * 1.5 as amount from range(0, 50)\n"
CUSTOMER_TOTALS = """
select customer_id, count(*) as orders, sum(amount) as amount
from {{ ref('orders') }}
group by customer_id
"""


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"{args[:3]} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.mark.skipif(PYTHON is None, reason="python3.11 is not on PATH on this machine")
def test_a_user_installs_the_package_into_a_fresh_venv_and_builds_their_own_project(
    tmp_path: Path,
) -> None:
    assert PYTHON is not None
    source = tmp_path / "source"  # a copy: pip's build writes build/ and egg-info beside it
    shutil.copytree(ROOT, source, symlinks=True, ignore=NOT_COPIED)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env.pop("SPARKDELTA_DELTA_JARS", None)
    venv = tmp_path / "venv"
    _run([PYTHON, "-m", "venv", str(venv)], tmp_path, env)
    started = time.perf_counter()
    _run(
        [str(venv / "bin/python"), "-m", "pip", "install", "--quiet", str(source)],
        tmp_path,
        {**env, "PIP_CONSTRAINT": str(ROOT / "constraints.txt")},
    )
    print(f"pip install (non-editable, constraints.txt): {time.perf_counter() - started:.1f} s")

    installed = _run(
        [
            str(venv / "bin/python"),
            "-c",
            "import python_ops, importlib.metadata as m; "
            "print(python_ops.__file__); print(m.version('delta-spark'))",
        ],
        tmp_path,
        env,
    ).stdout.split()
    assert installed[0].startswith(str(venv)), installed  # the installed copy, not the checkout
    assert installed[1] == pinned_jars()[0].coordinate.rsplit(":", 1)[1]  # delta-spark = jars

    project = tmp_path / "own"
    (project / "models").mkdir(parents=True)
    (project / "dbt_project.yml").write_text(PROJECT)
    (project / "profiles.yml").write_text(PROFILES)
    (project / "models" / "orders.sql").write_text(ORDERS)
    (project / "models" / "customer_totals.sql").write_text(CUSTOMER_TOTALS)
    warehouse = tmp_path / "warehouse"
    build = _run(
        [
            str(venv / "bin/dbt"),
            "run",
            "--project-dir",
            str(project),
            "--profiles-dir",
            str(project),
        ],
        tmp_path,
        {**env, "OWN_WAREHOUSE": str(warehouse)},
    )
    assert "Completed successfully" in build.stdout, build.stdout[-2000:]
    for table in ("orders", "customer_totals"):
        assert (warehouse / "own" / table / "_delta_log").is_dir(), table
    # the maintenance macros came with the installed adapter: a run-operation maintains both
    vacuum = _run(
        [
            str(venv / "bin/dbt"),
            "run-operation",
            "vacuum_all",
            "--args",
            "{dry_run: true}",
            "--project-dir",
            str(project),
            "--profiles-dir",
            str(project),
        ],
        tmp_path,
        {**env, "OWN_WAREHOUSE": str(warehouse)},
    )
    history = warehouse / "own" / "maintenance_history" / "_delta_log"
    assert history.is_dir(), vacuum.stdout[-2000:]

    jars = tmp_path / "jars"
    fetched = _run(
        [str(venv / "bin/python"), "-m", "python_ops", "jars", "fetch", "--dest", str(jars)],
        tmp_path,
        env,
    )
    for pin in pinned_jars():
        jar = jars / pin.file_name
        assert hashlib.sha256(jar.read_bytes()).hexdigest() == pin.sha256
        assert f"{jar}: fetched from" in fetched.stdout, fetched.stdout
