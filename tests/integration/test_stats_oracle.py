"""Delta as the oracle of the statistics op: Delta 4.4 (JVM Spark Connect server with the jars).

* Delta writes a table of every type it keeps statistics for; the same files, their statistics
  stripped, get ours: each file's ``add.stats`` equals Delta's own, field by field.
* Delta reads every table after the op: the same rows and checksum.
* Delta uses the statistics: a point query reads fewer files afterwards, counted by the scan's
  own metric ("number of files read" of its ``FileSourceScanExec``, from the server's UI API).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import urllib.error
from collections.abc import Callable, Iterator
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from tests.helpers.classic import classic_env
from tests.helpers.delta_reads import oracle, table_sql
from tests.helpers.paths import ROOT
from tests.helpers.stats import (
    commit,
    live_adds,
    log_versions,
    parsed,
    partitioned_with_checkpoint,
    run_stats,
    strip_stats,
)

pytestmark = [pytest.mark.classic_spark, pytest.mark.delta_jars, pytest.mark.slow]

TYPES = (
    "id BIGINT, b TINYINT, sm SMALLINT, i INT, f FLOAT, d DOUBLE, dec DECIMAL(12,3), dt DATE, "
    "ts TIMESTAMP, ntz TIMESTAMP_NTZ, s STRING, flag BOOLEAN, bin BINARY, "
    "st STRUCT<x: INT, y: STRING>, arr ARRAY<INT>, nothing STRING"
)
LONG = "abcdefghijklmnopqrstuvwxyz0123456789"  # 36 characters: cut at 32
# a multi-byte character right at the cut, and one outside the BMP (two UTF-16 units)
ACCENTS = "é" * 31 + "éa"
EMOJI = "x" * 31 + "\U0001f600" + "tail"
BATCHES = (
    [
        f"(1, 1, 10, 100, 0.1, 1.5, 123.450, DATE'2024-01-01', "
        f"TIMESTAMP'2024-03-01 12:34:56.789999', TIMESTAMP_NTZ'2024-03-01 12:34:56.123456', "
        f"'{LONG}', true, X'0102', named_struct('x', 1, 'y', 'a'), array(1, 2), NULL)",
        "(2, -5, NULL, -7, -2.5, CAST('NaN' AS DOUBLE), -0.001, DATE'1999-12-31', "
        "TIMESTAMP'1969-12-31 23:59:59.999001', NULL, 'b', NULL, NULL, NULL, NULL, NULL)",
    ],
    [
        f"(3, 7, 3, 42, 3.25, 1e300, 0.000, DATE'2030-06-15', TIMESTAMP'2001-01-01 00:00:00', "
        f"TIMESTAMP_NTZ'1900-01-01 00:00:00.001', '{ACCENTS}', false, X'', "
        "named_struct('x', NULL, 'y', 'zz'), array(), NULL)",
        f"(4, 0, 0, 0, 0.0, -0.0, 99.999, NULL, NULL, NULL, '{EMOJI}', true, X'FF', "
        "named_struct('x', 5, 'y', NULL), NULL, NULL)",
    ],
    [
        "(5, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
        "NULL, NULL)",
    ],
)


@pytest.fixture
def utc(delta_spark: Any) -> Iterator[Any]:
    """The Delta session in UTC (Delta writes timestamp bounds in the session's zone)."""
    key = "spark.sql.session.timeZone"
    before = delta_spark.conf.get(key)
    delta_spark.conf.set(key, "UTC")
    yield delta_spark
    delta_spark.conf.set(key, before)


def _execution(server: Any, number: int) -> dict[str, Any]:
    """Execution ``number`` with its plan, or ``{}`` when the UI no longer answers for it.

    The server's ``ui`` asks again on a 404 (Spark's answer for an execution it is dropping);
    one still missing after that is not ours to read: the caller asserts it saw its scan.
    """
    try:
        return dict(server.ui(f"sql/{number}?details=true&planDescription=true", timeout_s=120))
    except urllib.error.HTTPError as err:
        if err.code != 404:
            raise
        return {}


def _newest_execution(server: Any) -> int:
    return max(
        (int(e["id"]) for e in server.ui("sql?details=false&length=100000", timeout_s=120)),
        default=-1,
    )


def files_read(server: Any, spark: Any, query: str, location: Path, marker: str) -> int:
    """Files Delta's data scan read for ``query`` (its "number of files read").

    Only executions after the query started whose plan holds ``marker`` (the query's filter)
    count, and only their Parquet scans: Delta's own reads of the log (its JSON commits, when
    the snapshot is updated) are scans too.
    """
    before = _newest_execution(server)
    spark.sql(query).collect()
    total = 0
    seen = False
    for number in range(before + 1, _newest_execution(server) + 1):
        execution = _execution(server, number)
        plan = execution.get("planDescription", "")
        if str(location) not in plan or marker not in plan:
            continue
        for node in execution.get("nodes", []):
            if not str(node.get("nodeName", "")).startswith("Scan parquet"):
                continue
            for metric in node.get("metrics", []):
                if metric["name"] == "number of files read":
                    total += int(str(metric["value"]).replace(",", ""))
                    seen = True
    assert seen, f"no scan of {location} with a file count among the new executions"
    return total


def test_our_statistics_equal_the_ones_delta_writes_for_the_same_files(
    utc: Any, tmp_path: Path
) -> None:
    spark = utc
    theirs = tmp_path / "delta_written"
    spark.sql(f"CREATE TABLE {table_sql(theirs)} ({TYPES}) USING delta")
    for rows in BATCHES:
        spark.sql(f"INSERT INTO {table_sql(theirs)} VALUES {', '.join(rows)}")
    ours = tmp_path / "ours"
    shutil.copytree(theirs, ours)
    delta_adds = live_adds(theirs)
    assert strip_stats(ours) == len(delta_adds) >= 3

    done = run_stats(ours, "--json")

    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["files_updated"] == len(delta_adds)
    our_adds = live_adds(ours)
    assert set(our_adds) == set(delta_adds)
    for path, add in our_adds.items():
        mine, delta = parsed(add["stats"]), parsed(delta_adds[path]["stats"])
        for field in sorted(set(mine) | set(delta)):
            assert mine.get(field) == delta.get(field), (path, field, mine, delta)
    # Delta reads the table after the op: the same rows and checksum as its own
    assert oracle(spark, ours) == oracle(spark, theirs)
    history = spark.sql(f"DESCRIBE HISTORY {table_sql(ours)} LIMIT 1").first()
    assert history["operation"] == "COMPUTE STATS"


def _ranges(location: Path, files: int) -> None:
    from deltalake import write_deltalake

    for f in range(files):  # file f holds ids f*100 .. f*100+99: disjoint ranges
        write_deltalake(
            str(location),
            pa.table({"id": pa.array(range(f * 100, f * 100 + 100), pa.int64()), "v": [f] * 100}),
            mode="append",
            configuration={"delta.dataSkippingNumIndexedCols": "0"},  # numRecords only
        )


def test_delta_skips_files_with_the_new_statistics(
    delta_server: Any, delta_spark: Any, tmp_path: Path
) -> None:
    table = tmp_path / "ranges"
    _ranges(table, 6)
    query = f"SELECT * FROM {table_sql(table)} WHERE id = 250"
    rows = oracle(delta_spark, table)
    before = files_read(delta_server, delta_spark, query, table, " = 250)")

    done = run_stats(table, "--columns", "id", "--json")

    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["stats_columns_after"] == "id"
    after = files_read(delta_server, delta_spark, query, table, " = 250)")
    assert (before, after) == (6, 1)
    assert oracle(delta_spark, table) == rows
    assert delta_spark.sql(query).count() == 1
    # Delta's own statistics columns now include the watched one
    props = {
        r["key"]: r["value"]
        for r in delta_spark.sql(f"SHOW TBLPROPERTIES {table_sql(table)}").collect()
    }
    assert props["delta.dataSkippingStatsColumns"] == "id"


def test_delta_reads_and_skips_a_table_with_deletion_vectors_after_the_op(
    delta_server: Any, delta_spark: Any, fixture_table: Callable[[str], Path]
) -> None:
    table = fixture_table("table-with-dv-small")
    strip_stats(table)
    rows = oracle(delta_spark, table)
    assert rows[0] == 8  # ten physical rows, two deleted by the deletion vector
    query = f"SELECT * FROM {table_sql(table)} WHERE value = 100"
    before = files_read(delta_server, delta_spark, query, table, " = 100)")

    done = run_stats(table)

    assert done.returncode == 0, done.stderr
    assert oracle(delta_spark, table) == rows
    after = files_read(delta_server, delta_spark, query, table, " = 100)")
    assert (before, after) == (1, 0)


def test_delta_reads_and_skips_a_partitioned_checkpointed_table_after_the_op(
    delta_server: Any, delta_spark: Any, tmp_path: Path
) -> None:
    table = tmp_path / "parts"
    partitioned_with_checkpoint(table)
    rows = oracle(delta_spark, table)
    query = f"SELECT * FROM {table_sql(table)} WHERE id = 25"
    before = files_read(delta_server, delta_spark, query, table, " = 25)")

    done = run_stats(table)

    assert done.returncode == 0, done.stderr
    assert oracle(delta_spark, table) == rows
    after = files_read(delta_server, delta_spark, query, table, " = 25)")
    assert (before, after) == (3, 1)


def _wide_delta_rs_table(location: Path) -> None:
    """delta-rs files of every kind its writer gives these types (two files, no statistics)."""
    from deltalake import write_deltalake

    batches = [
        {
            "id": pa.array([1, 2, 3], pa.int64()),
            "i": pa.array([7, None, -3], pa.int32()),
            "sm": pa.array([1, 2, None], pa.int16()),
            "b": pa.array([-1, 0, 1], pa.int8()),
            "f": pa.array([0.1, 2.5, None], pa.float32()),
            "d": pa.array([1.5, float("nan"), None]),
            "dec": pa.array([Decimal("1.50"), None, Decimal("-0.01")], pa.decimal128(10, 2)),
            "dt": pa.array([date(2024, 1, 2), None, date(1970, 1, 1)]),
            "ts": pa.array(
                [datetime(2024, 1, 1, 1, 2, 3, 456789), None, datetime(1969, 12, 31, 23, 59, 59)],
                pa.timestamp("us", "UTC"),
            ),
            "ntz": pa.array([datetime(2001, 2, 3, 4, 5, 6, 7), None, None], pa.timestamp("us")),
            "s": [LONG, None, ACCENTS],
            "flag": [True, None, False],
            "st": pa.array(
                [{"x": 1, "y": "a"}, None, {"x": None, "y": "b"}],
                pa.struct([("x", pa.int32()), ("y", pa.string())]),
            ),
            "arr": pa.array([[1], None, []], pa.list_(pa.int32())),
        },
        {
            "id": pa.array([10, 11], pa.int64()),
            "i": pa.array([None, None], pa.int32()),
            "sm": pa.array([5, 6], pa.int16()),
            "b": pa.array([2, 3], pa.int8()),
            "f": pa.array([-0.5, 1e30], pa.float32()),
            "d": pa.array([-1e300, 2.0]),
            "dec": pa.array([Decimal("99999999.99"), Decimal("0.00")], pa.decimal128(10, 2)),
            "dt": pa.array([date(9999, 12, 31), date(1, 1, 1)]),
            "ts": pa.array(
                [datetime(2000, 1, 1), datetime(2000, 1, 1, 0, 0, 0, 1)], pa.timestamp("us", "UTC")
            ),
            "ntz": pa.array([None, datetime(1900, 1, 1)], pa.timestamp("us")),
            "s": [EMOJI, "z" * 64],
            "flag": [None, None],
            "st": pa.array([None, None], pa.struct([("x", pa.int32()), ("y", pa.string())])),
            "arr": pa.array([[2, 3], [4]], pa.list_(pa.int32())),
        },
    ]
    for batch in batches:
        write_deltalake(str(location), pa.table(batch), mode="append")
    strip_stats(location)


def test_our_statistics_equal_deltas_own_recompute_of_the_same_files(tmp_path: Path) -> None:
    """Delta's ``StatisticsCollection.recompute`` (its COMPUTE STATS) on a copy is the oracle."""
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    _wide_delta_rs_table(ours)
    shutil.copytree(ours, theirs)

    done = run_stats(ours, "--json")
    assert done.returncode == 0, done.stderr
    recomputed = subprocess.run(
        [sys.executable, "-m", "tests.helpers.delta_recompute", str(theirs)],
        cwd=ROOT,
        env=classic_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert recomputed.returncode == 0, recomputed.stderr[-3000:]

    our_adds, delta_adds = live_adds(ours), live_adds(theirs)
    assert set(our_adds) == set(delta_adds)
    assert len(our_adds) == 2
    for path, add in our_adds.items():
        mine, delta = parsed(add["stats"]), parsed(delta_adds[path]["stats"])
        for field in sorted(set(mine) | set(delta)):
            assert mine.get(field) == delta.get(field), (path, field, mine, delta)
        assert add["dataChange"] is delta_adds[path]["dataChange"] is False
    # the commit is named as Delta names its own
    our_info = commit(ours, log_versions(ours)[-1])[0]["commitInfo"]
    delta_info = commit(theirs, log_versions(theirs)[-1])[0]["commitInfo"]
    for key in ("operation", "operationParameters", "isBlindAppend"):
        assert our_info[key] == delta_info[key], key
