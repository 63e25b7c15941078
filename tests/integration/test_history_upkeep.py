"""The maintenance history maintains itself on its own schedule (issue 27)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from deltalake import DeltaTable

from python_ops.delta_sql import DeltaSql
from python_ops.invocation import Invocation
from python_ops.maintenance.records.history import HistoryRecord, HistoryStore
from python_ops.maintenance.records.outcomes import Status
from python_ops.maintenance.running.history_upkeep import upkeep_history
from python_ops.maintenance.running.runner import Maintainer
from python_ops.maintenance.selection.locations import HISTORY_NAME
from python_ops.ops.optimize.execute import WRITER_COMPACT
from tests.helpers.vacuum import content


def _record(i: int) -> HistoryRecord:
    return HistoryRecord(
        invocation_id="earlier",
        model=f"model_{i}",
        table_location="",
        op="vacuum",
        parameters="{}",
        dry_run=False,
        status="succeeded",
        error=None,
        started_at=dt.datetime.now(dt.UTC) - dt.timedelta(minutes=60 - i),
        duration_s=0.1,
    )


def test_the_history_is_compacted_once_small_files_pile_up(tmp_path: Path) -> None:
    store = HistoryStore(str(tmp_path / HISTORY_NAME))
    for i in range(10):  # ten op runs: ten one-row commits, ten small files
        store.append([_record(i)])
    rows_before, _ = content(tmp_path / HISTORY_NAME)
    assert len(DeltaTable(store.location).file_uris()) == 10

    maintainer = Maintainer(spark=None, history=store, invocation=Invocation("now"))
    outcomes = {o.op: o for o in upkeep_history(maintainer)}
    assert outcomes["optimize"].status is Status.SUCCEEDED, outcomes
    assert outcomes["optimize"].counts.files_removed == 10
    assert len(DeltaTable(store.location).file_uris()) <= 2  # compacted, plus upkeep's own row
    records = store.records()
    assert len(records) >= rows_before  # nothing lost: the ten rows and the upkeep's own
    assert {r.model for r in records[:rows_before]} == {f"model_{i}" for i in range(10)}
    assert any(r.model == HISTORY_NAME and r.op == "optimize" for r in records)

    # once per invocation: the post-hooks of one dbt run (parallel threads) do it once
    assert upkeep_history(maintainer) == []
    # the next invocation decides again: nothing is due so soon after
    again = upkeep_history(Maintainer(spark=None, history=store, invocation=Invocation("later")))
    assert not [o for o in again if o.ran], again


def test_the_history_upkeep_runs_here_whatever_engine_the_run_has(tmp_path: Path) -> None:
    """Issue 65 item 3: on ``mode: local`` the upkeep's compaction went to Delta's own OPTIMIZE
    on the JVM (31 s of an ``optimize_all`` that rewrote nothing in any model). The history is
    ours: compacted here, no statement sent, Spark not touched."""
    store = HistoryStore(str(tmp_path / HISTORY_NAME))
    for i in range(10):
        store.append([_record(i)])
    sent: list[str] = []

    def execute(statement: str) -> list[dict[str, object]]:
        sent.append(statement)
        raise AssertionError(f"the history's upkeep sent {statement!r} to the engine")

    class Untouchable:
        def __getattr__(self, name: str) -> object:
            raise AssertionError(f"the history's upkeep used the Spark session ({name})")

    engine = DeltaSql(execute, where="a local Spark with Delta", has_delta=True)
    maintainer = Maintainer(
        spark=Untouchable(), history=store, invocation=Invocation("now"), sql=engine
    )
    outcomes = {o.op: o for o in upkeep_history(maintainer)}
    assert outcomes["optimize"].status is Status.SUCCEEDED, outcomes
    assert outcomes["optimize"].counts.files_removed == 10
    assert sent == []
    (row,) = [r for r in store.records() if r.model == HISTORY_NAME and r.op == "optimize"]
    assert json.loads(row.parameters)["writer"] == WRITER_COMPACT
