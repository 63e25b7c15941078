"""The README's first command: the main job (``scripts/run_example.py``) on the embedded engine.

Run as a user runs it, in a process of its own, on a fresh warehouse: the whole example project,
``fct_open_orders`` included. That table has deletion vectors on (as Databricks creates tables
today) and its DELETEs leave soft-deleted rows behind; delta-rs cannot write it, so its
maintenance runs on Delta's own writer, a local Spark with Delta started for the run. Delta
reads the table afterwards: exactly the open orders of ``fct_orders``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from python_ops.delta.state.snapshot import read_snapshot
from python_ops.maintenance.records.history import HistoryStore
from tests.helpers.classic import classic_env
from tests.helpers.delta_reads import table_sql
from tests.helpers.paths import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.classic_spark, pytest.mark.delta_jars]


@pytest.fixture(scope="module")
def main_job(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The warehouse and the output of one run of the main job (3 load batches, small)."""
    warehouse = tmp_path_factory.mktemp("main-job") / "warehouse"
    env = {**classic_env(), "SPARKDELTA_WAREHOUSE": str(warehouse)}
    done = subprocess.run(
        [
            sys.executable,
            "scripts/run_example.py",
            "--batches",
            "4",
            "--orders-per-batch",
            "60",
            "--customers",
            "100",
        ],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    return warehouse, done.stdout


def test_the_table_with_deletion_vectors_is_maintained_in_process(
    main_job: tuple[Path, str],
) -> None:
    warehouse, out = main_job
    records = HistoryStore(str(warehouse / "shop" / "maintenance_history")).records()
    ours = [r for r in records if r.model == "fct_open_orders" and not r.dry_run]
    written = [r for r in ours if r.status == "succeeded" and r.files_removed]
    assert written, [(r.op, r.status, r.error) for r in ours]
    writers = {str(json.loads(r.parameters).get("writer", "")) for r in written}
    # embedded means embedded: rewritten in the dbt process, no local Spark (JVM) for it
    assert not any("Delta 4.4 on a local Spark" in w for w in writers), writers
    assert any(w.startswith("python_ops") for w in writers), writers
    assert "fct_open_orders" in out.split("== before / after maintain_all")[1]
    # OPTIMIZE grew the size on disk: the demo says why, and when VACUUM takes it back
    words = " ".join(out.split())  # the note is wrapped at 96 columns
    assert "size on disk grew by " in words
    assert "until they are older than the model's VACUUM retention (" in words
    # the soft-deleted rows are gone from the live files: no deletion vector is left
    snapshot = read_snapshot(str(warehouse / "shop" / "fct_open_orders"))
    assert not [f for f in snapshot.files if f.deletion_vector is not None]
    assert "deletionVectors" in snapshot.protocol.get("writerFeatures", [])


def test_delta_reads_exactly_the_open_orders(main_job: tuple[Path, str], delta_spark: Any) -> None:
    warehouse, _ = main_job
    open_orders = table_sql(warehouse / "shop" / "fct_open_orders")
    orders = table_sql(warehouse / "shop" / "fct_orders")
    theirs = delta_spark.sql(
        f"SELECT order_id, status FROM {orders} WHERE status IN ('placed', 'shipped')"
    ).collect()
    ours = delta_spark.sql(f"SELECT order_id, status FROM {open_orders}").collect()
    assert ours
    assert sorted(map(tuple, ours)) == sorted(map(tuple, theirs))


def test_the_batch_loads_report_progress(main_job: tuple[Path, str]) -> None:
    _, out = main_job
    loads = [line for line in out.splitlines() if line.strip().startswith("batch ")]
    assert len(loads) == 3  # --batches 4: the build's batch, then three loads
    assert loads[-1].strip().endswith(" s)")
    assert "(3/3, " in loads[-1]
