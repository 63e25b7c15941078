"""The post-hook decides from what this build wrote (real dbt on the embedded engine).

An incremental model whose build writes nothing skips maintenance with that reason (the dbt
log line and a ``post_hook`` history row); a build that writes into one partition gets its
compaction planned and run for that partition only; history rows carry the build's seconds
beside each op's, and ``maintenance_report`` shows the maintenance share of build.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from python_ops.delta.state.snapshot import read_snapshot
from python_ops.maintenance.records.history import HistoryRecord, HistoryStore
from tests.helpers.dbt_runs import Dbt

pytestmark = pytest.mark.slow

EVENTS = """
{{ config(
    materialized='incremental',
    incremental_strategy='append',
    partition_by=['day'],
    maintenance_min_small_files=2,
) }}
{% for day in var('event_days', '2024-01-01,2024-01-02').split(',') %}
select cast({{ var('batch') }} as int) as batch, '{{ day }}' as day
{% if not loop.last %}union all{% endif %}
{% endfor %}
"""


def _history(project: Path) -> list[HistoryRecord]:
    store = HistoryStore(str(project.parent / "warehouse" / "shop" / "maintenance_history"))
    return store.records()


def _messages(into: list[str]) -> Any:
    def collect(event: Any) -> None:
        into.append(str(event.info.msg))

    return collect


def test_a_build_that_wrote_nothing_skips_maintenance(project: Path, dbt: Dbt) -> None:
    assert dbt(project, "seed").success
    assert dbt(project, "run", "--select", "+fct_orders").success
    before = len(_history(project))
    said: list[str] = []

    # the same batch again: no order is newer than the table's, the MERGE writes nothing
    again = dbt(project, "run", "--select", "fct_orders", callbacks=[_messages(said)])

    assert again.success, again.exception
    new = _history(project)[before:]
    assert [(r.model, r.op, r.status) for r in new] == [("fct_orders", "post_hook", "skipped")]
    assert (new[0].reason or "").startswith("the build wrote nothing")
    assert new[0].build_files_written == 0
    assert new[0].build_s is not None
    assert new[0].build_s > 0
    assert any(
        m.startswith("maintenance fct_orders: skipped: the build wrote nothing") for m in said
    ), said


def test_a_build_into_one_partition_compacts_that_partition_only(
    project: Path, dbt: Dbt, capfd: pytest.CaptureFixture[str]
) -> None:
    (project / "models" / "marts" / "events_by_day.sql").write_text(EVENTS)
    table = project.parent / "warehouse" / "shop" / "events_by_day"
    off = {"maintenance_post_hook": False}
    for batch in (0, 1):  # two files in each day, the post-hook off
        assert dbt(project, "run", "--select", "events_by_day", batch=batch, extra_vars=off).success
    files = {p: 0 for p in ("2024-01-01", "2024-01-02")}
    for f in read_snapshot(str(table)).files:
        files[str(f.partition_values["day"])] += 1
    assert files == {"2024-01-01": 2, "2024-01-02": 2}  # both worth compacting (min 2)
    before = len(_history(project))

    one_day = {"event_days": "2024-01-02"}
    assert dbt(project, "run", "--select", "events_by_day", batch=2, extra_vars=one_day).success

    optimize = [r for r in _history(project)[before:] if r.op == "optimize"]
    assert [(r.status, r.files_removed, r.files_added) for r in optimize] == [("succeeded", 3, 1)]
    record = optimize[0]
    assert json.loads(record.parameters)["where"] == "(`day` = '2024-01-02')"
    assert "of the partitions this build wrote" in (record.reason or "")
    after = {p: 0 for p in files}
    for f in read_snapshot(str(table)).files:
        after[str(f.partition_values["day"])] += 1
    assert after == {"2024-01-01": 2, "2024-01-02": 1}  # the day not written stays as it was
    # the build's seconds beside the op's, and what the build wrote
    assert record.build_s is not None
    assert record.build_s > 0
    assert record.duration_s > 0
    assert record.build_files_written == 1
    assert record.build_rows_written == 1
    assert len(json.loads(record.build_versions or "[]")) == 1

    capfd.readouterr()
    assert dbt(project, "run-operation", "maintenance_report").success
    out = capfd.readouterr().out
    assert "maintenance share of build" in out
    (line,) = [x for x in out.splitlines() if x.startswith("events_by_day") and "build(s)" in x]
    assert "after 1 build(s)" in line
