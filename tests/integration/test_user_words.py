"""What a user reads says what happened (issue 37's "wrong words").

Real Delta tables written by delta-rs in this process; the command line in this process or, for
a closed pipe, in a process of its own.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake

from python_ops.cli.main import EXIT_BROKEN_PIPE, main
from python_ops.delta.state.snapshot import read_snapshot
from python_ops.maintenance.configuration.config import parse_config
from python_ops.maintenance.rules.due_rules import optimize_is_due
from python_ops.maintenance.selection.targets import ModelTarget
from python_ops.ops.log_cleanup import cleanup_logs
from tests.helpers.paths import ROOT


def _appends(table: Path, batches: int) -> None:
    for batch in range(batches):
        rows = pa.table({"id": pa.array(range(batch * 10, batch * 10 + 10), pa.int64())})
        write_deltalake(str(table), rows, mode="append")


def _target(table: Path) -> ModelTarget:
    return ModelTarget("events", str(table), parse_config("events", {}))


def test_an_optimize_commit_is_not_called_a_rebuild(tmp_path: Path) -> None:
    table = tmp_path / "events"
    _appends(table, 3)
    DeltaTable(str(table)).optimize.compact()  # version 3: the three files rewritten into one
    snapshot = read_snapshot(str(table))
    assert (snapshot.version, len(snapshot.files)) == (3, 1)
    _due, reason = optimize_is_due(_target(table), snapshot, int(time.time() * 1000))
    assert "just rebuilt" not in reason, reason

    # a build that replaces the table is still one
    write_deltalake(str(table), pa.table({"id": pa.array([1], pa.int64())}), mode="overwrite")
    _due, reason = optimize_is_due(
        _target(table), read_snapshot(str(table)), int(time.time() * 1000)
    )
    assert reason.startswith("just rebuilt: version 4 wrote all 1 file(s)"), reason


def test_log_cleanup_of_young_commits_says_nothing_expired(tmp_path: Path) -> None:
    table = tmp_path / "events"
    _appends(table, 2)
    result = cleanup_logs(str(table), dry_run=False, retention_days=30)
    assert result.files_deleted == 0
    reason = result.skipped_reason or ""
    assert reason.startswith("nothing expired: every commit is younger than the cutoff "), reason
    assert "30-day retention" in reason
    assert "_last_checkpoint" not in reason


def test_an_optimize_dry_run_gives_the_target_as_the_docs_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = tmp_path / "events"
    _appends(table, 5)
    assert main(["optimize", str(table), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "target 100 MiB" in out, out
    assert "105 MB" not in out


def test_a_reader_that_stops_early_ends_the_command_quietly(tmp_path: Path) -> None:
    table = tmp_path / "events"
    _appends(table, 2)
    process = subprocess.Popen(
        [sys.executable, "-m", "python_ops", "health", str(table)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    process.stdout.close()  # as `| head -0` would: every write meets a closed pipe
    _out, err = process.communicate(timeout=300)
    assert "internal error" not in err, err
    assert "BrokenPipeError" not in err, err
    assert process.returncode == EXIT_BROKEN_PIPE
