"""The purge's numbers come from the log alone; the command line names what would run it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq

from python_ops.delta.state.snapshot import read_snapshot
from python_ops.delta.writing.local_writer import LOCAL_DELTA_ENV
from python_ops.ops.health import table_health
from python_ops.ops.purge import purge

ROOT = Path(__file__).resolve().parents[2]


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "python_ops", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=300,
    )


def test_a_purge_dry_run_reads_the_deleted_share_from_the_log(fixture_table) -> None:
    table = fixture_table("table-with-dv-small")  # 10 rows, 2 deleted by a deletion vector
    health = table_health(str(table))
    assert (health.deleted_rows, health.deleted_row_share) == (2, 0.2)
    dry = purge(str(table), dry_run=True)
    assert (dry.rows, dry.deleted_rows, dry.files_to_rewrite) == (10, 2, 1)
    assert dry.partitions_due[0]["deleted_share"] == 0.2
    assert dry.commit is None
    assert purge(str(table), dry_run=True, deleted_ratio=0.2).partitions_due == ()
    out = _cli("purge", str(table), "--dry-run", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["deleted_rows"] == 2


def test_without_a_delta_writer_the_purge_runs_here(fixture_table) -> None:
    # embedded means embedded: no JVM may start (SPARKDELTA_LOCAL_DELTA=off), and the purge of
    # the fixture Delta wrote (rows 0 and 9 deleted by its deletion vector) runs in-process
    table = fixture_table("table-with-dv-small")
    rows_before = pq.read_table(next(table.glob("*.parquet"))).num_rows
    out = _cli("purge", str(table), env={LOCAL_DELTA_ENV: "off"})
    assert out.returncode == 0, out.stderr
    assert "python_ops purge + own commit" in out.stdout
    (live,) = read_snapshot(str(table)).files
    assert live.deletion_vector is None
    assert pq.read_table(table / str(live.relative_path)).num_rows == rows_before - 2
