"""The runner without an engine: one read of the log per decision, outcomes, history, budgets.

Only ops that need no Spark session run here (OPTIMIZE's and log cleanup's dry runs; VACUUM is
switched off or not due); the same runner on tables the engine writes, with every op running for
real, is in ``tests/integration/test_maintenance_runner.py``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from python_ops.delta.state.snapshot import snapshot_reads
from python_ops.invocation import Invocation
from python_ops.maintenance.configuration.config import parse_config
from python_ops.maintenance.records.history import HistoryStore
from python_ops.maintenance.records.outcomes import Reason, Status
from python_ops.maintenance.running.runner import Maintainer
from python_ops.maintenance.runs.run_options import RunOptions
from python_ops.maintenance.selection.targets import ModelTarget
from tests.helpers.trust import files_on_disk

FixtureTable = Callable[[str], Path]


def target(table: Path, name: str = "fct", **settings: object) -> ModelTarget:
    return ModelTarget(name, str(table), parse_config(name, settings))


def maintainer(history: HistoryStore | None = None) -> Maintainer:
    return Maintainer(spark=None, history=history, invocation=Invocation("unit"))


def test_nothing_due_reads_the_log_once_and_runs_nothing(
    fixture_table: FixtureTable, tmp_path: Path
) -> None:
    # simple_table_with_checkpoint: 11 small files, no tombstone, a log written just now
    table = fixture_table("simple_table_with_checkpoint")
    history = HistoryStore(str(tmp_path / "history"))
    before = files_on_disk(table)
    reads = snapshot_reads(str(table))
    outcomes = maintainer(history).maintain_model(target(table, maintenance_min_small_files=12))
    assert snapshot_reads(str(table)) - reads == 1
    assert [(o.op, o.status, o.reason) for o in outcomes] == [
        ("vacuum", Status.NOT_DUE, Reason.NOT_DUE),
        ("optimize", Status.NOT_DUE, Reason.NOT_DUE),
        ("cleanup_logs", Status.NOT_DUE, Reason.NOT_DUE),
        ("purge", Status.NOT_DUE, Reason.NOT_DUE),
        ("stats", Status.NOT_DUE, Reason.DISABLED),  # maintenance_stats is off by default
    ]
    assert outcomes[1].detail == "nothing worth rewriting (min_small_files=12)"
    assert outcomes[3].detail == "no deletion vectors"
    assert not any(o.ran for o in outcomes)
    assert history.records() == []  # only runs are recorded
    assert files_on_disk(table) == before


def test_dry_runs_reuse_the_decision_snapshot_and_are_recorded(
    fixture_table: FixtureTable, tmp_path: Path
) -> None:
    table = fixture_table("simple_table_with_checkpoint")
    history = HistoryStore(str(tmp_path / "history"))
    before = files_on_disk(table)
    reads = snapshot_reads(str(table))
    outcomes = maintainer(history).maintain_model(
        target(table, maintenance_min_small_files=12),
        ops=("optimize", "cleanup_logs"),
        only_due=False,
        dry_run=True,
    )
    # neither op is due, both run as requested, on the snapshot read for the decision
    assert snapshot_reads(str(table)) - reads == 1
    assert [(o.op, o.status, o.reason, o.dry_run) for o in outcomes] == [
        ("optimize", Status.SUCCEEDED, Reason.REQUESTED, True),
        ("cleanup_logs", Status.SUCCEEDED, Reason.REQUESTED, True),
    ]
    assert [o.counts.version_after for o in outcomes] == [10, 10]
    assert files_on_disk(table) == before  # dry runs change nothing
    records = history.records()
    assert [(r.model, r.op, r.status, r.dry_run) for r in records] == [
        ("fct", "optimize", "succeeded", True),
        ("fct", "cleanup_logs", "succeeded", True),
    ]
    assert json.loads(records[0].parameters)["min_small_files"] == 12
    assert (records[0].version_before, records[0].version_after) == (10, 10)


def test_a_due_op_runs_for_its_reason(fixture_table: FixtureTable) -> None:
    table = fixture_table("simple_table_with_checkpoint")
    (optimize,) = maintainer().maintain_model(target(table), ops=("optimize",), dry_run=True)
    assert (optimize.status, optimize.reason) == (Status.SUCCEEDED, Reason.DUE)
    assert optimize.detail == "compaction: 11 file(s) in 1 partition(s) worth rewriting"
    assert optimize.counts.files_removed == 11  # what the plan would rewrite
    assert optimize.counts.files_added == 0  # a dry run writes nothing


def test_disabled_ops_are_not_run_even_when_requested(fixture_table: FixtureTable) -> None:
    table = fixture_table("simple_table_with_checkpoint")
    outcomes = maintainer().maintain_model(
        target(table, maintenance_vacuum_enabled=False, maintenance_cleanup_logs_enabled=False),
        ops=("vacuum", "cleanup_logs"),
        only_due=False,
    )
    assert [(o.status, o.reason, o.detail) for o in outcomes] == [
        (Status.NOT_DUE, Reason.DISABLED, "disabled by maintenance_vacuum_enabled"),
        (Status.NOT_DUE, Reason.DISABLED, "disabled by maintenance_cleanup_logs_enabled"),
    ]


def test_a_bad_zorder_column_fails_only_optimize(
    fixture_table: FixtureTable, tmp_path: Path
) -> None:
    table = fixture_table("simple_table_with_checkpoint")
    history = HistoryStore(str(tmp_path / "history"))
    reads = snapshot_reads(str(table))
    outcomes = maintainer(history).maintain_model(
        target(table, maintenance_zorder_by=["nope"], maintenance_on_error="fail"),
        only_due=False,
        dry_run=True,
    )
    assert snapshot_reads(str(table)) - reads >= 1
    by_op = {o.op: o for o in outcomes}
    assert (by_op["optimize"].status, by_op["optimize"].reason) == (Status.FAILED, Reason.ERROR)
    # named as the user wrote it, not as OPTIMIZE's parameter
    assert "setting 'maintenance_zorder_by' has bad value 'nope'" in by_op["optimize"].detail
    assert "'nope' is not a column of the table" in by_op["optimize"].detail
    # VACUUM and log cleanup are not affected by OPTIMIZE's setting
    assert by_op["vacuum"].status is Status.SUCCEEDED
    assert by_op["cleanup_logs"].status is Status.SUCCEEDED
    failed = [(r.op, r.status) for r in history.records() if r.status == "failed"]
    assert failed == [("optimize", "failed")]


def _small_files_table(path: Path) -> Path:
    """Three one-row appends into two partitions (delta-rs): OPTIMIZE has small files."""
    import pyarrow as pa
    from deltalake import write_deltalake

    for i in range(3):
        rows = pa.table({"id": [i, i + 10], "p": ["a", "b"]})
        write_deltalake(str(path), rows, mode="append", partition_by=["p"])
    return path


def _failed_optimize_row(history: HistoryStore) -> tuple[str | None, dict[str, object]]:
    rows = [r for r in history.records() if r.op == "optimize" and r.status == "failed"]
    assert len(rows) == 1
    return rows[0].reason, json.loads(rows[0].parameters or "{}")


def test_a_failed_post_hook_optimize_records_why_and_its_settings(tmp_path: Path) -> None:
    """Issue 65 item 13: a Z-order column that does not exist fails OPTIMIZE's due check; the
    history said reason 'requested' (nobody requested it) and parameters {}."""
    table = _small_files_table(tmp_path / "t")
    history = HistoryStore(str(tmp_path / "history"))
    config = {"maintenance_zorder_by": ["no_such_column"], "maintenance_min_small_files": 2}
    model = ModelTarget("m", str(table), parse_config("m", config))
    outcomes = {o.op: o for o in maintainer(history).maintain_model(model)}  # what is due
    assert outcomes["optimize"].status is Status.FAILED
    reason, params = _failed_optimize_row(history)
    assert reason == "not decided: its due check failed"
    assert params["zorder_by"] == ["no_such_column"]
    assert params["min_small_files"] == 2
    requested = HistoryStore(str(tmp_path / "requested"))
    maintainer(requested).maintain_model(model, ops=("optimize",), only_due=False)
    reason, params = _failed_optimize_row(requested)
    assert (reason, params["zorder_by"]) == ("requested", ["no_such_column"])


def test_an_op_that_fails_after_it_was_decided_records_the_decision(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A due OPTIMIZE that fails while it runs keeps the decision's reason and its settings."""
    from python_ops.errors import EngineError
    from python_ops.maintenance.runs import op_runs

    def broken() -> Callable[..., object]:
        def optimize(*_args: object, **_kwargs: object) -> object:
            raise EngineError("the writer broke")

        return optimize

    monkeypatch.setattr(op_runs, "load_optimize", broken)
    table = _small_files_table(tmp_path / "t")
    history = HistoryStore(str(tmp_path / "history"))
    model = target(table, maintenance_min_small_files=2)
    outcomes = {o.op: o for o in maintainer(history).maintain_model(model, ops=("optimize",))}
    assert outcomes["optimize"].detail == "the writer broke"
    reason, params = _failed_optimize_row(history)
    assert reason == "compaction: 6 file(s) in 2 partition(s) worth rewriting"
    assert (params["zorder_by"], params["min_small_files"]) == ([], 2)


def test_a_missing_table_fails_its_ops_not_the_run(tmp_path: Path) -> None:
    run = maintainer().maintain([target(tmp_path / "nowhere", maintenance_on_error="fail")])
    # stats is off by default: disabled, not failed
    assert [o.status for o in run.outcomes] == [Status.FAILED] * 4 + [Status.NOT_DUE]
    assert "no Delta table" in run.outcomes[0].detail
    assert len(run.failed) == 4  # on_error: fail
    warn = maintainer().maintain([target(tmp_path / "nowhere")])
    assert warn.failed == ()  # on_error: warn (the default) only logs
    assert warn.to_dict()["failed"] == 0


def test_the_time_budget_stops_starting_models(fixture_table: FixtureTable) -> None:
    table = fixture_table("simple_table_with_checkpoint")
    models = [target(table, name=f"m{i}") for i in range(3)]
    run = maintainer().maintain(models, RunOptions.checked(time_budget_s=1e-9))
    assert run.models_started == 0
    assert run.models_not_started == ("m0", "m1", "m2")
    assert {(o.status, o.reason) for o in run.outcomes} == {(Status.SKIPPED, Reason.TIME_BUDGET)}
    assert "not started (time budget): m0, m1, m2" in run.table()


def test_progress_is_reported_per_model(fixture_table: FixtureTable) -> None:
    table = fixture_table("simple_table_with_checkpoint")
    seen: list[tuple[int, int, str]] = []
    runner = Maintainer(
        spark=None, history=None, invocation=Invocation("u"), on_progress=lambda *a: seen.append(a)
    )
    off = {"maintenance_enabled": False}
    run = runner.maintain([target(table, name="a", **off), target(table, name="b", **off)])
    assert seen == [(1, 2, "a"), (2, 2, "b")]
    assert run.models_started == 2
    assert run.table().splitlines()[-1].startswith("total")


def test_the_table_scales_sizes_and_labels_its_totals(fixture_table: FixtureTable) -> None:
    table = fixture_table("simple_table_with_checkpoint")  # 11 small files: compaction is due
    run = maintainer().maintain(
        [target(table, maintenance_min_small_files=2, maintenance_vacuum_enabled=False)],
        RunOptions(ops=("vacuum", "optimize"), dry_run=True),
    )
    lines = run.table().splitlines()
    assert lines[0] == "dry run: nothing was deleted or written"
    assert "size -" in lines[1]
    assert "MB" not in lines[1]  # the unit is in each cell
    (optimize,) = [line for line in lines if " optimize " in line]
    # files and size removed, e.g. "11   12.3 KB": the size scaled, not 0.01 (MB)
    assert re.search(r" 11 +\d+(\.\d+)? KB ", optimize), optimize
    total = lines[-1]
    assert total.startswith("total (1 model)")
    assert "1 op(s) ran" in total
    assert "0 failed" in total
