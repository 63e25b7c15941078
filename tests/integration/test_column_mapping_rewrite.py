"""Rewrites of column-mapping tables here, no JVM (issue 64 item 2): Delta reads the same rows.

Under ``delta.columnMapping.mode = 'name'`` the data files name their columns by physical name
(``col-<uuid>``), the log keys partition values and statistics by them, and a column renamed
by ``ALTER TABLE ... RENAME COLUMN`` keeps its physical name. Compaction, Z-order (by a renamed
column) and purge read and write the files' physical columns, key the new files' statistics by
them and commit here; Delta 4.4 then reads the very same rows, also through data skipping on
the new statistics. ``id`` mode (Parquet field ids) goes to Delta's own writer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from python_ops.delta.log.commits import commit_actions
from python_ops.delta.state.snapshot import read_snapshot
from python_ops.ops.optimize.execute import WRITER_COMPACT, WRITER_ZORDER, optimize
from python_ops.ops.purge import WRITER_NATIVE, purge
from python_ops.storage import open_storage
from tests.helpers.delta_reads import oracle, table_sql

pytestmark = [pytest.mark.classic_spark, pytest.mark.delta_jars]


def mapped_table(spark: Any, table: Path, *, mode: str = "name", dv: bool = False) -> None:
    """A partitioned table Delta wrote with column mapping, a column renamed, small files."""
    name = table_sql(table)
    spark.sql(
        f"CREATE TABLE {name} (id BIGINT, `v x` STRING, amount DOUBLE, p STRING) USING delta "
        f"PARTITIONED BY (p) TBLPROPERTIES ('delta.columnMapping.mode' = '{mode}', "
        f"'delta.enableDeletionVectors' = '{str(dv).lower()}')"
    ).collect()
    for b in range(4):
        spark.sql(
            f"INSERT INTO {name} SELECT id, concat('v', id), id * 1.5, "
            f"IF(id % 2 = 0, 'a', 'b') FROM range({b * 50}, {(b + 1) * 50}, 1, 1)"
        ).collect()
    spark.sql(f"ALTER TABLE {name} RENAME COLUMN amount TO `total amount`").collect()


def probes(spark: Any, table: Path) -> list[Any]:
    name = table_sql(table)
    wheres = ["id = 7", "id > 120", "`total amount` < 30", "p = 'b' AND id < 60", "true"]
    return [
        spark.sql(f"SELECT count(*), sum(hash(*)) FROM {name} WHERE {w}").collect()[0]
        for w in wheres
    ]


def new_stats_keys(table: Path, version: int) -> set[str]:
    actions = commit_actions(open_storage(str(table)), version)
    keys: set[str] = set()
    for a in actions:
        if "add" in a and a["add"].get("stats"):
            keys |= set(json.loads(a["add"]["stats"]).get("minValues", {}))
    return keys


@pytest.mark.parametrize("zorder", [False, True], ids=["compaction", "zorder"])
def test_a_name_mapped_table_is_rewritten_here(
    tmp_path: Path, delta_spark: Any, zorder: bool
) -> None:
    table = tmp_path / "mapped"
    mapped_table(delta_spark, table)
    before, probed = oracle(delta_spark, table), probes(delta_spark, table)
    snapshot = read_snapshot(str(table))
    physical = set(snapshot.metadata.logical_names())
    assert "total amount" not in json.dumps(snapshot.files[0].stats or "")

    result = optimize(
        str(table),
        zorder_by=["total amount"] if zorder else None,
        full=zorder,
        min_small_files=2,
        audit=False,
    )

    assert result.writer == (WRITER_ZORDER if zorder else WRITER_COMPACT)  # here, no JVM
    assert result.commits
    assert result.files_removed == 8
    keys = new_stats_keys(table, result.commits[-1])
    assert keys
    assert keys <= physical  # statistics keyed by physical names
    assert oracle(delta_spark, table) == before
    assert probes(delta_spark, table) == probed


def test_a_name_mapped_table_with_deletion_vectors_is_purged_here(
    tmp_path: Path, delta_spark: Any
) -> None:
    table = tmp_path / "mapped-dv"
    mapped_table(delta_spark, table, dv=True)
    delta_spark.sql(f"DELETE FROM {table_sql(table)} WHERE id % 3 = 0").collect()
    before, probed = oracle(delta_spark, table), probes(delta_spark, table)

    result = purge(str(table), audit=False)

    assert result.writer == WRITER_NATIVE
    assert result.files_removed > 0
    assert not any(f.deletion_vector for f in read_snapshot(str(table)).files)
    assert oracle(delta_spark, table) == before
    assert probes(delta_spark, table) == probed


def test_an_id_mapped_table_goes_to_delta_s_writer(tmp_path: Path, delta_spark: Any) -> None:
    table = tmp_path / "id-mapped"
    mapped_table(delta_spark, table, mode="id")
    before = oracle(delta_spark, table)

    result = optimize(str(table), min_small_files=2, audit=False, spark=delta_spark)

    assert result.writer.startswith("Delta OPTIMIZE (SQL)")
    assert oracle(delta_spark, table) == before
