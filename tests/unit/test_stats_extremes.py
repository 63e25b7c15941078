"""Extreme values in the rewrite's statistics, reads and writes (engine-free).

Delta's own answers for the same values are in tests/integration/test_zorder_extremes.py; here
the exact JSON, the merge of row groups' statistics, INT96 reads and the writer's abort.
"""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from python_ops.delta.log.actions import AddFile
from python_ops.delta.table.stats import delta_stats, dumps_stats, loads_stats
from python_ops.ops.optimize.sorting.clustered_output import (
    ClusteredOutput,
    footer_statistics,
    merge_stats,
)
from python_ops.ops.optimize.sorting.partition_batches import PartitionSource
from python_ops.storage import open_storage

TS_MAX = dt.datetime(9999, 12, 31, 23, 59, 59, 999_999)
TS_MIN = dt.datetime(1, 1, 1)
DEC_MAX = Decimal(10**38 - 1)
DEC_MIN = Decimal(-(10**38 - 1))
DEC2_MAX = Decimal("9999999999999999999999999999.9999999999")


def extremes() -> pa.Table:
    """Every type's extremes, a null in each column, an ordinary row."""
    utc = dt.UTC
    return pa.table(
        {
            "ts": pa.array(
                [TS_MAX.replace(tzinfo=utc), TS_MIN.replace(tzinfo=utc), None, None],
                pa.timestamp("us", "UTC"),
            ),
            "ntz": pa.array([TS_MIN, TS_MAX, None, dt.datetime(2024, 1, 1)], pa.timestamp("us")),
            "d": pa.array([dt.date(9999, 12, 31), dt.date(1, 1, 1), None, None], pa.date32()),
            "dec": pa.array([DEC_MAX, DEC_MIN, None, Decimal(0)], pa.decimal128(38, 0)),
            "dec2": pa.array(
                [DEC2_MAX, Decimal("-1.5"), None, Decimal("0E-10")], pa.decimal128(38, 10)
            ),
            "l": pa.array([2**63 - 1, -(2**63), None, 0], pa.int64()),
            "x": pa.array([-0.0, 0.0, None, 5e-324]),
            "inf": pa.array([float("inf"), 1.0, None, 0.0]),
            "nan": pa.array([float("nan"), 1.0, None, 0.0], pa.float32()),
            "s": pa.array(["", "zz", None, "a"]),
            "none": pa.array([None, None, None, None], pa.string()),
        }
    )


def test_extreme_values_get_the_bounds_delta_writes() -> None:
    table = extremes()
    stats = loads_stats(delta_stats(table, table.column_names))
    low, high = stats["minValues"], stats["maxValues"]
    # as Delta 4.4 writes them (tests/integration/test_zorder_extremes.py compares)
    assert (low["ts"], high["ts"]) == ("0001-01-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z")
    assert (low["ntz"], high["ntz"]) == ("0001-01-01T00:00:00.000", "9999-12-31T23:59:59.999")
    assert (low["d"], high["d"]) == ("0001-01-01", "9999-12-31")
    assert (low["dec"], high["dec"]) == (int(DEC_MIN), int(DEC_MAX))
    assert (low["dec2"], high["dec2"]) == (Decimal("-1.5000000000"), DEC2_MAX)
    assert (low["l"], high["l"]) == (-(2**63), 2**63 - 1)
    assert '"x":0.0' in delta_stats(table, ["x"])  # -0.0 is zero, as Delta writes it
    assert high["x"] == Decimal("5E-324")
    assert (low["s"], high["s"]) == ("", "zz")
    # JSON numbers cannot carry NaN or infinities; an all-null column has no bounds
    for column in ("inf", "nan", "none"):
        assert column not in low
        assert column not in high
    nulls = {name: 1 for name in table.column_names} | {"ts": 2, "d": 2, "none": 4}
    assert stats["nullCount"] == nulls
    text = delta_stats(table, table.column_names)
    assert '"dec":-99999999999999999999999999999999999999' in text
    assert '"dec2":9999999999999999999999999999.9999999999' in text
    assert dumps_stats(loads_stats(text)) == text


@pytest.mark.parametrize(
    ("unit", "values", "expected"),
    [
        ("ns", [-1, 1], ("1969-12-31T23:59:59.999", "1970-01-01T00:00:00.001")),
        ("us", [-1_500, 999], ("1969-12-31T23:59:59.998", "1970-01-01T00:00:00.001")),
        ("ms", [-1, 5], ("1969-12-31T23:59:59.999", "1970-01-01T00:00:00.005")),
        (
            "s",
            [-62_135_596_800, 253_402_300_799],
            ("0001-01-01T00:00:00.000", "9999-12-31T23:59:59.000"),
        ),
    ],
)
def test_timestamp_bounds_bound_every_value_at_any_unit(
    unit: str, values: list[int], expected: tuple[str, str]
) -> None:
    table = pa.table({"t": pa.array(values, pa.int64()).cast(pa.timestamp(unit))})
    stats = json.loads(delta_stats(table, ["t"]))
    assert (stats["minValues"]["t"], stats["maxValues"]["t"]) == expected


def test_values_beyond_year_9999_get_no_bounds() -> None:
    micros = [0, 10**18]  # year 33658
    table = pa.table(
        {
            "t": pa.array(micros, pa.int64()).cast(pa.timestamp("us")),
            "d": pa.array([0, 3_000_000], pa.int32()).cast(pa.date32()),
            "d64": pa.array([0, 86_400_000], pa.int64()).cast(pa.date64()),
        }
    )
    stats = json.loads(delta_stats(table, ["t", "d", "d64"]))
    assert stats["minValues"] == {"d64": "1970-01-01"}
    assert stats["maxValues"] == {"d64": "1970-01-02"}
    assert stats["nullCount"] == {"t": 0, "d": 0, "d64": 0}


@pytest.mark.parametrize("cut", [1, 2, 3])
def test_merged_row_group_stats_equal_the_whole_files(cut: int) -> None:
    table = extremes()
    columns = table.column_names
    parts = [table.slice(0, cut), table.slice(cut)]
    merged = merge_stats([loads_stats(delta_stats(p, columns)) for p in parts])
    assert merged == delta_stats(table, columns)


def test_float_columns_get_no_footer_statistics() -> None:
    schema = pa.schema(
        [
            ("f", pa.float32()),
            ("x", pa.float64()),
            ("l", pa.int64()),
            ("st", pa.struct([("a", pa.float64()), ("b", pa.string())])),
        ]
    )
    assert footer_statistics(schema) == ["l", "st.b"]


def _add(path: str, size: int) -> AddFile:
    return AddFile(path, path, size, 0, {}, None)


def test_int96_timestamps_read_as_utc_microseconds(tmp_path: Path) -> None:
    # Spark writes timestamp columns as INT96; at nanoseconds 9999-12-31 wrapped to 1816
    values = [TS_MAX, TS_MIN, None]
    table = pa.table({"ts": pa.array(values, pa.timestamp("us"))})
    pq.write_table(table, tmp_path / "a.parquet", use_deprecated_int96_timestamps=True)
    source = PartitionSource(
        open_storage(str(tmp_path)), [_add("a.parquet", (tmp_path / "a.parquet").stat().st_size)]
    )
    assert source.schema.field("ts").type == pa.timestamp("us", "UTC")
    (batch,) = list(source.batches(batch_rows=10))
    utc = dt.UTC
    assert batch.column(0).to_pylist() == [
        TS_MAX.replace(tzinfo=utc),
        TS_MIN.replace(tzinfo=utc),
        None,
    ]


class _Boom(Exception):
    pass


def _write_all(output: ClusteredOutput, table: pa.Table) -> None:
    output.write(table)
    output.close()


def test_an_aborted_output_deletes_every_file_it_began(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = extremes()
    storage = open_storage(str(tmp_path))
    output = ClusteredOutput(
        storage,
        directory="",
        rows=table.num_rows,
        count=table.num_rows,
        schema=table.schema,
        stats_columns=table.column_names,
        group_rows=1,
    )
    real = ClusteredOutput._write_piece
    calls = [0]

    def failing(self: ClusteredOutput, file: object, piece: object, finish: bool) -> None:
        calls[0] += 1
        if calls[0] == 3:
            raise _Boom
        real(self, file, piece, finish)  # type: ignore[arg-type]

    monkeypatch.setattr(ClusteredOutput, "_write_piece", failing)
    with pytest.raises(_Boom):
        _write_all(output, table)
    assert list(tmp_path.glob("*.parquet"))  # files were written before the failure
    assert output.abort() == []
    assert list(tmp_path.glob("*.parquet")) == []
