"""Deferred history rows (a post-hook's skips): one commit for many, at flush or next append.

Also the history's added columns: a table written before them reads them as null and takes
them on its next append.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
from deltalake import DeltaTable, write_deltalake

from python_ops.maintenance.records.history import HistoryRecord, HistoryStore
from python_ops.maintenance.records.history_read import SCHEMA_FIELDS


def _record(model: str, op: str = "post_hook", **extra: object) -> HistoryRecord:
    return HistoryRecord(
        invocation_id="i",
        model=model,
        table_location="/t",
        op=op,
        parameters="{}",
        dry_run=False,
        status="skipped",
        error=None,
        started_at=dt.datetime.now(dt.UTC),
        duration_s=0.0,
        **extra,  # type: ignore[arg-type]
    )


def test_deferred_rows_are_one_commit_at_flush(tmp_path: Path) -> None:
    store = HistoryStore(str(tmp_path / "history"))
    store.defer([_record("a", reason="the build wrote nothing")])
    store.defer([_record("b")])
    assert store.records() == []  # nothing written yet

    store.flush()

    assert [r.model for r in store.records()] == ["a", "b"]
    assert store.records()[0].reason == "the build wrote nothing"
    assert DeltaTable(store.location).version() == 0  # one commit for both
    store.flush()  # nothing left: no commit
    assert DeltaTable(store.location).version() == 0


def test_the_next_append_carries_the_deferred_rows(tmp_path: Path) -> None:
    store = HistoryStore(str(tmp_path / "history"))
    store.defer([_record("a")])
    store.append([_record("b", op="optimize", build_s=2.5)])
    assert sorted(r.model for r in store.records()) == ["a", "b"]
    assert DeltaTable(store.location).version() == 0


def test_a_history_from_before_the_added_columns_takes_them(tmp_path: Path) -> None:
    location = str(tmp_path / "history")
    old = [(n, k) for n, k in SCHEMA_FIELDS if n not in ("reason", "build_s")]
    types = {"string": pa.string(), "bool": pa.bool_(), "double": pa.float64()}
    types |= {"int64": pa.int64(), "timestamp": pa.timestamp("us", "UTC")}
    schema = pa.schema([(n, types[k]) for n, k in old])
    row = {n: None for n, _ in old} | {
        "invocation_id": "old",
        "model": "m",
        "table_location": "/t",
        "op": "vacuum",
        "parameters": "{}",
        "dry_run": False,
        "status": "succeeded",
        "started_at": dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
        "duration_s": 1.0,
        "files_removed": 0,
        "bytes_removed": 0,
        "files_added": 0,
        "bytes_added": 0,
    }
    write_deltalake(location, pa.Table.from_pylist([row], schema=schema))
    store = HistoryStore(location)
    (before,) = store.records()
    assert before.reason is None
    assert before.build_s is None

    store.append([_record("m", op="optimize", reason="due", build_s=1.25)])

    after = store.records()
    assert [(r.invocation_id, r.build_s) for r in after] == [("old", None), ("i", 1.25)]


def test_a_deferred_proof_is_the_row_a_succeeded_run_of_its_kind_writes(tmp_path: Path) -> None:
    from python_ops.maintenance.records.history import defer_proof

    at_ms = 1_795_824_106_773
    store = HistoryStore(str(tmp_path / "history"))
    assert store.last_success("m", "log_bounds") is None  # read now: remembered from here on
    store.defer([_record("a", reason="the build wrote nothing")])
    defer_proof(
        store, invocation_id="i", model="m", location="/t", op="log_bounds",
        parameters={"table_id": "x", "proved_at_ms": at_ms}, at_ms=at_ms, reason="proved",
    )  # fmt: skip
    assert store.deferred_count() == 2
    store.flush()
    assert store.deferred_count() == 0
    assert DeltaTable(store.location).version() == 0  # one commit for the record and the proof

    (proof,) = [r for r in store.records() if r.op == "log_bounds"]
    assert proof == HistoryRecord(
        invocation_id="i",
        model="m",
        table_location="/t",
        op="log_bounds",
        parameters='{"proved_at_ms": 1795824106773, "table_id": "x"}',
        dry_run=False,
        status="succeeded",
        error=None,
        started_at=dt.datetime.fromtimestamp(at_ms / 1000, dt.UTC),
        duration_s=0.0,
        reason="proved",
    )
    remembered = store.last_success("m", "log_bounds")  # as appended
    read = HistoryStore(store.location).last_success("m", "log_bounds")  # as read back
    assert remembered == read
    assert remembered is not None
    assert remembered.started_at_us == at_ms * 1000
    assert remembered.parameters == proof.parameters
