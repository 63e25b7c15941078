"""The example project says what it does: comments beside values agree with them.

``profiles_example/profiles.yml`` starts servers with ``spark-submit``; the commands must work
from the repository root as written (``tests/integration/test_example_commands.py`` runs them).
"""

from __future__ import annotations

import importlib.util
import re
from typing import Any

import yaml

from python_ops.delta.table.properties import (
    DEFAULT_RETENTION,
    DELETED_FILE_RETENTION,
    LOG_RETENTION,
)
from tests.helpers.paths import ROOT

DELTA_VACUUM_HOURS = DEFAULT_RETENTION[DELETED_FILE_RETENTION].total_seconds() / 3600
DELTA_LOG_DAYS = DEFAULT_RETENTION[LOG_RETENTION].days
PATH_PREFIX = 'PATH="$PWD/.venv/bin:$PATH" spark-submit'


def test_the_landing_folder_comment_matches_its_retentions() -> None:
    text = (ROOT / "dbt_project.yml").read_text()
    landing = yaml.safe_load(text)["models"]["shop_lakehouse"]["landing"]
    vacuum_hours = landing["+maintenance_vacuum_retention_hours"]
    log_days = landing["+maintenance_log_retention_days"]
    # "short history" is the log's: shorter than Delta's default; VACUUM stays at Delta's
    assert log_days < DELTA_LOG_DAYS
    assert vacuum_hours == DELTA_VACUUM_HOURS
    assert "+maintenance_vacuum_allow_short_retention" not in landing
    block = text[text.index("    landing:") : text.index("    staging:")]
    comment = " ".join(
        line.strip().lstrip("#").strip() for line in block.splitlines() if "#" in line
    )
    assert f"keep their log history short ({log_days:g} days, not Delta's {DELTA_LOG_DAYS})" in (
        comment
    )
    assert f"VACUUM keeps Delta's {DELTA_VACUUM_HOURS:g} h" in comment


def spark_submit_commands() -> list[str]:
    """The first line of each ``spark-submit`` command in the example profiles' comments."""
    text = (ROOT / "profiles_example" / "profiles.yml").read_text()
    return [
        line.split("#", 1)[1].strip()
        for line in text.splitlines()
        if re.search(r"#   \S", line) and "spark-submit" in line  # a command, not prose
    ]


def test_every_spark_submit_command_runs_from_the_repository_root() -> None:
    commands = spark_submit_commands()
    assert len(commands) == 3  # spark_submit, connect, thrift
    # .venv/bin/spark-submit alone cannot find its Spark (no SPARK_HOME, python3 without pyspark)
    assert all(command == PATH_PREFIX for command in commands), commands


def _run_example() -> Any:
    spec = importlib.util.spec_from_file_location("run_example", ROOT / "scripts/run_example.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_demo_says_why_size_on_disk_grew_after_optimize() -> None:
    job = _run_example()
    before = {"fct_orders": (7, 71_200, 487_000, 26), "dim_customers": (1, 9_000, 9_000, 3)}
    after = {"fct_orders": (3, 42_100, 529_000, 29), "dim_customers": (1, 9_000, 9_000, 3)}
    note = job.disk_note(before, after, {"fct_orders": 336.0, "dim_customers": 168.0})
    assert note.startswith("size on disk grew by 42.0 KB (fct_orders): OPTIMIZE wrote new files")
    assert "until they are older than the model's VACUUM retention (336 h)" in note
    assert job.disk_note(before, before, {}) == ""
