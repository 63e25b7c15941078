"""Resumable OPTIMIZE: per-partition scope; a Z-order killed between commits is finished later."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from python_ops.delta.log.commits import commit_actions
from python_ops.delta.state.snapshot import read_snapshot
from python_ops.ops.optimize.execute import optimize
from python_ops.ops.optimize.planning.plan import OPERATION_MARKER, plan_optimize
from python_ops.storage import open_storage
from tests.helpers.optimize import small_files_table
from tests.helpers.paths import ROOT
from tests.helpers.vacuum import content


def zorder_killed_after_first_commit(table: Path) -> subprocess.CompletedProcess[str]:
    """Run a Z-order in another process that SIGKILLs itself right after its first commit."""
    script = textwrap.dedent(
        f"""
        import os, signal
        import python_ops.ops.optimize.execute as op
        import python_ops.ops.optimize.writers.native as native

        commit = native.commit_rewrite

        def commit_then_die(*args, **kwargs):
            outcome = commit(*args, **kwargs)
            os.kill(os.getpid(), signal.SIGKILL)  # a real kill between partition commits
            return outcome

        native.commit_rewrite = commit_then_die
        op.optimize({str(table)!r}, zorder_by=["id"])
        """
    )
    return subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300
    )


def zordered_partitions(table: Path, versions: range) -> list[str]:
    out = []
    storage = open_storage(str(table))
    for v in versions:
        actions = commit_actions(storage, v)
        info = next(a["commitInfo"] for a in actions if "commitInfo" in a)
        assert info.get(OPERATION_MARKER) == "OPTIMIZE"
        days = {a["add"]["partitionValues"]["day"] for a in actions if "add" in a}
        out += sorted(days)
    return out


def test_killed_zorder_is_finished_by_the_next_run(tmp_path: Path, sail_spark) -> None:
    table = tmp_path / "t"
    small_files_table(sail_spark, table, batches=3)
    before = content(table)
    start = read_snapshot(str(table)).version

    killed = zorder_killed_after_first_commit(table)
    assert killed.returncode == -9, killed.stderr
    after_kill = read_snapshot(str(table)).version
    assert after_kill == start + 1  # one partition committed, then the process died
    (done,) = zordered_partitions(table, range(start + 1, after_kill + 1))
    assert content(table) == before

    # what a delta-rs commit killed mid-write leaves: staged files in _delta_log
    log = table / "_delta_log"
    stale = log / f"{after_kill:020d}.json#1"  # its version is taken: can never commit
    old = log / f"{after_kill + 1:020d}.json#2"  # next version, but two hours old
    in_flight = log / f"{after_kill + 1:020d}.json#1"  # next version, young: maybe in flight
    for path in (stale, old, in_flight):
        path.write_text('{"commitInfo":{}}\n')
    two_hours_ago = time.time() - 7200
    os.utime(old, (two_hours_ago, two_hours_ago))

    plan = plan_optimize(str(table), zorder_by=["id"])
    assert plan.since_version == after_kill
    remaining = sorted(p.partition_values["day"] for p in plan.work)
    assert done not in remaining
    assert len(remaining) == 2  # the partitions the killed run did not reach

    result = optimize(str(table), zorder_by=["id"])
    assert result.partitions_optimized == 2
    assert sorted(zordered_partitions(table, range(after_kill + 1, result.commits[-1] + 1))) == (
        remaining
    )
    assert not stale.exists()
    assert not old.exists()
    assert in_flight.exists()
    assert content(table) == before

    again = optimize(str(table), zorder_by=["id"])
    assert again.commits == ()
    assert again.skipped_reason == "nothing worth rewriting in scope"


def test_new_data_puts_only_its_partition_back_in_scope(tmp_path: Path, sail_spark) -> None:
    table = tmp_path / "t"
    name = small_files_table(sail_spark, table, batches=3)
    optimize(str(table), zorder_by=["id"])
    sail_spark.sql(f"insert into {name} select id, id * 0.5, '2024-01-02' from range(5000, 5100)")
    plan = plan_optimize(str(table), zorder_by=["id"])
    assert [p.partition_values["day"] for p in plan.work] == ["2024-01-02"]
    assert {p.skipped_reason for p in plan.partitions if not p.bins} == {
        "unchanged since its last OPTIMIZE"
    }
