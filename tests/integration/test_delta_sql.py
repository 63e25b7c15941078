"""Delta's own SQL where the engine has Delta: the probe, the settings, the statement, the result.

Everything runs on real engines: Delta Lake 4.4's JVM Spark Connect server (``delta_spark``),
the embedded Sail engine and a standalone Sail server. Tables are written by delta-rs or by
Delta's own SQL; after each OPTIMIZE, Delta itself reads the rows back (count and checksum)
and its ``DESCRIBE HISTORY`` shows the commit.
"""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from deltalake import write_deltalake
from pyspark.sql import SparkSession

from python_ops.delta.log.actions import DeletionVector, file_key, identity_text
from python_ops.delta.log.commits import commit_actions
from python_ops.delta.state.snapshot import read_snapshot
from python_ops.delta.writing.local_writer import LOCAL_DELTA_ENV
from python_ops.delta_sql import DeltaSql, Rows, session_sql
from python_ops.errors import ConfigError, EngineError, UnsupportedFeatureError
from python_ops.ops.optimize.execute import WRITER_COMPACT, optimize
from python_ops.ops.optimize.planning.plan import plan_optimize
from python_ops.ops.optimize.writers.delta_run import optimize_statement
from python_ops.ops.optimize.writers.delta_statement import (
    BATCH_SIZE,
    MARKER_PREFIX,
    MAX_DELETED_ROWS_RATIO,
    MAX_FILE_SIZE,
    MIN_FILE_SIZE,
    USER_METADATA,
    WRITER_DELTA_SQL,
)
from python_ops.spark_sessions import LazySession
from python_ops.storage import open_storage
from tests.helpers.classic import classic_env
from tests.helpers.delta_reads import oracle, table_sql
from tests.helpers.paths import GOLDEN, require_shared

SETTINGS = (MIN_FILE_SIZE, MAX_FILE_SIZE, MAX_DELETED_ROWS_RATIO, BATCH_SIZE, USER_METADATA)
TARGET = 100_000  # bytes: every small file of these tables fits one bin; "big" files exceed it


def append(location: Path, partition: str, rows: int, start: int, *, big: bool = False) -> None:
    """One data file in ``partition``; ``big`` files hold incompressible values (> TARGET)."""
    rng = np.random.default_rng(start)
    values = rng.integers(0, 2**62, rows) if big else np.arange(start, start + rows)
    data = pa.table(
        {
            "id": pa.array(np.arange(start, start + rows), pa.int64()),
            "v": pa.array(values, pa.int64()),
            "p": pa.array([partition] * rows, pa.string()),
        }
    )
    write_deltalake(str(location), data, mode="append", partition_by=["p"])


def layout(location: Path) -> None:
    """Partitions a, b: 6 small files each (a also one big file); c: 3 small files."""
    start = 0
    for partition, files in (("a", 6), ("b", 6), ("c", 3)):
        for i in range(files):
            append(location, partition, 10 + i, start)
            start += 1000
    append(location, "a", 20_000, start, big=True)


def history(spark: Any, location: Path | str, version: int) -> dict[str, Any]:
    rows = spark.sql(f"DESCRIBE HISTORY {table_sql(location)}").collect()
    found: dict[str, Any] = next(
        r.asDict(recursive=True) for r in rows if int(r["version"]) == version
    )
    return found


def removed_by(location: Path, version: int) -> set[str]:
    """The files commit ``version`` removed, named as plans name them (``AddFile.identity``)."""
    root = open_storage(str(location)).root
    return {
        identity_text(
            file_key(
                a["remove"]["path"],
                root,
                DeletionVector.parse(a["remove"].get("deletionVector")),
            )
        )
        for a in commit_actions(open_storage(str(location)), version)
        if "remove" in a
    }


def planned_files(plan: Any) -> set[str]:
    return {f for p in plan.work for b in p.bins for f in b.files}


def settings_of(spark: Any) -> dict[str, str | None]:
    return {key: spark.conf.get(key, None) for key in SETTINGS}


def sql_only(spark: Any) -> DeltaSql:
    """Delta's SQL on the Delta engine through statements only (as over a thrift connection)."""

    def execute(statement: str) -> Rows:
        return [r.asDict(recursive=True) for r in spark.sql(statement).collect()]

    return DeltaSql(execute, where="a SQL-only connection", key=("sql-only", id(spark)))


@pytest.mark.classic_spark
def test_delta_rewrites_exactly_the_plan_and_reports_its_own_metrics(
    tmp_path: Path, delta_spark: Any
) -> None:
    table = tmp_path / "events"
    layout(table)
    before = oracle(delta_spark, table)
    snapshot = read_snapshot(str(table))
    big = {f.relative_path for f in snapshot.files if f.size_bytes >= TARGET}
    in_c = {f.relative_path for f in snapshot.files if f.partition_values["p"] == "c"}
    assert len(big) == 1
    delta_spark.conf.set(MIN_FILE_SIZE, "12345")  # a value of the session's own: restored
    try:
        dry = optimize(
            str(table), target_size_bytes=TARGET, min_small_files=4, dry_run=True, spark=delta_spark
        )
        result = optimize(
            str(table), target_size_bytes=TARGET, min_small_files=4, spark=delta_spark
        )
        after_settings = settings_of(delta_spark)
    finally:
        delta_spark.conf.unset(MIN_FILE_SIZE)
    assert after_settings == {**dict.fromkeys(SETTINGS), MIN_FILE_SIZE: "12345"}
    plan = {f for p in dry.plan["partitions"] for b in p["bins"] for f in b["files"]}
    assert result.writer.startswith(WRITER_DELTA_SQL)
    assert result.plan == dry.plan
    (version,) = result.commits
    # Delta rewrote exactly the plan: the 12 small files of a and b; not the big file, not c
    assert removed_by(table, version) == plan
    assert len(plan) == 12
    assert not plan & (big | in_c)
    live = {f.relative_path for f in read_snapshot(str(table)).files}
    assert big | in_c <= live
    # our result is Delta's own: its history of that commit and its OPTIMIZE output row
    h = history(delta_spark, table, version)
    assert h["operation"] == "OPTIMIZE"
    assert str(h["userMetadata"]).startswith(MARKER_PREFIX)
    m = h["operationMetrics"]
    assert (result.files_added, result.files_removed) == (
        int(m["numAddedFiles"]),
        int(m["numRemovedFiles"]),
    )
    assert (result.bytes_added, result.bytes_removed) == (
        int(m["numAddedBytes"]),
        int(m["numRemovedBytes"]),
    )
    # considered: every file of the WHERE partitions (a: 7, b: 6); skipped: the big one
    assert (result.files_considered, result.files_skipped) == (13, 1)
    assert result.partitions_optimized == 2
    assert result.files_added == 2
    assert oracle(delta_spark, table) == before


@pytest.mark.classic_spark
def test_settings_are_restored_after_a_failed_statement_on_both_kinds_of_connection(
    tmp_path: Path, delta_spark: Any
) -> None:
    missing = table_sql(tmp_path / "missing")
    wanted = {MIN_FILE_SIZE: "1", MAX_FILE_SIZE: "2", BATCH_SIZE: None, USER_METADATA: "m"}
    delta_spark.conf.set(MAX_FILE_SIZE, "777")
    delta_spark.conf.set(BATCH_SIZE, "5")
    try:
        for sql in (session_sql(delta_spark), sql_only(delta_spark)):
            with pytest.raises(EngineError, match="DELTA_MISSING_DELTA_TABLE"):
                sql.run_with_settings(f"OPTIMIZE {missing}", wanted)
            assert settings_of(delta_spark) == {
                **dict.fromkeys(SETTINGS),
                MAX_FILE_SIZE: "777",
                BATCH_SIZE: "5",
            }
        # and while the statement runs, it sees exactly what was asked (SET/RESET route)
        rows = sql_only(delta_spark).run_with_settings(f"SET {USER_METADATA}", {USER_METADATA: "x"})
        assert rows == [{"key": USER_METADATA, "value": "x"}]
        assert settings_of(delta_spark)[USER_METADATA] is None
    finally:
        delta_spark.conf.unset(MAX_FILE_SIZE)
        delta_spark.conf.unset(BATCH_SIZE)


@pytest.mark.classic_spark
def test_threads_sharing_one_session_each_get_their_own_settings(
    tmp_path: Path, delta_spark: Any
) -> None:
    # x: all 8 files are small at TARGET; y: at 5,000 bytes its two big files are not
    x, y = tmp_path / "x", tmp_path / "y"
    for i in range(8):
        append(x, "a", 10 + i, i * 100)
    for i in range(6):
        append(y, "a", 10 + i, i * 100)
    append(y, "a", 2_000, 10_000, big=True)
    append(y, "a", 2_500, 20_000, big=True)
    targets = {x: TARGET, y: 5_000}
    plans = {
        t: plan_optimize(str(t), target_size_bytes=s, min_small_files=2) for t, s in targets.items()
    }
    results: dict[Path, Any] = {}
    errors: list[BaseException] = []

    def run(t: Path) -> None:
        try:
            results[t] = optimize(
                str(t), target_size_bytes=targets[t], min_small_files=2, spark=delta_spark
            )
        except BaseException as err:  # reported by the assertion below
            errors.append(err)

    threads = [threading.Thread(target=run, args=(t,)) for t in (x, y)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    for t in (x, y):
        (version,) = results[t].commits
        assert removed_by(t, version) == planned_files(plans[t])
    # with x's 100,000 bytes Delta would have taken all 8 files of y, the big ones too
    assert 2 <= len(planned_files(plans[y])) <= 6
    assert settings_of(delta_spark) == dict.fromkeys(SETTINGS)


@pytest.mark.classic_spark
def test_z_order_runs_as_delta_zorder_by(tmp_path: Path, delta_spark: Any) -> None:
    table = tmp_path / "events"
    layout(table)
    before = oracle(delta_spark, table)
    plan = plan_optimize(str(table), zorder_by=["v", "id"], where="p = 'b'")
    assert optimize_statement(plan, "shop.events") == (
        "OPTIMIZE shop.events WHERE (`p` = 'b') ZORDER BY (`v`, `id`)"
    )
    result = optimize(str(table), zorder_by=["v", "id"], where="p = 'b'", spark=delta_spark)
    (version,) = result.commits
    h = history(delta_spark, table, version)
    assert h["operation"] == "OPTIMIZE"
    assert h["operationParameters"]["zOrderBy"] == '["v","id"]'
    assert removed_by(table, version) == planned_files(plan)
    assert result.partitions_optimized == 1
    assert oracle(delta_spark, table) == before


def _delta_table(spark: Any, location: Path, properties: str) -> None:
    spark.sql(
        f"CREATE TABLE {table_sql(location)} (id BIGINT, name STRING, p STRING) USING delta "
        f"PARTITIONED BY (p) TBLPROPERTIES ({properties})"
    ).collect()
    for i in range(4):
        spark.sql(
            f"INSERT INTO {table_sql(location)} SELECT id, concat('n', id), 'a' "
            f"FROM range({i * 100}, {i * 100 + 100})"
        ).collect()


@pytest.mark.classic_spark
@pytest.mark.parametrize(
    ("properties", "feature"),
    [
        # deletion vectors are rewritten here now (test_deletion_vector_rewrite.py)
        # (name mode is rewritten here now: test_column_mapping_rewrite.py)
        (
            "'delta.columnMapping.mode' = 'id', 'delta.minReaderVersion' = '2', "
            "'delta.minWriterVersion' = '5'",
            "columnMapping",
        ),
    ],
    ids=["column-mapping"],
)
def test_tables_delta_rs_refuses_are_optimized_by_delta(
    tmp_path: Path,
    delta_spark: Any,
    properties: str,
    feature: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    table = tmp_path / "t"
    _delta_table(delta_spark, table, properties)
    if feature == "deletionVectors":
        delta_spark.sql(f"DELETE FROM {table_sql(table)} WHERE id % 7 = 0").collect()
        assert any(f.deletion_vector for f in read_snapshot(str(table)).files)
    else:
        delta_spark.sql(f"ALTER TABLE {table_sql(table)} RENAME COLUMN name TO label").collect()
    before = oracle(delta_spark, table)
    with monkeypatch.context() as local_delta_off:
        local_delta_off.setenv(LOCAL_DELTA_ENV, "off")
        with pytest.raises(UnsupportedFeatureError, match=feature):
            optimize(str(table), min_small_files=2)  # no engine with Delta: delta-rs's gate
    plan = plan_optimize(str(table), min_small_files=2, writer=_delta_writer())
    result = optimize(str(table), min_small_files=2, spark=delta_spark)
    assert result.writer.startswith(WRITER_DELTA_SQL)
    (version,) = result.commits
    assert removed_by(table, version) == planned_files(plan)
    assert history(delta_spark, table, version)["operation"] == "OPTIMIZE"
    assert oracle(delta_spark, table) == before
    if feature == "deletionVectors":
        assert not any(f.deletion_vector for f in read_snapshot(str(table)).files)


@pytest.mark.classic_spark
def test_a_clustered_table_is_clustered_by_delta(
    tmp_path: Path, delta_spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = tmp_path / "clustered"
    name = table_sql(table)
    delta_spark.sql(
        f"CREATE TABLE {name} (id BIGINT, v BIGINT) USING delta CLUSTER BY (v)"
    ).collect()
    for i in range(4):
        delta_spark.sql(
            f"INSERT INTO {name} SELECT id, id % 13 FROM range({i * 100}, {i * 100 + 100})"
        ).collect()
    before = oracle(delta_spark, table)
    with monkeypatch.context() as local_delta_off:
        local_delta_off.setenv(LOCAL_DELTA_ENV, "off")
        with pytest.raises(UnsupportedFeatureError, match="clustering"):
            optimize(str(table), min_small_files=2)  # delta-rs would compact, not cluster
    # Delta refuses ZORDER BY on a clustered table: a clear error before anything runs
    with pytest.raises(ConfigError, match=r"'zorder_by'.*liquid-clustered.*refuses ZORDER BY"):
        optimize(str(table), zorder_by=["v"], min_small_files=2, spark=delta_spark)
    result = optimize(str(table), min_small_files=2, spark=delta_spark)
    assert result.writer.startswith(WRITER_DELTA_SQL)
    (version,) = result.commits
    h = history(delta_spark, table, version)
    assert h["operation"] == "OPTIMIZE"
    assert h["operationParameters"]["clusterBy"] == '["v"]'
    assert oracle(delta_spark, table) == before


def _delta_writer() -> Any:
    from python_ops.delta.table.features import Writer

    return Writer.DELTA


@pytest.mark.classic_spark
@pytest.mark.parametrize("route", ["delta-rs", "delta"])
def test_optimize_oracle_delta_reads_the_same_rows_and_shows_the_commit(
    tmp_path: Path, delta_spark: Any, sail_spark: Any, route: str
) -> None:
    table = tmp_path / "events"
    layout(table)
    before = oracle(delta_spark, table)
    spark = delta_spark if route == "delta" else sail_spark
    result = optimize(str(table), target_size_bytes=TARGET, min_small_files=2, spark=spark)
    assert result.writer.startswith(WRITER_DELTA_SQL if route == "delta" else WRITER_COMPACT)
    assert result.files_removed == 15
    after = oracle(delta_spark, table)
    assert after == before
    for version in result.commits:  # ours commits each partition's rewrite on its own
        assert history(delta_spark, table, version)["operation"] == "OPTIMIZE"
    print(f"oracle {route}: rows {after[0]}, checksum {after[1]}, commit {version} OPTIMIZE")


@pytest.mark.classic_spark
def test_probe_on_a_delta_engine_names_a_missing_table_and_caches_nothing(
    tmp_path: Path, delta_spark: Any
) -> None:
    sql = DeltaSql(
        lambda s: [r.asDict(recursive=True) for r in delta_spark.sql(s).collect()],
        where="the Delta server",
    )
    missing = tmp_path / "missing"
    with pytest.raises(EngineError, match=r"DESCRIBE HISTORY delta.`.*/missing`.*not a Delta"):
        sql.has_delta(str(missing))
    table = tmp_path / "t"
    append(table, "a", 3, 0)
    assert sql.has_delta(str(table))  # the failure was not taken for "no Delta"


def test_sail_is_known_to_have_no_delta_without_a_statement(
    tmp_path: Path, sail_spark: Any
) -> None:
    lazy = LazySession()
    try:
        assert not session_sql(lazy).has_delta(str(tmp_path / "missing"))
        assert not lazy.started  # not even started, let alone probed
    finally:
        lazy.stop()
    sail = session_sql(sail_spark)
    assert sail.where == "the embedded Sail engine"
    assert not sail.has_delta(str(tmp_path / "missing"))  # a missing table: no probe, no error


def test_an_attached_sail_server_answers_the_probe_with_no_delta(
    tmp_path: Path, sail_server: str
) -> None:
    spark = SparkSession.builder.remote(sail_server).create()
    try:
        statements: list[str] = []

        def execute(statement: str) -> Rows:
            statements.append(statement)
            return [r.asDict(recursive=True) for r in spark.sql(statement).collect()]

        sql = DeltaSql(execute, where="an attached Sail server", key=("sail", sail_server))
        table = tmp_path / "t"
        append(table, "a", 3, 0)
        assert not sql.has_delta(str(table))
        assert not sql.named({}).has_delta(str(table))  # kept for the engine: asked once
        assert len(statements) == 1
        result = optimize(str(table), sql=sql)  # nothing worth it: no statement either
        assert result.skipped_reason is not None
        assert len(statements) == 1
    finally:
        spark.stop()


def test_every_partition_with_work_needs_no_where_and_paths_are_quoted(tmp_path: Path) -> None:
    table = tmp_path / "odd`name"
    for i in range(3):
        append(table, "a", 10, i * 10)
    plan = plan_optimize(str(table), min_small_files=2)
    assert len(plan.work) == len(plan.partitions) == 1
    name = DeltaSql(lambda s: [], where="x").table(plan.location)
    assert optimize_statement(plan, name) == f"OPTIMIZE delta.`{str(table).replace('`', '``')}`"


def test_lazy_session_starts_the_embedded_engine_on_first_use_only() -> None:
    lazy = LazySession({"spark.hadoop.fs.s3a.endpoint": "http://127.0.0.1:9"})
    try:
        # storage settings are read without starting anything
        assert lazy.conf.get("spark.hadoop.fs.s3a.endpoint", None) == "http://127.0.0.1:9"
        assert lazy.conf.get("spark.hadoop.fs.s3a.region", None) is None
        assert not lazy.started
        assert lazy.range(3).count() == 3  # first real use starts Sail
        assert lazy.started
        assert lazy.starts == 1
        assert lazy.conf.get("spark.hadoop.fs.s3a.endpoint") == "http://127.0.0.1:9"
        assert lazy.createDataFrame(pa.table({"x": [1, 2]})).count() == 2
        assert lazy.starts == 1
    finally:
        lazy.stop()
    assert not lazy.started


@pytest.mark.classic_spark
def test_a_partitioned_column_mapping_table_is_optimized_by_logical_partition_names(
    tmp_path: Path, delta_spark: Any
) -> None:
    # the log keys partition values by physical name (col-<uuid>); Delta's WHERE takes logical
    # names: before, Delta refused with DELTA_NON_PARTITION_COLUMN_REFERENCE. Without an engine
    # with Delta, this golden deletion-vector and column-mapping table (name mode) is rewritten
    # here now
    require_shared()
    table = tmp_path / "t"
    shutil.copytree(GOLDEN / "dv-with-columnmapping", table)
    before = oracle(delta_spark, table)
    plan = plan_optimize(str(table), min_small_files=2, writer=_delta_writer())
    assert plan.work
    assert plan.work[0].partition_values
    assert len(plan.work) < len(plan.partitions)  # a WHERE is needed
    assert "col-" not in optimize_statement(plan, "t").split("WHERE", 1)[1]
    result = optimize(str(table), min_small_files=2, spark=delta_spark)
    assert result.writer.startswith(WRITER_DELTA_SQL)
    assert result.files_removed == len(planned_files(plan)) > 0
    assert oracle(delta_spark, table) == before
    # without an engine: the same golden table rewritten here (no JVM), the same rows
    here = tmp_path / "here"
    shutil.copytree(GOLDEN / "dv-with-columnmapping", here)
    done = optimize(str(here), min_small_files=2, audit=False)
    assert done.writer == WRITER_COMPACT
    assert done.files_removed == result.files_removed
    assert oracle(delta_spark, here) == before


def test_an_attached_sail_servers_lack_of_delta_is_no_news(
    tmp_path: Path, sail_server: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Sail never has Delta's SQL: its answer to the probe is said at DEBUG, not printed."""
    spark = SparkSession.builder.remote(sail_server).create()
    try:
        table = tmp_path / "t"
        append(table, "a", 3, 0)
        with caplog.at_level(logging.DEBUG, logger="python_ops.delta_sql"):
            sql = session_sql(spark)  # not marked: it is asked, as any Connect server is
            assert sql.where.startswith("Spark Connect 127.0.0.1:")
            assert not sql.has_delta(str(table))
    finally:
        spark.stop()
    said = [(r.levelno, r.getMessage()) for r in caplog.records if "Delta SQL" in r.getMessage()]
    assert [level for level, _ in said if level >= logging.INFO] == []
    assert any(
        level == logging.DEBUG and "is a Sail server, which has no Delta SQL" in message
        for level, message in said
    )


_PLAIN_SPARK_PROBE = """
import json, logging, sys
from pyspark.sql import SparkSession
from python_ops.delta_sql import session_sql
records = []
class Keep(logging.Handler):
    def emit(self, record):
        records.append([record.levelname, record.getMessage()])
logger = logging.getLogger("python_ops.delta_sql")
logger.addHandler(Keep())
logger.setLevel(logging.DEBUG)
spark = SparkSession.builder.master("local[1]").appName("no-delta").getOrCreate()
try:
    answer = session_sql(spark).has_delta(sys.argv[1])
finally:
    spark.stop()
print(json.dumps({"has_delta": answer, "records": records}))
"""


@pytest.mark.classic_spark
def test_a_spark_without_delta_is_said_visibly_with_the_fix(tmp_path: Path) -> None:
    """A user's Spark without delta-spark is news: one INFO line that says what to do."""
    table = tmp_path / "t"
    append(table, "a", 3, 0)
    done = subprocess.run(
        [sys.executable, "-c", _PLAIN_SPARK_PROBE, str(table)],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
        env=classic_env(),
    )
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["has_delta"] is False
    visible = [message for level, message in report["records"] if level == "INFO"]
    assert len(visible) == 1
    assert visible[0].endswith(
        "has no Delta SQL (it cannot parse DESCRIBE HISTORY: delta-spark is not loaded there); "
        "OPTIMIZE runs through delta-rs in this process. For Delta's own OPTIMIZE on it, start "
        "it with the Delta jars and spark.sql.extensions=io.delta.sql.DeltaSparkSessionExtension"
    )
    assert "PARSE_SYNTAX_ERROR" not in visible[0]  # the parser's words are for the debug log
