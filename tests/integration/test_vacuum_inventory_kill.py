"""VACUUM from an inventory report, killed mid-run (issue 25 item 5: kill -9).

The run deletes what the report selects; killed with SIGKILL between two chunks, its state
(``_delta_log/_last_vacuum_info``) still claims only the last completed run, and a rerun from
the same report (which still lists the files the killed run deleted) finishes the work: files
already gone count as gone, not as failures.
"""

from __future__ import annotations

import os
import signal
import textwrap
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from python_ops.ops.vacuum import vacuum
from python_ops.ops.vacuum.sources.state import LAST_VACUUM_INFO
from tests.helpers.paths import ROOT
from tests.helpers.vacuum import age_everything, content, kill_when_marked, untracked
from tests.integration.test_vacuum_lite import _files, generated

# the report is written now, after everything was aged: a cutoff an hour ago is before it
ONE_HOUR = {"retention_hours": 1, "allow_short_retention": True}

_KILLED_RUN = textwrap.dedent(
    """
    import sys, time, pathlib
    from python_ops.ops.vacuum import vacuum

    def hook(done, total):
        pathlib.Path(sys.argv[3]).write_text(f"{done}/{total}")
        time.sleep(600)  # killed here, mid-run

    vacuum(sys.argv[1], inventory=sys.argv[2], dry_run=False, retention_hours=1,
           allow_short_retention=True, max_workers=1, on_progress=hook, progress_interval_s=0)
    """
)


def _report(table: Path, report: Path) -> None:
    files = [Path(d) / f for d, _, names in os.walk(table) for f in names]
    pq.write_table(
        pa.table(
            {
                "path": [f"file:{p}" for p in files],
                "length": [p.stat().st_size for p in files],
                "isDir": [False] * len(files),
                "modificationTime": [int(p.stat().st_mtime * 1000) for p in files],
            }
        ),
        report,
    )


def test_kill_9_during_an_inventory_run_claims_no_more_than_deleted(tmp_path: Path) -> None:
    table = generated(tmp_path / "t", seed=3, steps=8)
    for i in range(8):  # a failed job's leftovers: only a listing (or a report) finds them
        untracked(table, f"p={i % 3}/part-failed-{i}.parquet")
    age_everything(table)
    before = content(table)
    report = tmp_path / "inventory.parquet"
    _report(table, report)
    state = table / "_delta_log" / LAST_VACUUM_INFO
    claimed = state.read_bytes() if state.exists() else None
    pending = _files(vacuum(str(table), inventory=str(report), **ONE_HOUR))
    assert len(pending) >= 8

    marker = tmp_path / "marker"
    code = kill_when_marked(_KILLED_RUN, str(table), str(report), marker=marker, cwd=ROOT)
    assert code == -signal.SIGKILL

    gone = {p for p in pending if not (table / p).exists()}
    assert 0 < len(gone) < len(pending), marker.read_text()
    # the killed run claimed nothing: the state is what it was before it
    assert (state.read_bytes() if state.exists() else None) == claimed
    assert not list((table / "_delta_log").glob("._last_vacuum_info.*"))
    assert content(table) == before  # live data untouched

    rerun = vacuum(str(table), inventory=str(report), dry_run=False, **ONE_HOUR)
    assert rerun.delete_failures == 0
    assert not any((table / p).exists() for p in pending)
    assert content(table) == before
