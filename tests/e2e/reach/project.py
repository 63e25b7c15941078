"""A small dbt project for the reach tests, Delta tables written by delta-rs, dbt in-process."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import textwrap
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
from dbt.cli.main import dbtRunner, dbtRunnerResult
from deltalake import DeltaTable, write_deltalake

from python_ops.maintenance.history import HistoryRecord, HistoryStore

SCHEMA = "reach"
BATCHES = 12
DELTA_MODELS = ("orders", "customers")

PROJECT = """
name: {name}
version: "1.0.0"
config-version: 2
profile: {name}
vars:
  maintenance_history_location: "{lake}/maintenance_history"
models:
  {name}:
    +materialized: table
    +file_format: parquet
    +location_root: "{lake}"
    +post-hook: "{{{{ maintain_model() }}}}"
    +maintenance_min_small_files: 4
    # below the 168 h minimum: VACUUM's dry run finds the two-hour-old leftovers
    +maintenance_vacuum_retention_hours: 1
    +maintenance_vacuum_allow_short_retention: true
    orders:
      +maintenance_zorder_by: [customer_id]
"""

MODELS = {
    # the tests replace these two with Delta tables written by delta-rs
    "orders": "select 1 as order_id, 1 as customer_id, 'x' as day",
    "customers": "select 1 as customer_id, 'x' as name",
    # stays Parquet: the post-hook and the run-operations say why they leave it alone
    "plain_parquet": "select 1 as id",
}


def write_project(root: Path, name: str, profile: str) -> tuple[Path, Path]:
    """The project (with ``profiles.yml``) and its lake directory under ``root``."""
    lake = root / "lake"
    project = root / "project"
    (project / "models").mkdir(parents=True)
    (project / "dbt_project.yml").write_text(textwrap.dedent(PROJECT.format(name=name, lake=lake)))
    (project / "profiles.yml").write_text(textwrap.dedent(profile))
    for model, sql in MODELS.items():
        (project / "models" / f"{model}.sql").write_text(sql + "\n")
    return project, lake


def dbt(project: Path, *args: str, messages: list[str] | None = None) -> dbtRunnerResult:
    """``dbt <args>`` in-process on the project's profile; log messages go to ``messages``."""

    def collect(event: Any) -> None:
        if messages is not None:
            messages.append(str(event.info.msg))

    return dbtRunner(callbacks=[collect]).invoke(
        [*args, "--project-dir", str(project), "--profiles-dir", str(project)]
    )


def write_delta(location: Path, *, partitioned: bool) -> None:
    """Replace dbt's Parquet files with a Delta table of many small appends (delta-rs)."""
    shutil.rmtree(location)
    for batch in range(BATCHES):
        ids = list(range(batch * 50, batch * 50 + 50))
        data = pa.table(
            {
                "order_id": pa.array(ids, pa.int64()),
                "customer_id": pa.array([i * 7919 % 101 for i in ids], pa.int64()),
                "day": pa.array([f"2024-01-0{1 + i % 3}" for i in ids], pa.string()),
            }
        )
        write_deltalake(
            str(location), data, mode="append", partition_by=["day"] if partitioned else None
        )


def leave_untracked_file(location: Path, age_s: float = 7200) -> None:
    """An old Parquet file the table does not reference (a failed job's leftover)."""
    leftover = location / "part-00000-leftover-of-a-failed-job.parquet"
    leftover.write_bytes(b"x" * 100)
    then = time.time() - age_s
    os.utime(leftover, (then, then))


def parquet_files(location: Path) -> list[Path]:
    return sorted(location.rglob("*.parquet"))


def rows_and_checksum(location: Path) -> tuple[int, str]:
    """Row count and a checksum of the sorted rows (order-independent)."""
    table = DeltaTable(str(location)).to_pyarrow_table()
    rows = sorted(json.dumps(r, sort_keys=True, default=str) for r in table.to_pylist())
    return len(rows), hashlib.sha256("\n".join(rows).encode()).hexdigest()


def history(lake: Path) -> list[HistoryRecord]:
    return HistoryStore(str(lake / "maintenance_history")).records()
