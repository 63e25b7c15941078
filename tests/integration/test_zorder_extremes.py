"""Z-order and compaction of tables holding every type's extreme values, Delta 4.4 the oracle.

The values: timestamps (with and without time zone) at year 1 and at 9999-12-31 23:59:59.999999,
dates at 0001-01-01 and 9999-12-31, float and double NaN, +0.0/-0.0, infinities and the smallest
subnormal, decimal(38,0) and decimal(38,10) at their maximum and minimum, int64's extremes,
empty strings and nulls. Two tables of several small files hold them: one written by delta-rs
(``write_deltalake``), one by Delta on Spark (its timestamps are INT96 in the files).

After a Z-order on each column, and after a compaction, Delta reads the same rows (count and
checksum), no Parquet file is left that the table does not reference, and Delta uses the new
files' statistics: a predicate on the column counts what it counts with data skipping off, and
still does in a copy from which every file the statistics exclude was deleted (a file Delta
did not skip would fail the read). Our statistics are compared with Delta's own OPTIMIZE of the
same rows. Failures after files were written leave no file behind, or name those left.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from python_ops.errors import StorageError
from python_ops.ops.optimize.execute import optimize
from python_ops.ops.optimize.sorting import clustered_output
from python_ops.storage.local import LocalStorage
from tests.helpers.delta_reads import oracle, table_sql
from tests.helpers.paths import ROOT
from tests.helpers.stats import live_adds

pytestmark = [pytest.mark.classic_spark, pytest.mark.delta_jars]

UTC = dt.UTC
TS_MAX = dt.datetime(9999, 12, 31, 23, 59, 59, 999_999)
TS_MIN = dt.datetime(1, 1, 1)
DEC_MAX = Decimal(10**38 - 1)
DEC_MIN = Decimal(-(10**38 - 1))
DEC2_MAX = Decimal("9999999999999999999999999999.9999999999")
DEC2_MIN = Decimal("-9999999999999999999999999999.9999999999")
I64 = 2**63
INF = math.inf
NAN = math.nan
SCHEMA = pa.schema(
    [
        ("id", pa.int64()),
        ("ts", pa.timestamp("us", "UTC")),
        ("ntz", pa.timestamp("us")),
        ("d", pa.date32()),
        ("f", pa.float32()),
        ("x", pa.float64()),
        ("dec", pa.decimal128(38, 0)),
        ("dec2", pa.decimal128(38, 10)),
        ("l", pa.int64()),
        ("s", pa.string()),
    ]
)
DDL = (
    "id BIGINT, ts TIMESTAMP, ntz TIMESTAMP_NTZ, d DATE, f FLOAT, x DOUBLE, dec DECIMAL(38,0), "
    "dec2 DECIMAL(38,10), l BIGINT, s STRING"
)
COLUMNS = SCHEMA.names[1:]
# every seventh row is one of these (ts, ntz, d, f, x, dec, dec2, l, s); the others ordinary
SPECIAL = [
    (TS_MAX, TS_MAX, dt.date(9999, 12, 31), INF, INF, DEC_MAX, DEC2_MAX, I64 - 1, ""),
    (TS_MIN, TS_MIN, dt.date(1, 1, 1), -INF, -INF, DEC_MIN, DEC2_MIN, -I64, ""),
    (None,) * 9,
    (
        dt.datetime(1969, 12, 31, 23, 59, 59, 999_999),
        dt.datetime(9999, 12, 31, 23, 59, 59, 999_000),
        dt.date(1970, 1, 1),
        NAN,
        NAN,
        Decimal(0),
        Decimal("0E-10"),
        0,
        None,
    ),
    (TS_MAX, TS_MIN, dt.date(9999, 12, 31), -0.0, -0.0, DEC_MAX, Decimal("-1E-10"), I64 - 1, ""),
    (TS_MIN, TS_MAX, dt.date(1, 1, 1), 0.0, 5e-324, DEC_MIN, DEC2_MAX, -I64, "zz"),
]
FILES = 6
ROWS_PER_FILE = 8
SKIPPING = "spark.databricks.delta.stats.skipping"
PUSHDOWN = "spark.sql.parquet.filterPushdown"


def _ordinary(i: int) -> tuple[Any, ...]:
    v = (i * 7919) % 1000
    start = dt.datetime(2024, 1, 1)
    return (
        start + dt.timedelta(minutes=v, microseconds=v),
        start + dt.timedelta(seconds=v),
        dt.date(2024, 1, 1) + dt.timedelta(days=v),
        v / 8,
        v / 3,
        Decimal(v),
        Decimal(v) / 8,
        v * 10**15,
        f"v{v:04d}",
    )


def rows_of_file(k: int) -> list[tuple[Any, ...]]:
    """The rows (id first) of the ``k``-th small file."""
    out = []
    for i in range(k * ROWS_PER_FILE, (k + 1) * ROWS_PER_FILE):
        special = i % 7 == 0 and i // 7 < len(SPECIAL)
        out.append((i, *(SPECIAL[i // 7] if special else _ordinary(i))))
    return out


def arrow_file(k: int) -> pa.Table:
    """The ``k``-th small file's rows as Arrow (``ts`` in UTC)."""
    columns: list[list[Any]] = [list(c) for c in zip(*rows_of_file(k), strict=True)]
    columns[1] = [None if v is None else v.replace(tzinfo=UTC) for v in columns[1]]
    return pa.table(dict(zip(SCHEMA.names, columns, strict=True)), schema=SCHEMA)


def _sql_number(value: float, kind: str) -> str:
    text = {INF: "Infinity", -INF: "-Infinity"}.get(value, repr(value))
    return f"CAST('{'NaN' if math.isnan(value) else text}' AS {kind})"


def _sql_value(value: Any, kind: str) -> str:
    """A SQL literal of ``value`` for a column of SQL type ``kind``."""
    if value is None:
        return "NULL"
    if kind in ("TIMESTAMP", "TIMESTAMP_NTZ"):
        return f"{kind}'{value.isoformat(sep=' ')}'"
    if kind == "DATE":
        return f"DATE'{value.isoformat()}'"
    if kind in ("FLOAT", "DOUBLE"):
        return _sql_number(value, kind)
    if kind == "STRING":
        return "'" + value.replace("'", "''") + "'"
    return f"CAST('{value}' AS {kind})"


def sql_rows(k: int) -> str:
    """The ``k``-th small file's rows as a ``VALUES`` list."""
    kinds = [part.split(" ", 1)[1] for part in DDL.split(", ")]
    kinds[6:8] = ["DECIMAL(38,0)", "DECIMAL(38,10)"]  # the split cut their commas
    return ", ".join(
        "(" + ", ".join(_sql_value(v, t) for v, t in zip(row, kinds, strict=True)) + ")"
        for row in rows_of_file(k)
    )


# Predicates per column: (SQL, which statistic excludes a file: max, min, null or none)
PREDICATES: dict[str, list[tuple[str, str | None]]] = {
    "ts": [
        ("ts = TIMESTAMP'9999-12-31 23:59:59.999999'", "max"),
        ("ts = TIMESTAMP'0001-01-01 00:00:00'", "min"),
        ("ts > TIMESTAMP'9999-12-31 23:59:59.999'", None),
        ("ts < TIMESTAMP'1970-01-01 00:00:00'", None),
    ],
    "ntz": [
        ("ntz = TIMESTAMP_NTZ'9999-12-31 23:59:59.999999'", "max"),
        ("ntz = TIMESTAMP_NTZ'0001-01-01 00:00:00'", "min"),
        ("ntz >= TIMESTAMP_NTZ'9999-12-31 23:59:59.999'", None),
    ],
    "d": [("d = DATE'9999-12-31'", "max"), ("d = DATE'0001-01-01'", "min")],
    "f": [
        ("f = CAST('Infinity' AS FLOAT)", "max"),
        ("f = CAST('-Infinity' AS FLOAT)", "min"),
        ("f = CAST('NaN' AS FLOAT)", "max"),
        ("f = 0.0", None),
    ],
    "x": [
        ("x = CAST('Infinity' AS DOUBLE)", "max"),
        ("x = CAST('-Infinity' AS DOUBLE)", "min"),
        ("x = CAST('NaN' AS DOUBLE)", "max"),
        ("x = CAST('-0.0' AS DOUBLE)", None),
        ("x > 0.0 AND x < 1e-300", None),
    ],
    "dec": [
        (f"dec = CAST('{DEC_MAX}' AS DECIMAL(38,0))", "max"),
        (f"dec = CAST('{DEC_MIN}' AS DECIMAL(38,0))", "min"),
    ],
    "dec2": [
        (f"dec2 = CAST('{DEC2_MAX}' AS DECIMAL(38,10))", "max"),
        (f"dec2 = CAST('{DEC2_MIN}' AS DECIMAL(38,10))", "min"),
        ("dec2 = CAST('-0.0000000001' AS DECIMAL(38,10))", None),
    ],
    "l": [
        (f"l = CAST('{I64 - 1}' AS BIGINT)", "max"),
        (f"l = CAST('{-I64}' AS BIGINT)", "min"),
    ],
    "s": [("s = ''", "min"), ("s = 'zz'", None), ("s > 'v0500'", None)],
}
for _column, _found in PREDICATES.items():
    _found.append((f"{_column} IS NULL", "null"))


def count(spark: Any, table: Path, predicate: str) -> int:
    """Delta's count of the rows of ``table`` matching ``predicate``."""
    row = spark.sql(f"SELECT count(*) AS n FROM {table_sql(table)} WHERE {predicate}").first()
    return int(row["n"])


@pytest.fixture(scope="module")
def utc(delta_spark: Any) -> Iterator[Any]:
    """The Delta session in UTC (timestamp literals and statistics in UTC)."""
    key = "spark.sql.session.timeZone"
    before = delta_spark.conf.get(key)
    delta_spark.conf.set(key, "UTC")
    yield delta_spark
    delta_spark.conf.set(key, before)


def _truth(spark: Any, table: Path) -> dict[str, int]:
    """Every predicate's count with no statistics used: the rows' answer.

    Delta's data skipping is off, and so is Spark's Parquet filter pushdown: it trusts the
    footer bounds of float columns, which Arrow-based writers (delta-rs) write without NaN,
    and so answered ``f = NaN`` with 0 rows on the table delta-rs wrote (1 on Delta's).
    """
    settings = (SKIPPING, PUSHDOWN)
    for key in settings:
        spark.conf.set(key, "false")
    try:
        return {p: count(spark, table, p) for preds in PREDICATES.values() for p, _ in preds}
    finally:
        for key in settings:
            spark.conf.unset(key)


@pytest.fixture(scope="module")
def bases(utc: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Any]]:
    """The two tables of small files by writer, with Delta's checksum and predicate counts."""
    from deltalake import write_deltalake

    root = tmp_path_factory.mktemp("extremes")
    rs = root / "delta_rs"
    for k in range(FILES):
        write_deltalake(str(rs), arrow_file(k), mode="append")
    spark_written = root / "delta_spark"
    utc.sql(f"CREATE TABLE {table_sql(spark_written)} ({DDL}) USING delta")
    for k in range(FILES):
        # one file per insert: Spark would split eight rows over its cores
        utc.sql(
            f"INSERT INTO {table_sql(spark_written)} "
            f"SELECT /*+ COALESCE(1) */ * FROM VALUES {sql_rows(k)}"
        )
    out = {}
    for name, table in (("delta_rs", rs), ("delta_spark", spark_written)):
        assert len(live_adds(table)) == FILES
        out[name] = (table, (oracle(utc, table), _truth(utc, table)))
    assert out["delta_rs"][1] == out["delta_spark"][1]  # the same rows, the same answers
    return out


def parquet_files(table: Path) -> set[str]:
    """The data files on disk, relative to the root."""
    return {
        str(p.relative_to(table)) for p in table.rglob("*.parquet") if "_delta_log" not in p.parts
    }


def assert_no_untracked(table: Path) -> None:
    """Every Parquet file on disk is a live file of the table (removed ones aside)."""
    live = set(live_adds(table))
    removed = set()
    for log in (table / "_delta_log").glob("*.json"):
        for line in log.read_text().splitlines():
            action = json.loads(line)
            if "remove" in action:
                removed.add(action["remove"]["path"])
    assert parquet_files(table) - live - removed == set()


def _bound(stats: dict[str, Any], side: str, column: str) -> Any:
    """A file's bound as a comparable value (writers spell timestamps differently)."""
    value = stats[f"{side}Values"].get(column)
    if column in ("ts", "ntz") and value is not None:
        return dt.datetime.fromisoformat(value)  # delta-rs: ...00Z, Delta and we: ...00.000Z
    return value


def excluded(adds: dict[str, dict[str, Any]], column: str, side: str) -> list[str]:
    """Files the statistics exclude for ``column`` = its extreme on ``side`` (or IS NULL)."""
    parsed = {p: json.loads(a["stats"], parse_float=Decimal) for p, a in adds.items()}
    if side == "null":
        return [p for p, s in parsed.items() if s["nullCount"][column] == 0]
    bounds = {p: _bound(s, side, column) for p, s in parsed.items()}
    present = [b for b in bounds.values() if b is not None]
    if not present:
        return []
    extreme = max(present) if side == "max" else min(present)
    return [p for p, b in bounds.items() if b is not None and b != extreme]


def check_skipping(spark: Any, table: Path, truth: dict[str, int], column: str, tmp: Path) -> int:
    """Delta's counts on ``column`` match ``truth``, also without the files stats exclude.

    Returns:
        How many files Delta had to skip (deleted from a copy) over all the predicates.
    """
    adds = live_adds(table)
    skipped = 0
    for predicate, side in PREDICATES[column]:
        assert count(spark, table, predicate) == truth[predicate], predicate
        if side is None:
            continue
        gone = excluded(adds, column, side)
        if not gone:
            continue
        copy = tmp / f"skip_{column}_{skipped}_{len(gone)}"
        shutil.copytree(table, copy)
        for path in gone:
            (copy / path).unlink()
        assert count(spark, copy, predicate) == truth[predicate], (predicate, gone)
        skipped += len(gone)
    return skipped


def check_stats_documents(table: Path) -> None:
    """Every live file's ``stats``: JSON with the right record count and every column's nulls."""
    total = 0
    for path, add in live_adds(table).items():
        stats = json.loads(add["stats"])
        rows = pq.ParquetFile(table / path).metadata.num_rows
        assert stats["numRecords"] == rows, path
        assert set(stats["nullCount"]) == {"id", *COLUMNS}, path
        total += rows
    assert total == FILES * ROWS_PER_FILE


def new_files_in_order(table: Path, before: set[str]) -> pa.Table:
    """The rows of the files the rewrite added, in its output order (part index)."""
    added = sorted(set(live_adds(table)) - before)
    return pa.concat_tables([pq.read_table(table / p) for p in added])


def assert_sorted(rows: pa.Table, column: str) -> None:
    """``column`` ascends through ``rows`` (Arrow's order: NaN after numbers, nulls last)."""
    ranks = np.asarray(pc.rank(rows.column(column), sort_keys="ascending", tiebreaker="min"))
    assert bool(np.all(np.diff(ranks) >= 0)), rows.column(column)


@pytest.fixture
def copy_of(bases: dict[str, tuple[Path, Any]], tmp_path: Path) -> Callable[[str], Path]:
    """A fresh copy of one of the base tables."""

    def copy(writer: str) -> Path:
        target = tmp_path / writer
        shutil.copytree(bases[writer][0], target)
        return target

    return copy


@pytest.mark.parametrize("writer", ["delta_rs", "delta_spark"])
@pytest.mark.parametrize("column", COLUMNS)
def test_zorder_on_each_extreme_column(
    utc: Any,
    bases: dict[str, tuple[Path, Any]],
    copy_of: Callable[[str], Path],
    tmp_path: Path,
    writer: str,
    column: str,
) -> None:
    table = copy_of(writer)
    rows_checksum, truth = bases[writer][1]
    before = set(live_adds(table))
    size = sum((table / p).stat().st_size for p in before)

    result = optimize(str(table), zorder_by=[column], full=True, target_size_bytes=size // 3)

    assert result.files_removed == FILES
    assert result.files_added >= 2
    assert oracle(utc, table) == rows_checksum
    assert_no_untracked(table)
    check_stats_documents(table)
    assert_sorted(new_files_in_order(table, before), column)
    assert check_skipping(utc, table, truth, column, tmp_path) > 0


NOT_FLOAT = [c for c in COLUMNS if c not in ("f", "x")]


def compact(table: Path) -> None:
    """Compact ``table``'s small files two to a bin (every file rewritten), check the files.

    Every input is rewritten: a file left as it was keeps its writer's statistics, and
    delta-rs 1.6 wrote ``decimal(38,0)`` bounds clamped to int64 (-9223372036854775808 ..
    9223372036854775807), with which Delta skipped the file holding 10^38 - 1 (measured).
    """
    sizes = [(table / p).stat().st_size for p in live_adds(table)]
    assert 3 * min(sizes) > 2 * max(sizes)  # so no three files fit a target of two
    result = optimize(str(table), min_small_files=2, target_size_bytes=2 * max(sizes))
    assert result.files_removed == FILES
    assert result.files_added == FILES // 2
    assert_no_untracked(table)
    check_stats_documents(table)


@pytest.mark.parametrize("writer", ["delta_rs", "delta_spark"])
def test_compaction_of_small_extreme_files(
    utc: Any,
    bases: dict[str, tuple[Path, Any]],
    copy_of: Callable[[str], Path],
    tmp_path: Path,
    writer: str,
) -> None:
    table = copy_of(writer)
    rows_checksum, truth = bases[writer][1]

    compact(table)

    assert oracle(utc, table) == rows_checksum
    for column in NOT_FLOAT:
        check_skipping(utc, table, truth, column, tmp_path)


@pytest.mark.parametrize(
    "writer",
    [
        "delta_rs",
        "delta_spark",
    ],
)
def test_compaction_keeps_spark_answers_on_float_columns(
    utc: Any,
    bases: dict[str, tuple[Path, Any]],
    copy_of: Callable[[str], Path],
    tmp_path: Path,
    writer: str,
) -> None:
    table = copy_of(writer)
    truth = bases[writer][1][1]

    compact(table)

    for column in ("f", "x"):
        check_skipping(utc, table, truth, column, tmp_path)


def assert_stats_agree(mine: str, delta: str) -> None:
    """Our ``stats`` equal Delta's value for value; a bound we omit is one JSON cannot carry."""
    ours, theirs = (json.loads(s, parse_float=Decimal) for s in (mine, delta))
    assert ours["numRecords"] == theirs["numRecords"]
    assert ours["nullCount"] == theirs["nullCount"]
    for side in ("minValues", "maxValues"):
        assert set(ours[side]) <= set(theirs[side]), side
        for column, value in theirs[side].items():
            if column in ours[side]:
                assert ours[side][column] == value, (side, column, ours[side][column], value)
            else:  # Delta writes NaN and infinities as strings; we keep no bounds there
                assert value in ("NaN", "Infinity", "-Infinity"), (side, column, value)


@pytest.mark.parametrize("writer", ["delta_rs", "delta_spark"])
def test_our_statistics_equal_the_ones_delta_writes_for_the_same_rows(
    utc: Any, copy_of: Callable[[str], Path], tmp_path: Path, writer: str
) -> None:
    ours = copy_of(writer)
    theirs = tmp_path / "theirs"
    shutil.copytree(ours, theirs)

    optimize(str(ours), zorder_by=["ts"], full=True)  # one file: every row
    utc.sql(f"OPTIMIZE {table_sql(theirs)} ZORDER BY (ts)")

    (mine,) = live_adds(ours).values()
    (delta,) = live_adds(theirs).values()
    assert_stats_agree(mine["stats"], delta["stats"])
    assert json.loads(mine["stats"])["maxValues"]["ts"] == "9999-12-31T23:59:59.999Z"
    assert json.loads(mine["stats"])["minValues"]["ntz"] == "0001-01-01T00:00:00.000"
    assert oracle(utc, ours) == oracle(utc, theirs)


def _fail_stats_at(monkeypatch: pytest.MonkeyPatch, call: int) -> None:
    """Make the ``call``-th statistics of a written piece raise (the file is already written)."""
    real = clustered_output.delta_stats
    calls = [0]

    def failing(table: pa.Table, columns: list[str]) -> str:
        calls[0] += 1
        if calls[0] == call:
            raise OverflowError("injected after a file was written")
        return real(table, columns)

    monkeypatch.setattr(clustered_output, "delta_stats", failing)


def _quarter(table: Path) -> tuple[int, int]:
    """A target of a quarter of the table's bytes, and how many files the Z-order then writes."""
    size = sum((table / p).stat().st_size for p in live_adds(table))
    return size // 4, math.ceil(size / (size // 4))


@pytest.mark.parametrize("which", ["second", "last"])
def test_a_failed_zorder_leaves_no_file_behind(
    utc: Any,
    bases: dict[str, tuple[Path, Any]],
    copy_of: Callable[[str], Path],
    monkeypatch: pytest.MonkeyPatch,
    which: str,
) -> None:
    # the second file fails while later files are written; the last one fails in close()
    table = copy_of("delta_rs")
    files_before = parquet_files(table)
    log_before = sorted(p.name for p in (table / "_delta_log").iterdir())
    target, outputs = _quarter(table)
    assert outputs >= 4
    _fail_stats_at(monkeypatch, 2 if which == "second" else outputs)

    with pytest.raises(OverflowError, match="injected"):
        optimize(str(table), zorder_by=["ts"], full=True, target_size_bytes=target)

    assert parquet_files(table) == files_before
    assert sorted(p.name for p in (table / "_delta_log").iterdir()) == log_before
    assert oracle(utc, table) == bases["delta_rs"][1][0]


def test_files_a_failed_zorder_cannot_delete_are_named_in_the_error(
    bases: dict[str, tuple[Path, Any]],
    copy_of: Callable[[str], Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    table = copy_of("delta_rs")
    files_before = parquet_files(table)
    target, _ = _quarter(table)
    _fail_stats_at(monkeypatch, 2)
    monkeypatch.setattr(LocalStorage, "delete_files", lambda self, rels: list(rels))

    with pytest.raises(StorageError) as caught:
        optimize(str(table), zorder_by=["ts"], full=True, target_size_bytes=target)

    left = parquet_files(table) - files_before
    assert left
    message = str(caught.value)
    assert all(path in message for path in left), (left, message)
    assert "injected" in message
    assert isinstance(caught.value.__cause__, OverflowError)


def test_the_cli_zorders_a_table_holding_year_9999(
    utc: Any, bases: dict[str, tuple[Path, Any]], copy_of: Callable[[str], Path]
) -> None:
    table = copy_of("delta_rs")
    done = subprocess.run(
        [sys.executable, "-m", "python_ops", "optimize", str(table), "--zorder-by", "ts", "--full"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert oracle(utc, table) == bases["delta_rs"][1][0]
    assert_no_untracked(table)
