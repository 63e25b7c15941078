"""The runner on a deletion-vector table with no engine of its own: OPTIMIZE and the purge
run on the local Delta writer, the outcomes and the history say so, Delta reads the same rows.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from python_ops.delta.state.snapshot import read_snapshot
from python_ops.invocation import Invocation
from python_ops.maintenance.configuration.config import parse_config
from python_ops.maintenance.records.history import HistoryStore
from python_ops.maintenance.records.outcomes import Reason, Status
from python_ops.maintenance.running.runner import Maintainer
from python_ops.maintenance.selection.targets import ModelTarget
from python_ops.ops.optimize.execute import WRITER_COMPACT
from tests.helpers.delta_reads import oracle, table_sql

pytestmark = [pytest.mark.classic_spark, pytest.mark.delta_jars]


def test_maintain_a_deletion_vector_table_here_without_a_jvm(
    tmp_path: Path, delta_spark: Any
) -> None:
    table = tmp_path / "dv"
    name = table_sql(table)
    delta_spark.sql(
        f"CREATE TABLE {name} (id BIGINT, v STRING) USING delta "
        "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')"
    ).collect()
    for i in range(3):
        delta_spark.sql(
            f"INSERT INTO {name} SELECT id, 'x' FROM range({i * 100}, {i * 100 + 100}, 1, 1)"
        ).collect()
    delta_spark.sql(f"DELETE FROM {name} WHERE id % 4 = 0").collect()  # 25 % deleted
    before = oracle(delta_spark, table)
    history = HistoryStore(str(tmp_path / "history"))
    target = ModelTarget("dv", str(table), parse_config("dv", {"maintenance_min_small_files": 2}))
    maintainer = Maintainer(spark=None, history=history, invocation=Invocation("t"))
    decided = {o.op: o for o in maintainer.maintain_model(target, dry_run=True)}
    assert decided["purge"].reason is Reason.DUE
    assert "more than 0.05 of their rows deleted (up to 25.0%)" in decided["purge"].detail
    outcomes = {o.op: o for o in maintainer.maintain_model(target, only_due=True)}
    optimize = outcomes["optimize"]
    assert (optimize.status, optimize.reason) == (Status.SUCCEEDED, Reason.DUE)
    # rewritten here (embedded means embedded): no local Delta writer, no JVM
    assert "Delta OPTIMIZE (SQL)" not in (optimize.note or "") + optimize.summary
    # every file rewritten without its deleted rows: nothing left to purge
    assert not any(f.deletion_vector for f in read_snapshot(str(table)).files)
    # the purge was due before OPTIMIZE; what is due next is decided on the log after
    # OPTIMIZE's commit: no deletion vector is left, so no purge runs (no second commit)
    purge = outcomes["purge"]
    assert (purge.status, purge.reason) == (Status.NOT_DUE, Reason.NOT_DUE)
    assert purge.detail == "no deletion vectors"
    real = [r for r in history.records() if not r.dry_run and r.op == "optimize"]
    assert json.loads(real[-1].parameters)["writer"] == WRITER_COMPACT
    assert oracle(delta_spark, table) == before


def test_a_post_hook_defers_an_op_that_would_start_a_jvm(tmp_path: Path, delta_spark: Any) -> None:
    """No surprise JVM (issue 64 item 3): where only Delta's writer can rewrite the table (a
    Z-order of a table with column mapping in id mode), the post-hook's deferral records the op
    as deferred, with the reason, starts nothing and changes nothing; it stays due, and a run
    that may start the local writer runs it."""
    from python_ops import runtime
    from python_ops.delta.writing.local_writer import starts_deferred
    from python_ops.maintenance.running.report import render_report, report_rows
    from python_ops.maintenance.running.session import POST_HOOK_DEFERRAL

    table = tmp_path / "mapped"
    name = table_sql(table)
    delta_spark.sql(
        f"CREATE TABLE {name} (id BIGINT, `v x` STRING) USING delta "
        "TBLPROPERTIES ('delta.columnMapping.mode' = 'id')"
    ).collect()
    for i in range(3):
        delta_spark.sql(f"INSERT INTO {name} VALUES ({i}, 'x')").collect()
    before = oracle(delta_spark, table)
    version = read_snapshot(str(table)).version
    history = HistoryStore(str(tmp_path / "history"))
    config = {"maintenance_min_small_files": 2, "maintenance_zorder_by": ["id"]}
    target = ModelTarget("mapped", str(table), parse_config("mapped", config))
    maintainer = Maintainer(spark=None, history=history, invocation=Invocation("t"))
    running = runtime.LOCAL_WRITER.value
    was_started = running is not None and running.started

    if not was_started:
        with starts_deferred(POST_HOOK_DEFERRAL):
            (deferred,) = maintainer.maintain_model(target, ops=("optimize",), only_due=False)
        assert (deferred.status, deferred.reason) == (Status.DEFERRED, Reason.NEEDS_JVM)
        assert "maintenance_post_hook_jvm" in deferred.detail
        now = runtime.LOCAL_WRITER.value
        assert now is None or not now.started  # no JVM
        assert read_snapshot(str(table)).version == version
        (row,) = [r for r in history.records() if r.op == "optimize"]
        assert (row.status, row.reason) == ("deferred", deferred.detail)
        report = render_report(report_rows([target], spark=None, history=history))
        assert "optimize deferred: needs Delta's own writer" in report

    (ran,) = maintainer.maintain_model(target, ops=("optimize",), only_due=False)
    assert ran.status == Status.SUCCEEDED
    assert read_snapshot(str(table)).version > version
    assert oracle(delta_spark, table) == before


def test_nothing_to_rewrite_on_a_table_only_delta_writes_starts_nothing(
    tmp_path: Path, delta_spark: Any
) -> None:
    """Issue 65 item 3, on a real table: deletion vectors and row tracking (delta-rs does not
    write row tracking: only Delta's own writer may rewrite it), one file. OPTIMIZE of every
    model (``optimize_all``), in a post-hook's context too: nothing worth rewriting, said as
    such (it was deferred as "needs Delta's own writer"); no local Delta writer started, no
    commit."""
    from python_ops import runtime
    from python_ops.delta.writing.local_writer import starts_deferred
    from python_ops.maintenance.running.session import POST_HOOK_DEFERRAL
    from python_ops.maintenance.runs.run_options import RunOptions

    table = tmp_path / "dv_rows"
    name = table_sql(table)
    delta_spark.sql(
        f"CREATE TABLE {name} (id BIGINT, v STRING) USING delta TBLPROPERTIES ("
        "'delta.enableDeletionVectors' = 'true', 'delta.enableRowTracking' = 'true')"
    ).collect()
    delta_spark.sql(f"INSERT INTO {name} SELECT id, 'x' FROM range(0, 10, 1, 1)").collect()
    snapshot = read_snapshot(str(table))
    assert "rowTracking" in snapshot.protocol["writerFeatures"]
    history = HistoryStore(str(tmp_path / "history"))
    target = ModelTarget("dv_rows", str(table), parse_config("dv_rows", {}))
    running = runtime.LOCAL_WRITER.value
    was_started = running is not None and running.started

    maintainer = Maintainer(spark=None, history=history, invocation=Invocation("hook"))
    with starts_deferred(POST_HOOK_DEFERRAL):
        (hook,) = maintainer.maintain_model(target, ops=("optimize",), only_due=False)
    run = Maintainer(spark=None, history=history, invocation=Invocation("all")).maintain(
        [target], RunOptions(ops=("optimize",), only_due=False)
    )
    for outcome in (hook, *run.outcomes):
        assert (outcome.status, outcome.counts.files_removed) == (Status.SUCCEEDED, 0), outcome
    now = runtime.LOCAL_WRITER.value
    assert (now is not None and now.started) == was_started  # nothing started for it
    assert read_snapshot(str(table)).version == snapshot.version
    rows = [r for r in history.records() if r.op == "optimize"]
    assert [(r.invocation_id, r.status) for r in rows] == [
        ("hook", "succeeded"),
        ("all", "succeeded"),
    ]
