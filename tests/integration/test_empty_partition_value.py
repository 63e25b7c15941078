"""An empty-string partition value survives every rewrite (found by the differential campaign).

Sail writes a partition value ``''`` as the empty string; Delta 4.4 reads it as ``''``. Delta's
own OPTIMIZE (compaction and Z-order) rewrites such a file with that value null, so Delta then
reads null: the campaign's failing example was our Z-order with a Delta session, handed to
Delta's OPTIMIZE. Our writer copies partition values byte for byte, so a rewrite of such a
partition stays here even with a Delta session (and is refused, naming the partition, where only
Delta's writer supports the table).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from python_ops.ops.optimize.execute import WRITER_COMPACT, WRITER_ZORDER, optimize
from tests.helpers.delta_reads import oracle, table_sql

pytestmark = [pytest.mark.classic_spark, pytest.mark.delta_jars]


def sail_written(sail: Any, table: Path) -> None:
    for batch in range(2):
        rows = [(batch * 10 + i, v, f"s{batch}") for i, v in enumerate(("", "", "a"))]
        sail.createDataFrame(rows, "id long, p string, v string").write.format("delta").partitionBy(
            "p"
        ).mode("append").save(str(table))


def rows(spark: Any, table: Path) -> list[tuple[int, Any, bool]]:
    query = f"SELECT id, p, p IS NULL AS n FROM {table_sql(table)} ORDER BY id"
    return [(r["id"], r["p"], r["n"]) for r in spark.sql(query).collect()]


@pytest.mark.parametrize("zorder", [False, True], ids=["compaction", "zorder"])
def test_a_rewrite_with_a_delta_session_keeps_an_empty_partition_value(
    tmp_path: Path, delta_spark: Any, sail_spark: Any, zorder: bool
) -> None:
    table = tmp_path / "t"
    sail_written(sail_spark, table)
    before, read = oracle(delta_spark, table), rows(delta_spark, table)
    assert "" in {p for _, p, _ in read}
    assert not any(n for _, _, n in read)

    result = optimize(
        str(table),
        zorder_by=["id"] if zorder else None,
        full=zorder,
        min_small_files=2,
        spark=delta_spark,  # Delta's OPTIMIZE would turn '' into null
        audit=False,
    )

    assert result.writer == (WRITER_ZORDER if zorder else WRITER_COMPACT)
    assert result.commits
    assert rows(delta_spark, table) == read
    assert oracle(delta_spark, table) == before
