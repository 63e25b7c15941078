"""The history's clustering columns (issue 39) are added to an existing history in place.

A history written before them (16 columns) takes a record that has them: delta-rs merges the
schema on append, the old rows read with nulls, and both readers (ours and delta-rs) agree.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
from deltalake import DeltaTable, write_deltalake

from python_ops.maintenance.records.history import HistoryRecord, HistoryStore
from python_ops.maintenance.records.history_read import ADDED_FIELDS, arrow_schema, plain_rows


def _record(**extra: object) -> HistoryRecord:
    return HistoryRecord(
        invocation_id="i",
        model="events",
        table_location="/t",
        op="optimize",
        parameters="{}",
        dry_run=False,
        status="succeeded",
        error=None,
        started_at=dt.datetime.now(dt.UTC),
        duration_s=1.0,
        **extra,  # type: ignore[arg-type]
    )


def test_an_old_history_gains_the_clustering_columns(tmp_path: Path) -> None:
    location = str(tmp_path / "history")
    old = pa.schema([f for f in arrow_schema() if f.name not in ADDED_FIELDS])  # 16 columns
    row = {k: v for k, v in _record().__dict__.items() if k in old.names}
    write_deltalake(location, pa.Table.from_pylist([row], schema=old))
    store = HistoryStore(location)
    store.append([_record(clustering_columns="a,b", files_per_lookup_after='{"a": 2.0}')])
    records = store.records()
    assert [r.clustering_columns for r in records] == [None, "a,b"]
    assert records[1].files_per_lookup_after == '{"a": 2.0}'
    assert set(DeltaTable(location).schema().to_arrow().names) == set(arrow_schema().names)
    plain = plain_rows(location)
    assert plain is not None  # the post-hook's fast reader still reads it
    assert sorted(str(r["clustering_columns"]) for r in plain) == ["None", "a,b"]
    last = store.last_success("events", "optimize")
    assert last is not None
    assert last.clustering_columns == "a,b"
