"""The statistics op on the tables it once refused: column mapping, v2 checkpoints, S3.

Delta 4.4 (the JVM Spark Connect server with the jars) is the oracle, as in
``test_stats_oracle.py``: Delta writes each table with its own statistics; a copy, statistics
stripped, gets ours, which must equal Delta's field by field; Delta reads the table after the
op (same rows and checksum) and a point query reads fewer files (its scan metrics).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.delta_reads import oracle, table_sql
from tests.helpers.s3 import S3Bucket
from tests.helpers.s3proxy import ON_S3PROXY
from tests.helpers.stats import commit, live_adds, log_versions, parsed, run_stats, strip_stats
from tests.integration.test_stats_oracle import files_read

pytestmark = [pytest.mark.classic_spark, pytest.mark.delta_jars, pytest.mark.slow]

COLUMNS = "id BIGINT, `Super Name` STRING, st STRUCT<x: INT, `y z`: STRING>, dt DATE, d DOUBLE"


def _batch(first: int) -> str:
    """A query of ten rows, ids ``first .. first+9``, written as one file (disjoint ranges)."""
    rows = [
        f"({i}, 'name {i}', named_struct('x', {i % 3}, 'y z', 's{i}'), "
        f"DATE'2024-01-01' + {i}, {i}.5)"
        for i in range(first, first + 10)
    ]
    return "SELECT /*+ COALESCE(1) */ * FROM VALUES " + ", ".join(rows)


def _same_stats(ours: Path, theirs: Path) -> dict[str, Any]:
    """Assert each live file's statistics equal Delta's own; return ours by path."""
    mine, delta = live_adds(ours), live_adds(theirs)
    assert set(mine) == set(delta)
    for path, add in mine.items():
        a, b = parsed(add["stats"]), parsed(delta[path]["stats"])
        for field in sorted(set(a) | set(b)):
            assert a.get(field) == b.get(field), (path, field, a, b)
    return mine


@pytest.fixture
def one_file_per_insert(delta_spark: Any) -> Iterator[Any]:
    """The Delta session writing one file per INSERT (a test counts files read)."""
    key = "spark.sql.shuffle.partitions"
    before = delta_spark.conf.get(key)
    delta_spark.conf.set(key, "1")
    yield delta_spark
    delta_spark.conf.set(key, before)


@pytest.mark.parametrize("mode", ["name", "id"])
def test_column_mapping_statistics_are_keyed_by_physical_name_as_delta_keys_them(
    delta_server: Any, one_file_per_insert: Any, tmp_path: Path, mode: str
) -> None:
    spark = one_file_per_insert
    theirs = tmp_path / "theirs"
    spark.sql(
        f"CREATE TABLE {table_sql(theirs)} ({COLUMNS}) USING delta "
        f"TBLPROPERTIES ('delta.columnMapping.mode' = '{mode}')"
    )
    for first in (0, 100, 200):
        spark.sql(f"INSERT INTO {table_sql(theirs)} {_batch(first)}")
    # a renamed column: its logical name differs from the physical one in either mode
    spark.sql(f"ALTER TABLE {table_sql(theirs)} RENAME COLUMN `Super Name` TO label")
    spark.sql(f"INSERT INTO {table_sql(theirs)} {_batch(300)}")
    ours = tmp_path / "ours"
    shutil.copytree(theirs, ours)
    assert strip_stats(ours) == 4
    query = f"SELECT * FROM {table_sql(ours)} WHERE id = 105"
    rows = oracle(spark, ours)
    before = files_read(delta_server, spark, query, ours, " = 105)")

    done = run_stats(ours, "--json")

    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert (result["files_updated"], result["features_ruled"]) == (4, ["columnMapping"])
    assert result["stats_columns"] == ["id", "label", "st.x", "st.y z", "dt", "d"]  # logical
    mine = _same_stats(ours, theirs)
    (metadata,) = [a["metaData"] for a in commit(ours, 0) if "metaData" in a]
    schema = json.loads(metadata["schemaString"])
    physical = {
        f["name"]: f["metadata"]["delta.columnMapping.physicalName"] for f in schema["fields"]
    }
    for add in mine.values():  # keyed by physical name, nothing by the logical ones
        assert set(json.loads(add["stats"])["nullCount"]) == {
            physical[n] for n in ("id", "Super Name", "st", "dt", "d")
        }
    assert oracle(spark, ours) == rows == oracle(spark, theirs)
    after = files_read(delta_server, spark, query, ours, " = 105)")
    assert spark.sql(query).count() == 1
    assert (before, after) == (4, 1)


def test_a_watched_column_of_a_mapped_table_is_listed_by_its_logical_name(
    delta_server: Any, one_file_per_insert: Any, tmp_path: Path
) -> None:
    spark = one_file_per_insert
    table = tmp_path / "mapped"
    spark.sql(
        f"CREATE TABLE {table_sql(table)} ({COLUMNS}) USING delta TBLPROPERTIES "
        "('delta.columnMapping.mode' = 'name', 'delta.dataSkippingNumIndexedCols' = '1')"
    )
    for first in (0, 100, 200):
        spark.sql(f"INSERT INTO {table_sql(table)} {_batch(first)}")
    spark.sql(f"ALTER TABLE {table_sql(table)} RENAME COLUMN d TO amount")
    query = f"SELECT * FROM {table_sql(table)} WHERE amount = 105.5"
    rows = oracle(spark, table)
    before = files_read(delta_server, spark, query, table, " = 105.5)")

    done = run_stats(table, "--columns", "amount", "--json")

    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["stats_columns_after"] == "id,amount"
    props = {
        r["key"]: r["value"] for r in spark.sql(f"SHOW TBLPROPERTIES {table_sql(table)}").collect()
    }
    assert props["delta.dataSkippingStatsColumns"] == "id,amount"
    assert oracle(spark, table) == rows
    after = files_read(delta_server, spark, query, table, " = 105.5)")
    assert spark.sql(query).count() == 1
    assert (before, after) == (3, 1)


def _checkpoint_files(table: Path) -> tuple[list[str], list[str]]:
    log = table / "_delta_log"
    tops = sorted(p.name for p in log.glob("*.checkpoint.*"))
    sidecars = sorted(p.name for p in (log / "_sidecars").glob("*.parquet"))
    return tops, sidecars


def test_a_v2_checkpoint_tables_adds_are_read_from_its_sidecars(
    delta_server: Any, one_file_per_insert: Any, tmp_path: Path
) -> None:
    spark = one_file_per_insert
    theirs = tmp_path / "theirs"
    spark.sql(
        f"CREATE TABLE {table_sql(theirs)} (id BIGINT, s STRING) USING delta "
        "TBLPROPERTIES ('delta.checkpointPolicy' = 'v2')"
    )
    for first in (0, 100, 200):
        spark.sql(
            f"INSERT INTO {table_sql(theirs)} SELECT id, concat('s', id) FROM range({first}, "
            f"{first + 10}, 1, 1)"
        )
    ours = tmp_path / "ours"
    shutil.copytree(theirs, ours)
    strip_stats(ours)
    # Delta checkpoints the stripped log (v2: a top file and sidecars, adds without stats)
    spark.sql(f"ALTER TABLE {table_sql(ours)} SET TBLPROPERTIES ('delta.checkpointInterval' = '1')")
    tops, sidecars = _checkpoint_files(ours)
    assert tops, "Delta wrote no checkpoint"
    assert sidecars, "Delta's v2 checkpoint has no sidecars"
    version = log_versions(ours)[-1]
    assert int(tops[-1][:20]) == version
    query = f"SELECT * FROM {table_sql(ours)} WHERE id = 105"
    rows = oracle(spark, ours)
    before = files_read(delta_server, spark, query, ours, " = 105)")

    done = run_stats(ours, "--json")

    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert (result["files_updated"], result["features_ruled"]) == (3, ["v2Checkpoint"])
    assert log_versions(ours)[-1] == version + 1  # one JSON commit
    assert _checkpoint_files(ours) == (tops, sidecars)  # and no checkpoint of ours
    added = {a["add"]["path"]: a["add"] for a in commit(ours, version + 1) if "add" in a}
    delta = live_adds(theirs)
    assert set(added) == set(delta)
    for path, add in added.items():
        assert parsed(add["stats"]) == parsed(delta[path]["stats"]), path
        assert add["dataChange"] is False
    assert oracle(spark, ours) == rows == oracle(spark, theirs)
    after = files_read(delta_server, spark, query, ours, " = 105)")
    assert spark.sql(query).count() == 1
    assert (before, after) == (3, 1)


def _download(s3: S3Bucket, prefix: str, target: Path) -> None:
    for key in s3.keys(prefix + "/"):
        path = target / key[len(prefix) + 1 :]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(s3.client.get_object(Bucket=s3.bucket, Key=key)["Body"].read())


def _delta_table(spark: Any, location: Path) -> None:
    spark.sql(f"CREATE TABLE {table_sql(location)} (id BIGINT, s STRING) USING delta")
    for first in (0, 100, 200):
        spark.sql(
            f"INSERT INTO {table_sql(location)} SELECT id, concat('s', id) FROM range({first}, "
            f"{first + 10}, 1, 1)"
        )


def test_on_s3_the_commit_is_a_conditional_put(
    one_file_per_insert: Any, s3: S3Bucket, tmp_path: Path
) -> None:
    """moto honours ``If-None-Match: *``: the op commits there, and Delta reads the result."""
    spark = one_file_per_insert
    theirs = tmp_path / "theirs"
    _delta_table(spark, theirs)
    stripped = tmp_path / "stripped"
    shutil.copytree(theirs, stripped)
    strip_stats(stripped)
    uri = s3.upload_tree(stripped, "tables/t")

    done = run_stats(uri, "--json")

    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["commit_version"] == 4
    assert not [k for k in s3.keys("") if "commit-probe" in k]  # the probe key is gone
    ours = tmp_path / "ours"
    _download(s3, "tables/t", ours)
    assert log_versions(ours) == [0, 1, 2, 3, 4]
    _same_stats(ours, theirs)
    assert oracle(spark, ours) == oracle(spark, theirs)
    again = run_stats(uri, "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["commit_version"] is None  # nothing left due


@ON_S3PROXY
def test_a_store_that_ignores_conditional_writes_is_refused(s3: S3Bucket, tmp_path: Path) -> None:
    """S3Proxy 2.6.0 overwrites on ``If-None-Match: *``: the op refuses, nothing written."""
    import pyarrow as pa
    from deltalake import write_deltalake

    local = tmp_path / "t"
    for first in (0, 100):
        write_deltalake(str(local), pa.table({"id": list(range(first, first + 10))}), mode="append")
    strip_stats(local)
    uri = s3.upload_tree(local, "tables/t")
    keys = s3.keys()

    done = run_stats(uri)

    assert done.returncode == 2, done.stderr
    assert "ignores conditional writes (If-None-Match)" in done.stderr
    assert "Traceback" not in done.stderr
    assert s3.keys() == keys


def test_on_s3_a_version_taken_first_is_retried_at_the_next(
    s3: S3Bucket, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A delta-rs append takes the version between plan and commit: the conditional put of
    that version is refused by the store, and the commit lands at the next one."""
    import pyarrow as pa
    from deltalake import DeltaTable, write_deltalake

    from python_ops.delta.writing.log_commit import write_commit
    from python_ops.ops.stats.run import compute_stats
    from tests.helpers.s3 import delta_options

    local = tmp_path / "t"
    for first in (0, 100):
        write_deltalake(str(local), pa.table({"id": list(range(first, first + 10))}), mode="append")
    strip_stats(local)
    uri = s3.upload_tree(local, "tables/race")
    options = delta_options(s3.endpoint)
    real = write_commit
    calls: list[tuple[int, bool]] = []

    def racing(storage: Any, version: int, actions: list[dict[str, Any]]) -> bool:
        if not calls:  # another writer commits this version first, on the same store
            rows = pa.table({"id": list(range(200, 210))})
            write_deltalake(uri, rows, mode="append", storage_options=options)
        ours = real(storage, version, actions)
        calls.append((version, ours))
        return ours

    result = compute_stats(uri, write=racing)

    assert calls == [(2, False), (3, True)]
    assert (result.commit_version, result.attempts, result.files_updated) == (3, 2, 2)
    table = DeltaTable(uri, storage_options=options)
    assert table.version() == 3
    assert sorted(table.to_pyarrow_table().column("id").to_pylist()) == [
        *range(0, 10),
        *range(100, 110),
        *range(200, 210),
    ]
    history = table.history(1)[0]
    assert history["operation"] == "COMPUTE STATS"
