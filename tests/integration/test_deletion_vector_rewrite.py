"""Tables with deletion vectors rewritten in this process, no JVM (embedded means embedded, 1).

Delta on Spark and Sail write deletion vectors (a ``DELETE`` on a table with
``delta.enableDeletionVectors``); compaction and Z-order read each file without the rows its
vector deletes, and commit removes that carry the vector's descriptor. Delta 4.4 reads the very
same rows after each rewrite; no deleted row comes back; no local Delta writer is started.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from python_ops.delta.log.commits import commit_actions
from python_ops.delta.state.snapshot import read_snapshot
from python_ops.ops.optimize.execute import WRITER_COMPACT, WRITER_ZORDER, optimize
from python_ops.storage import open_storage
from tests.helpers.delta_reads import oracle, table_sql


def delta_written(spark: Any, table: Path) -> None:
    """Four appends, then two DELETEs that leave deletion vectors (Delta on Spark)."""
    name = table_sql(table)
    spark.sql(
        f"CREATE TABLE {name} (id BIGINT, p STRING) USING delta PARTITIONED BY (p) "
        "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')"
    )
    for batch in range(4):
        rows = ", ".join(f"({batch * 100 + i}, '{'ab'[i % 2]}')" for i in range(40))
        spark.sql(f"INSERT INTO {name} VALUES {rows}")
    spark.sql(f"DELETE FROM {name} WHERE id % 7 = 0")
    spark.sql(f"DELETE FROM {name} WHERE id BETWEEN 110 AND 130")


def sail_written(spark: Any, table: Path) -> None:
    """The same on the embedded engine: Sail writes the deletion vectors."""
    for batch in range(4):
        rows = [(batch * 100 + i, "ab"[i % 2]) for i in range(40)]
        frame = spark.createDataFrame(rows, "id long, p string")
        writer = frame.write.format("delta").mode("append").partitionBy("p")
        if batch == 0:
            writer = writer.option("delta.enableDeletionVectors", "true")
        writer.save(str(table))
    spark.sql(f"DELETE FROM delta.`{table}` WHERE id % 7 = 0")


@pytest.mark.parametrize("zorder", [False, True], ids=["compaction", "zorder"])
@pytest.mark.parametrize("writer", ["delta", "sail"])
def test_a_table_with_deletion_vectors_is_rewritten_here_and_delta_reads_the_same_rows(
    tmp_path: Path, delta_spark: Any, sail_spark: Any, writer: str, zorder: bool
) -> None:
    table = tmp_path / "t"
    if writer == "delta":
        delta_written(delta_spark, table)
    else:
        sail_written(sail_spark, table)
    before_files = read_snapshot(str(table)).files
    with_dv = {f.path: f.deletion_vector for f in before_files if f.deletion_vector is not None}
    if not with_dv:
        pytest.skip(f"{writer} wrote no deletion vector on this machine (a plain rewrite)")
    before = oracle(delta_spark, table)

    result = optimize(
        str(table), zorder_by=["id"] if zorder else None, full=zorder, min_small_files=2
    )

    # written and committed here: not Delta's SQL on a local Spark (no JVM started for it)
    assert result.writer == (WRITER_ZORDER if zorder else WRITER_COMPACT)
    assert oracle(delta_spark, table) == before  # no deleted row came back, none was lost
    storage = open_storage(str(table))
    removes = [
        a["remove"] for v in result.commits for a in commit_actions(storage, v) if "remove" in a
    ]
    carried = {r["path"]: r.get("deletionVector") for r in removes if r["path"] in with_dv}
    assert carried, "the files with deletion vectors were rewritten"
    for path, descriptor in carried.items():
        assert descriptor is not None
        assert descriptor["pathOrInlineDv"] == with_dv[path].path_or_inline_dv
        assert descriptor["cardinality"] == with_dv[path].cardinality
    assert all(
        f.deletion_vector is None for f in read_snapshot(str(table)).files if f.path not in with_dv
    )
