"""The runner on real tables: one read of the log per decision, outcomes as enums."""

from __future__ import annotations

from pathlib import Path

from python_ops.delta.state.snapshot import snapshot_reads
from python_ops.invocation import Invocation
from python_ops.maintenance.configuration.config import parse_config
from python_ops.maintenance.records.outcomes import Reason, Status
from python_ops.maintenance.running.runner import Maintainer
from python_ops.maintenance.runs.registry import OPS
from python_ops.maintenance.selection.targets import ModelTarget
from tests.helpers.optimize import events_table
from tests.helpers.vacuum import content


def _target(path: Path, **config: object) -> ModelTarget:
    settings = {"maintenance_min_small_files": 2, **config}
    return ModelTarget("events", str(path), parse_config("events", settings))


def test_deciding_and_running_every_op_reads_the_log_once(tmp_path: Path, sail_spark) -> None:
    table = tmp_path / "events"
    events_table(sail_spark, table, batches=3)
    before = content(table)
    maintainer = Maintainer(spark=sail_spark, history=None, invocation=Invocation("t"))
    reads = snapshot_reads(str(table))
    outcomes = maintainer.maintain_model(_target(table), only_due=False, dry_run=True)
    assert [o.op for o in outcomes] == list(OPS)
    # every op enabled by default runs; stats is off by default (maintenance_stats: off)
    ran = [o for o in outcomes if o.op != "stats"]
    assert all(o.status is Status.SUCCEEDED for o in ran), outcomes
    assert outcomes[-1].reason is Reason.DISABLED
    assert snapshot_reads(str(table)) - reads == 1
    assert content(table) == before


def test_after_an_op_commits_the_next_op_reads_the_new_snapshot(tmp_path: Path, sail_spark) -> None:
    table = tmp_path / "events"
    events_table(sail_spark, table, batches=3)
    before = content(table)
    maintainer = Maintainer(spark=sail_spark, history=None, invocation=Invocation("t"))
    reads = snapshot_reads(str(table))
    outcomes = {o.op: o for o in maintainer.maintain_model(_target(table), only_due=True)}
    assert outcomes["optimize"].status is Status.SUCCEEDED
    assert outcomes["optimize"].reason is Reason.DUE
    assert outcomes["optimize"].counts.files_removed == 6
    assert outcomes["optimize"].counts.files_added == 2
    # one read decides VACUUM and OPTIMIZE (and serves OPTIMIZE); OPTIMIZE committed, so what
    # is due next (log cleanup, purge) is decided on one new read; neither is due (no
    # checkpoint, no deletion vectors), so no more reads
    assert outcomes["vacuum"].reason is Reason.NOT_DUE
    assert outcomes["cleanup_logs"].reason is Reason.NOT_DUE
    assert snapshot_reads(str(table)) - reads == 2
    assert content(table) == before


def test_disabled_and_too_soon_are_reasons_not_prose(tmp_path: Path, sail_spark) -> None:
    table = tmp_path / "events"
    events_table(sail_spark, table, batches=1)
    maintainer = Maintainer(spark=sail_spark, history=None, invocation=Invocation("t"))
    target = _target(table, maintenance_vacuum_enabled=False)
    outcomes = {o.op: o for o in maintainer.maintain_model(target, only_due=False)}
    assert outcomes["vacuum"].status is Status.NOT_DUE
    assert outcomes["vacuum"].reason is Reason.DISABLED
    assert outcomes["vacuum"].detail == "disabled by maintenance_vacuum_enabled"
    assert outcomes["optimize"].reason is Reason.REQUESTED  # run although not due


def test_an_op_after_a_commit_reads_the_log_again(tmp_path: Path, sail_spark) -> None:
    table = tmp_path / "events"
    events_table(sail_spark, table, batches=3)
    before = content(table)
    maintainer = Maintainer(spark=sail_spark, history=None, invocation=Invocation("t"))
    reads = snapshot_reads(str(table))
    outcomes = maintainer.maintain_model(_target(table), only_due=False)
    assert [(o.op, o.status) for o in outcomes] == [
        (op, Status.NOT_DUE if op == "stats" else Status.SUCCEEDED) for op in OPS
    ]  # stats is off by default
    # the decision's read serves VACUUM and OPTIMIZE; log cleanup runs after OPTIMIZE's commit
    # and reads the new snapshot once (the model sets no retention, so none is recorded); log
    # cleanup commits nothing, so the purge after it is decided and run on that same read
    assert snapshot_reads(str(table)) - reads == 2
    assert content(table) == before


def test_a_table_its_build_just_rewrote_whole_is_not_compacted_right_after(
    tmp_path: Path, sail_spark
) -> None:
    from python_ops.delta.state.snapshot import read_snapshot
    from python_ops.maintenance.decisions.due import decide

    table = tmp_path / "rebuilt"
    frame = sail_spark.range(0, 4000).repartition(4)
    frame.write.format("delta").mode("overwrite").save(str(table))
    frame.write.format("delta").mode("overwrite").save(str(table))  # the next full build
    target = _target(table)
    (optimize,) = decide(target, read_snapshot(str(table)), ops=("optimize",))
    assert optimize.reason is Reason.NOT_DUE
    assert "just rebuilt" in optimize.detail
    assert "compaction waits for 50" in optimize.detail

    # an append is not a rebuild: the small files of both commits are compacted as before
    sail_spark.range(0, 10).write.format("delta").mode("append").save(str(table))
    (optimize,) = decide(target, read_snapshot(str(table)), ops=("optimize",))
    assert optimize.reason is Reason.DUE, optimize.detail
