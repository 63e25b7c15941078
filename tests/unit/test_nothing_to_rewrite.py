"""Nothing to rewrite, nothing started (issue 65 item 3): decided before any engine, cheaply.

A table only Delta's own writer may rewrite (its protocol names ``rowTracking``, which delta-rs
does not write) where the local Delta writer may not start (a post-hook): OPTIMIZE planned
nothing worth rewriting, yet it was deferred ("needs Delta's own writer"), because the writer
was chosen, and its start refused, before the plan was made. With nothing to rewrite, or a dry
run, nothing would start: the op says so. With work, the deferral stands, and nothing started.
Nor is an engine asked whether it has Delta for a plan with nothing in it.

And a run-operation's rows: ops that changed nothing are recorded in one commit at the run's
end, so saying "nothing to do" costs the same per model for 2 models as for 6.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import write_deltalake

from python_ops import runtime
from python_ops.delta.state.snapshot import Snapshot, read_snapshot
from python_ops.delta.writing.local_writer import starts_deferred, unavailable_reason
from python_ops.delta_sql import DeltaSql
from python_ops.errors import JvmDeferredError
from python_ops.invocation import Invocation
from python_ops.maintenance.configuration.config import parse_config
from python_ops.maintenance.records.history import HistoryStore
from python_ops.maintenance.records.outcomes import Status
from python_ops.maintenance.running.runner import Maintainer
from python_ops.maintenance.runs.run_options import RunOptions
from python_ops.maintenance.selection.targets import ModelTarget
from python_ops.ops.optimize.execute import optimize

DEFERRED = "a post-hook does not start the local Delta writer"


def _only_delta_writes(table: Path) -> Snapshot:
    """The table's snapshot with ``rowTracking`` in its protocol (delta-rs refuses to write)."""
    snapshot = read_snapshot(str(table))
    protocol = dict(snapshot.protocol)
    protocol["writerFeatures"] = [*protocol["writerFeatures"], "domainMetadata", "rowTracking"]
    return dataclasses.replace(snapshot, protocol=protocol)


def _writer_started() -> bool:
    running = runtime.LOCAL_WRITER.value
    return running is not None and running.started


@pytest.fixture
def only_delta(fixture_table: Callable[[str], Path]) -> Snapshot:
    """A copy of a fixture of 8 small files, as a table only Delta's writer may rewrite."""
    if unavailable_reason() is not None:  # then it is refused, for another reason
        pytest.skip(f"the local Delta writer could not start here: {unavailable_reason()}")
    return _only_delta_writes(fixture_table("checkpoint-v2-table"))


def test_nothing_to_rewrite_is_said_not_deferred_where_the_writer_may_not_start(
    only_delta: Snapshot,
) -> None:
    was_started = _writer_started()
    with starts_deferred(DEFERRED):
        result = optimize(only_delta.location, snapshot=only_delta, min_small_files=50, audit=False)
    assert (result.files_removed, result.commits) == (0, ())
    assert result.skipped_reason == "nothing worth rewriting in scope"
    assert _writer_started() == was_started
    assert read_snapshot(only_delta.location).version == only_delta.version


def test_nothing_to_rewrite_asks_the_engine_nothing(only_delta: Snapshot) -> None:
    """On ``mode: local`` the engine was asked whether it has Delta (``DESCRIBE HISTORY``, 6 s
    on a JVM that had not run Delta yet) for a table only Delta may rewrite, before the plan
    found nothing to rewrite."""
    sent: list[str] = []

    def execute(statement: str) -> list[dict[str, Any]]:
        sent.append(statement)
        return []

    engine = DeltaSql(execute, where="a local Spark with Delta")  # Delta or not: unknown
    result = optimize(
        only_delta.location, snapshot=only_delta, sql=engine, min_small_files=50, audit=False
    )
    assert result.skipped_reason == "nothing worth rewriting in scope"
    assert sent == []


def test_a_dry_run_with_work_is_planned_not_deferred(only_delta: Snapshot) -> None:
    with starts_deferred(DEFERRED):
        plan = optimize(
            only_delta.location, snapshot=only_delta, min_small_files=2, dry_run=True, audit=False
        )
    assert plan.plan["files_to_rewrite"] == len(only_delta.files)


def test_work_only_delta_could_do_is_still_deferred_and_starts_nothing(
    only_delta: Snapshot,
) -> None:
    if _writer_started():
        pytest.skip("the local Delta writer runs already in this process (no deferral then)")
    with starts_deferred(DEFERRED), pytest.raises(JvmDeferredError, match=DEFERRED):
        optimize(only_delta.location, snapshot=only_delta, min_small_files=2, audit=False)
    assert not _writer_started()
    assert read_snapshot(only_delta.location).version == only_delta.version


# --- the history's rows: one commit per run, whatever the number of models ---------------------


def _tables(root: Path, count: int, *, files: int = 1, prefix: str = "t") -> list[ModelTarget]:
    """``count`` tables of ``files`` one-row files each, as models (compaction from 2 files)."""
    targets = []
    for i in range(count):
        name = f"{prefix}_{i}"
        for row in range(files):
            write_deltalake(str(root / name), pa.table({"id": [row]}), mode="append")
        config = parse_config(name, {"maintenance_min_small_files": 2})
        targets.append(ModelTarget(name, str(root / name), config))
    return targets


def _commits(history: HistoryStore) -> int:
    """The history table's commits (0 before it exists)."""
    log = Path(history.location) / "_delta_log"
    return len(list(log.glob("*.json"))) if log.is_dir() else 0


@pytest.mark.parametrize("op", ["optimize", "vacuum"])
def test_a_run_with_nothing_to_do_commits_its_rows_once_for_any_number_of_models(
    tmp_path: Path, op: str
) -> None:
    """Issue 65 item 3: ``optimize_all``/``vacuum_all`` with nothing to rewrite or delete spent
    50 to 300 ms per model on its history row (a commit each, the history's log read again each
    time), 20 times the op: 84 and 171 ms per model for 50 models. The rows now wait for one
    commit at the run's end: the cost per model stays flat."""
    history = HistoryStore(str(tmp_path / "history"))
    commits = []
    for count in (2, 6):
        targets = _tables(tmp_path / f"n{count}", count)
        before = _commits(history)
        run = Maintainer(spark=None, history=history, invocation=Invocation(f"n{count}")).maintain(
            targets, RunOptions(ops=(op,), only_due=False)
        )
        assert [o.status for o in run.outcomes] == [Status.SUCCEEDED] * count
        assert {(o.counts.files_removed, o.counts.files_added) for o in run.outcomes} == {(0, 0)}
        commits.append(_commits(history) - before)
        rows = [r for r in history.records() if r.invocation_id == f"n{count}" and r.op == op]
        assert sorted(r.model for r in rows) == [t.name for t in targets]  # every row is there
    assert commits == [1, 1]


def test_a_run_that_changes_a_table_records_it_as_it_happens(tmp_path: Path) -> None:
    """A rewrite is recorded when it is done (with the rows waiting so far), not at the end."""
    history = HistoryStore(str(tmp_path / "history"))
    targets = [*_tables(tmp_path, 2), *_tables(tmp_path, 1, files=3, prefix="busy")]
    seen: dict[str, set[str]] = {}

    def on_model(done: int, total: int, name: str, outcomes: list[Any]) -> None:
        seen[name] = {r.model for r in history.records() if r.invocation_id == "run"}

    maintainer = Maintainer(
        spark=None, history=history, invocation=Invocation("run"), on_model=on_model
    )
    run = maintainer.maintain(targets, RunOptions(ops=("optimize",), only_due=False))
    assert [o.counts.files_removed for o in run.outcomes] == [0, 0, 3]
    assert seen["t_1"] == set()  # nothing changed yet: the rows wait
    assert seen["busy_0"] == {"t_0", "t_1", "busy_0"}  # the rewrite's row, with those waiting
