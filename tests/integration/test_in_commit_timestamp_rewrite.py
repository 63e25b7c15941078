"""Rewrites of tables with in-commit timestamps here, no JVM (issue 64 item 2).

The protocol asks every writer of such a table to put ``commitInfo`` first with an
``inCommitTimestamp`` greater than the previous commit's. Compaction and purge commit here with
``max(now, previous + 1 ms)``; Delta 4.4 reads the same rows, its history shows our commit at
that time, time travel by timestamp resolves to it, and Delta's own next commit follows it.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest

from python_ops.delta.log.commits import commit_actions
from python_ops.ops.optimize.execute import WRITER_COMPACT, optimize
from python_ops.ops.purge import WRITER_NATIVE, purge
from python_ops.storage import open_storage
from tests.helpers.delta_reads import oracle, table_sql

pytestmark = [pytest.mark.classic_spark, pytest.mark.delta_jars]


def ict_table(spark: Any, table: Path, *, dv: bool = False) -> None:
    name = table_sql(table)
    spark.sql(
        f"CREATE TABLE {name} (id BIGINT, p STRING) USING delta PARTITIONED BY (p) "
        "TBLPROPERTIES ('delta.enableInCommitTimestamps' = 'true', "
        f"'delta.enableDeletionVectors' = '{str(dv).lower()}')"
    ).collect()
    for b in range(3):
        spark.sql(
            f"INSERT INTO {name} SELECT id, IF(id % 2 = 0, 'a', 'b') "
            f"FROM range({b * 40}, {(b + 1) * 40}, 1, 1)"
        ).collect()


def stamp(table: Path, version: int) -> int:
    actions = commit_actions(open_storage(str(table)), version)
    assert "commitInfo" in actions[0]  # first, as the protocol asks
    value = actions[0]["commitInfo"]["inCommitTimestamp"]
    assert isinstance(value, int)
    return value


@pytest.mark.parametrize("op", ["compaction", "purge"])
def test_a_rewrite_commit_carries_a_monotonic_in_commit_timestamp(
    tmp_path: Path, delta_spark: Any, op: str
) -> None:
    table = tmp_path / "ict"
    ict_table(delta_spark, table, dv=op == "purge")
    name = table_sql(table)
    if op == "purge":
        delta_spark.sql(f"DELETE FROM {name} WHERE id % 4 = 0").collect()
    before = oracle(delta_spark, table)
    version = int(delta_spark.sql(f"DESCRIBE HISTORY {name} LIMIT 1").first()["version"])

    if op == "purge":
        result: Any = purge(str(table), audit=False)
        assert result.writer == WRITER_NATIVE
        ours = result.commit
    else:
        result = optimize(str(table), min_small_files=2, audit=False)
        assert result.writer == WRITER_COMPACT  # here, no JVM
        ours = max(result.commits)

    assert ours > version
    assert stamp(table, ours) > stamp(table, ours - 1)
    assert oracle(delta_spark, table) == before
    history = delta_spark.sql(f"DESCRIBE HISTORY {name}").collect()
    assert [r["operation"] for r in history if int(r["version"]) == ours] == [
        "REORG" if op == "purge" else "OPTIMIZE"
    ]
    # time travel to our commit's in-commit timestamp resolves to our commit
    at = dt.datetime.fromtimestamp(stamp(table, ours) / 1000, tz=dt.UTC)
    travelled = delta_spark.sql(
        f"SELECT count(*) AS n FROM {name} TIMESTAMP AS OF '{at:%Y-%m-%d %H:%M:%S.%f}+00:00'"
    ).first()["n"]
    assert travelled == before[0]
    # Delta's own next commit follows ours
    delta_spark.sql(f"INSERT INTO {name} VALUES (999, 'a')").collect()
    assert stamp(table, ours + 1) > stamp(table, ours)
