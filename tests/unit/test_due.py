"""What is due: each op's rule on real snapshots, and ``decide`` (switches, minimum intervals).

The snapshots are read from the shared fixture tables (the log only; no engine). The rules get
"now" explicitly: tombstone times are the fixtures' historical ones, log-file times are the
checkout's, so each test sets its clock relative to what the snapshot holds.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable
from pathlib import Path

import pytest

from python_ops.delta.state.snapshot import Snapshot, read_snapshot
from python_ops.errors import ConfigError, RetentionTooShortError, UnsupportedFeatureError
from python_ops.maintenance.configuration.config import parse_config
from python_ops.maintenance.decisions.due import Decision, decide
from python_ops.maintenance.records.history import HistoryRecord, HistoryStore
from python_ops.maintenance.records.outcomes import Reason
from python_ops.maintenance.runs.registry import op_spec
from python_ops.maintenance.selection.targets import ModelTarget

HOUR_MS = 3_600_000
DAY_MS = 24 * HOUR_MS
# cdf-table: 7 tombstones, removed at three moments (3, 3 and 1 of them)
FIRST_REMOVES, SECOND_REMOVES, LAST_REMOVE = 1703265021672, 1703886093764, 1704559499540

SnapshotOf = Callable[[str], Snapshot]


def target(snapshot: Snapshot, **settings: object) -> ModelTarget:
    return ModelTarget("fct", snapshot.location, parse_config("fct", settings))


def with_properties(snapshot: Snapshot, **properties: str) -> Snapshot:
    """The snapshot as if the table had these table properties."""
    metadata = dataclasses.replace(snapshot.metadata, configuration=properties)
    return dataclasses.replace(snapshot, metadata=metadata)


def due(op: str, snapshot: Snapshot, now_ms: int, **settings: object) -> tuple[bool, str]:
    return op_spec(op).due(target(snapshot, **settings), snapshot, now_ms)


def log_time(snapshot: Snapshot) -> int:
    """When the log files were written (the checkout time of the fixture)."""
    return max(f.modification_time_ms for f in snapshot.log_files)


# --- VACUUM: removed files older than the retention --------------------------------------------


def test_vacuum_due_counts_tombstones_older_than_the_default_retention(
    shared_snapshot: SnapshotOf,
) -> None:
    cdf = shared_snapshot("cdf-table")
    assert sorted(t.deletion_timestamp_ms for t in cdf.tombstones) == [FIRST_REMOVES] * 3 + [
        SECOND_REMOVES
    ] * 3 + [LAST_REMOVE]
    assert due("vacuum", cdf, FIRST_REMOVES + HOUR_MS) == (
        False,
        "nothing to reclaim: no removed or untracked file older than the 168 h retention",
    )
    assert due("vacuum", cdf, SECOND_REMOVES + 1) == (
        True,
        "3 removed file(s) older than the 168 h retention",
    )
    assert due("vacuum", cdf, LAST_REMOVE + 1) == (
        True,
        "6 removed file(s) older than the 168 h retention",
    )
    assert due("vacuum", cdf, LAST_REMOVE + 7 * DAY_MS + 1)[1].startswith("7 removed")


def test_vacuum_due_uses_the_model_retention_then_the_table_property(
    shared_snapshot: SnapshotOf,
) -> None:
    cdf = shared_snapshot("cdf-table")
    now = LAST_REMOVE + 1
    assert due("vacuum", cdf, now, maintenance_vacuum_retention_hours=1000) == (
        False,
        "nothing to reclaim: no removed or untracked file older than the 1000 h retention",
    )
    month = with_properties(cdf, **{"delta.deletedFileRetentionDuration": "interval 30 days"})
    assert due("vacuum", month, now) == (
        False,
        "nothing to reclaim: no removed or untracked file older than the 720 h retention",
    )
    # the model's setting wins over the property (it may not go below it without the override)
    assert due("vacuum", month, now, maintenance_vacuum_retention_hours=800)[0] is False
    with pytest.raises(RetentionTooShortError, match=r"minimum for table .* is 720 h "):
        due("vacuum", month, now, maintenance_vacuum_retention_hours=200)


def test_vacuum_due_applies_the_retention_safety_check(shared_snapshot: SnapshotOf) -> None:
    cdf = shared_snapshot("cdf-table")
    now = LAST_REMOVE + 25 * HOUR_MS
    with pytest.raises(RetentionTooShortError, match="maintenance_vacuum_allow_short_retention"):
        due("vacuum", cdf, now, maintenance_vacuum_retention_hours=24)
    assert due(
        "vacuum",
        cdf,
        now,
        maintenance_vacuum_retention_hours=24,
        maintenance_vacuum_allow_short_retention=True,
    ) == (True, "7 removed file(s) older than the 24 h retention")


def test_vacuum_is_not_due_without_tombstones(shared_snapshot: SnapshotOf) -> None:
    table = shared_snapshot("simple_table_with_checkpoint")
    assert table.tombstones == ()
    assert due("vacuum", table, 2**42)[0] is False


# --- OPTIMIZE: partitions with enough small files (or changed, for Z-order) --------------------


def test_optimize_due_when_a_partition_has_min_small_files(shared_snapshot: SnapshotOf) -> None:
    table = shared_snapshot("simple_table_with_checkpoint")  # 11 small files, unpartitioned
    assert due("optimize", table, 0) == (
        True,
        "compaction: 11 file(s) in 1 partition(s) worth rewriting",
    )
    assert due("optimize", table, 0, maintenance_min_small_files=11)[0] is True
    assert due("optimize", table, 0, maintenance_min_small_files=12) == (
        False,
        "nothing worth rewriting (min_small_files=12)",
    )


def test_optimize_due_counts_per_partition(shared_snapshot: SnapshotOf) -> None:
    cdf = shared_snapshot("cdf-table")  # 9 files: 4, 3 and 2 in three partitions
    assert due("optimize", cdf, 0, maintenance_min_small_files=2)[1] == (
        "compaction: 9 file(s) in 3 partition(s) worth rewriting"
    )
    assert due("optimize", cdf, 0, maintenance_min_small_files=4)[1] == (
        "compaction: 4 file(s) in 1 partition(s) worth rewriting"
    )
    assert due("optimize", cdf, 0, maintenance_min_small_files=5)[0] is False
    # a file at or above the target size is not small: nothing to compact
    assert (
        due("optimize", cdf, 0, maintenance_min_small_files=2, maintenance_target_file_size=100)[0]
        is False
    )


def test_optimize_due_for_z_order_and_its_column_checks(shared_snapshot: SnapshotOf) -> None:
    table = shared_snapshot("simple_table_with_checkpoint")
    assert due("optimize", table, 0, maintenance_zorder_by=["version"]) == (
        True,
        "Z-order: 11 file(s) in 1 partition(s) worth rewriting",
    )
    with pytest.raises(ConfigError, match=r"model 'fct'.*'nope' is not a column of the table"):
        due("optimize", table, 0, maintenance_zorder_by=["nope"])


def test_optimize_due_leaves_the_gate_to_the_writer_that_runs(
    fixture_table: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Delta's own OPTIMIZE rewrites row-tracking tables: whether it is due does not depend on
    # the writer; without an engine with Delta the local Delta writer would run it, and when
    # that is turned off (or Java or the jars are missing) the refusal stands. A copy of a
    # fixture (8 small files) whose protocol also names rowTracking: nothing may write into
    # the shared original
    from python_ops.delta.writing.local_writer import LOCAL_DELTA_ENV, writer
    from python_ops.ops.optimize.execute import optimize

    copy = read_snapshot(str(fixture_table("checkpoint-v2-table")))
    protocol = dict(copy.protocol)
    protocol["writerFeatures"] = [*protocol["writerFeatures"], "domainMetadata", "rowTracking"]
    snapshot = dataclasses.replace(copy, protocol=protocol)
    due("optimize", snapshot, 0)
    started = writer().started
    # fewer than 10 small files: nothing worth rewriting, so the local Delta writer is not
    # started for it
    assert optimize(snapshot.location, snapshot=snapshot, dry_run=True).files_removed == 0
    assert writer().started == started
    monkeypatch.setenv(LOCAL_DELTA_ENV, "off")
    with pytest.raises(
        UnsupportedFeatureError,
        match=r"compaction refused.*'(domainMetadata|rowTracking)'.*Delta's own writer.*"
        r"LOCAL_DELTA=off",
    ):
        optimize(snapshot.location, snapshot=snapshot, min_small_files=2)


# --- log cleanup: commits before a checkpoint older than the log retention ---------------------


def test_cleanup_logs_due_after_the_log_retention(shared_snapshot: SnapshotOf) -> None:
    table = shared_snapshot("simple_table_with_checkpoint")  # checkpoint 10, commits 0..10
    written = log_time(table)
    assert due("cleanup_logs", table, written + 29 * DAY_MS) == (
        False,
        "no commit file older than 30 days before a checkpoint",
    )
    assert due("cleanup_logs", table, written + 32 * DAY_MS) == (
        True,
        "10 commit file(s) older than 30 days before a checkpoint",
    )
    assert due("cleanup_logs", table, written + 32 * DAY_MS, maintenance_log_retention_days=60) == (
        False,
        "no commit file older than 60 days before a checkpoint",
    )


def test_cleanup_logs_due_reads_the_table_property_unless_the_model_sets_one(
    shared_snapshot: SnapshotOf,
) -> None:
    table = with_properties(
        shared_snapshot("simple_table_with_checkpoint"),
        **{"delta.logRetentionDuration": "interval 2 days"},
    )
    later = log_time(table) + 4 * DAY_MS
    assert due("cleanup_logs", table, later) == (
        True,
        "10 commit file(s) older than 2 days before a checkpoint",
    )
    assert due("cleanup_logs", table, later, maintenance_log_retention_days=30)[0] is False


def test_cleanup_logs_never_due_before_a_checkpoint(shared_snapshot: SnapshotOf) -> None:
    table = shared_snapshot("checkpoints")  # 13 commits, no checkpoint
    assert table.checkpoint_version is None
    assert due("cleanup_logs", table, log_time(table) + 365 * DAY_MS) == (
        False,
        "13 commit(s) older than the cutoff, but no checkpoint yet: Delta deletes nothing "
        "without one (cleanup_logs_all writes one first)",
    )


def test_young_commits_without_a_checkpoint_give_the_reason_the_op_gives(
    shared_snapshot: SnapshotOf,
) -> None:
    # UX round three, item 1: maintain_all said "no checkpoint yet" where the op itself says
    # every commit is younger than the midnight-UTC cutoff; both now say the op's reason
    from python_ops.ops.log_cleanup import cleanup_logs

    table = shared_snapshot("checkpoints")
    now = log_time(table) + DAY_MS // 2
    ok, reason = due("cleanup_logs", table, now)
    assert not ok
    assert reason.startswith("nothing expired: every commit is younger than the cutoff")
    op = cleanup_logs(table.location, dry_run=True, now_ms=now, audit=False)
    assert op.skipped_reason == reason


# --- decide: switches, minimum intervals, order ------------------------------------------------


def test_the_master_switch_disables_every_op_without_consulting_the_rules(
    shared_snapshot: SnapshotOf,
) -> None:
    dv = shared_snapshot("table-with-dv-small")  # OPTIMIZE's rule would refuse this table
    decisions = decide(target(dv, maintenance_enabled=False), dv, now_s=0)
    assert decisions == [
        Decision(op, Reason.DISABLED, "disabled by maintenance_enabled")
        for op in ("vacuum", "optimize", "cleanup_logs", "purge", "stats")
    ]
    assert not any(d.due for d in decisions)


def test_an_op_switch_disables_only_that_op(shared_snapshot: SnapshotOf) -> None:
    cdf = shared_snapshot("cdf-table")
    decisions = decide(
        target(cdf, maintenance_vacuum_enabled=False, maintenance_min_small_files=2),
        cdf,
        now_s=(LAST_REMOVE + 1) / 1000,
    )
    by_op = {d.op: d for d in decisions}
    assert by_op["vacuum"] == Decision(
        "vacuum", Reason.DISABLED, "disabled by maintenance_vacuum_enabled"
    )
    assert by_op["optimize"].reason is Reason.DUE
    assert by_op["optimize"].due
    assert by_op["cleanup_logs"].reason is Reason.NOT_DUE


def test_decisions_follow_the_requested_ops(shared_snapshot: SnapshotOf) -> None:
    cdf = shared_snapshot("cdf-table")
    decisions = decide(target(cdf), cdf, ops=("cleanup_logs", "vacuum"), now_s=0)
    assert [d.op for d in decisions] == ["cleanup_logs", "vacuum"]


def record(op: str, at: dt.datetime, *, status: str = "succeeded", dry_run: bool = False):
    return HistoryRecord(
        invocation_id="t",
        model="fct",
        table_location="x",
        op=op,
        parameters="{}",
        dry_run=dry_run,
        status=status,
        error=None,
        started_at=at,
        duration_s=1.0,
    )


def test_minimum_interval_since_the_last_real_successful_run(
    shared_snapshot: SnapshotOf, tmp_path: Path
) -> None:
    cdf = shared_snapshot("cdf-table")
    now_s = (LAST_REMOVE + 8 * DAY_MS) / 1000  # every tombstone expired: VACUUM is due
    now = dt.datetime.fromtimestamp(now_s, dt.UTC)
    history = HistoryStore(str(tmp_path / "history"))  # a real history table (delta-rs, no engine)
    history.append(
        [
            record("vacuum", now - dt.timedelta(hours=1), dry_run=True),  # dry runs do not count
            record("vacuum", now - dt.timedelta(hours=2), status="failed"),  # nor failures
            record("vacuum", now - dt.timedelta(hours=30)),
        ]
    )
    fct = target(cdf)  # vacuum_interval_hours 24
    (vacuum,) = decide(fct, cdf, ops=("vacuum",), history=history, now_s=now_s)
    assert vacuum == Decision(
        "vacuum", Reason.DUE, "7 removed file(s) older than the 168 h retention"
    )

    history.append([record("vacuum", now - dt.timedelta(hours=2))])
    (vacuum,) = decide(fct, cdf, ops=("vacuum",), history=history, now_s=now_s)
    assert vacuum == Decision(
        "vacuum", Reason.TOO_SOON, "last run 2.0 h ago, interval 24 h", due_in_h=22.0
    )
    assert not vacuum.due
    # another model's run, and another op's, do not count
    other = ModelTarget("other", cdf.location, parse_config("other", {}))
    (vacuum,) = decide(other, cdf, ops=("vacuum",), history=history, now_s=now_s)
    assert vacuum.reason is Reason.DUE
    # an interval of 0 (OPTIMIZE's default) never waits
    history.append([record("optimize", now - dt.timedelta(minutes=1))])
    (optimize,) = decide(
        target(cdf, maintenance_min_small_files=2),
        cdf,
        ops=("optimize",),
        history=history,
        now_s=now_s,
    )
    assert optimize.reason is Reason.DUE
    (optimize,) = decide(
        target(cdf, maintenance_min_small_files=2, maintenance_optimize_interval_hours=1),
        cdf,
        ops=("optimize",),
        history=history,
        now_s=now_s,
    )
    assert optimize.reason is Reason.TOO_SOON
    assert optimize.detail == "last run 0.0 h ago, interval 1 h"
    assert optimize.due_in_h == pytest.approx(59 / 60)


def test_a_bad_setting_found_against_the_table_stops_the_decision(
    shared_snapshot: SnapshotOf,
) -> None:
    table = shared_snapshot("simple_table_with_checkpoint")
    with pytest.raises(ConfigError, match="'nope' is not a column"):
        decide(target(table, maintenance_zorder_by=["nope"]), table, now_s=0)
