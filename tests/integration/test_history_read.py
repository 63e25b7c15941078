"""The history read by this package equals delta-rs's read; what it leaves to delta-rs."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake

from python_ops.maintenance.records.history import HistoryRecord, HistoryStore
from python_ops.maintenance.records.history_last import LastRun, microseconds
from python_ops.maintenance.records.history_read import arrow_schema, plain_rows
from tests.helpers.python_run import python_stdout

ROOT = Path(__file__).resolve().parents[2]


def _record(i: int, *, op: str = "vacuum", dry: bool = False) -> HistoryRecord:
    return HistoryRecord(
        invocation_id=f"inv-{i}",
        model=f"m{i % 3}",
        table_location=f"/t/m{i % 3}",
        op=op,
        parameters="{}",
        dry_run=dry,
        status="succeeded" if i % 4 else "failed",
        error=None if i % 4 else "boom",
        started_at=dt.datetime(2026, 1, 1, tzinfo=dt.UTC) + dt.timedelta(hours=i),
        duration_s=i / 10,
        files_removed=i,
        version_after=None if i % 5 == 0 else i,
    )


def _theirs(location: Path) -> list[dict]:
    rows = DeltaTable(str(location)).to_pyarrow_table().to_pylist()
    return sorted(rows, key=lambda r: r["started_at"])


def test_the_rows_read_without_delta_rs_are_delta_rs_rows(tmp_path: Path) -> None:
    location = tmp_path / "history"
    store = HistoryStore(str(location))
    for i in range(6):
        store.append([_record(i), _record(i, op="optimize", dry=i % 2 == 0)])
    DeltaTable(str(location)).optimize.compact()  # removes: only live files are read

    ours = plain_rows(str(location))

    assert ours is not None
    assert sorted(ours, key=lambda r: r["started_at"]) == _theirs(location)
    assert [r.invocation_id for r in store.records()] == [
        r["invocation_id"] for r in _theirs(location)
    ]
    last = HistoryStore(str(location)).last_success("m1", "vacuum")
    assert last == LastRun("m1", "vacuum", "/t/m1", "{}", microseconds(_record(1).started_at))
    assert last.started_at == _record(1).started_at


def test_a_table_it_does_not_read_plainly_is_left_to_delta_rs(tmp_path: Path) -> None:
    missing = tmp_path / "none"
    assert plain_rows(str(missing)) is None
    assert HistoryStore(str(missing)).records() == []
    partitioned = tmp_path / "partitioned"
    rows = [{**r.__dict__} for r in (_record(1), _record(2))]
    write_deltalake(
        str(partitioned), pa.Table.from_pylist(rows, schema=arrow_schema()), partition_by=["op"]
    )
    assert plain_rows(str(partitioned)) is None
    assert [r.invocation_id for r in HistoryStore(str(partitioned)).records()] == ["inv-1", "inv-2"]


def test_reading_the_history_imports_no_pyarrow_dataset(tmp_path: Path) -> None:
    location = tmp_path / "history"
    HistoryStore(str(location)).append([_record(1)])
    code = """
        import sys
        from python_ops.maintenance.records.history import HistoryStore
        assert HistoryStore(sys.argv[1]).last_success("m1", "vacuum") is not None
        print(sorted(m for m in sys.modules if m in ("pyarrow.dataset", "pyarrow.parquet")))
    """
    assert python_stdout(code, str(location)) == "[]"


def test_a_table_without_the_history_s_columns_is_refused_by_name(tmp_path: Path) -> None:
    from python_ops.errors import StorageError
    from python_ops.maintenance.records.history_last import LAST_RUN_COLUMNS
    from python_ops.maintenance.records.history_read import read_table

    other = tmp_path / "other"  # partitioned: delta-rs reads it, not this package's reader
    write_deltalake(str(other), pa.table({"op": ["x"], "n": [1]}), partition_by=["op"])
    with pytest.raises(StorageError, match=r"at .*other is not a history table: .* model"):
        read_table(str(other), LAST_RUN_COLUMNS)
    with pytest.raises(StorageError, match="not a history table"):
        HistoryStore(str(other)).last_success("m", "vacuum")
