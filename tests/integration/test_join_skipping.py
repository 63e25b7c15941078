"""Which joins skip files, per engine: the statement the advisor's join scoring rests on.

A fact table of 10 files, each holding one disjoint range of ``k`` (0-99, 100-199, ...), loses
every data file but the first (k 0-99) from storage; its log still lists them. A query that
completes opened no removed file: the engine skipped it from the log's statistics (or its own
filters); one that fails read one. So each engine's file skipping is observed, not inferred
from plans:

- a constant on the column (``f.k = 5``) skips on both engines (the control);
- a join carrying a constant (``f.k = d.k AND d.k = 5``) skips on both: Spark infers ``f.k = 5``
  from the join's constraints, Sail (DataFusion) propagates it or filters dynamically;
- a join whose other side is filtered on another column (``d.name = 'x'``) skips on Sail only:
  its hash join hands the build side's key range to the scan (a dynamic filter), also through an
  aggregate on the join key; Apache Spark with Delta 4.4 skips no file (dynamic partition
  pruning works on partition columns only, and Delta OSS has no dynamic file pruning);
- a left join filtered on the other side, and a join to a side keeping keys across the range,
  skip nothing on either.

The advisor counts a join only through a constant it carries (skipping on both engines), never
through an aggregate: what a dynamic filter keeps depends on the other side's rows, which the
advisor does not run (docs/advisor.md).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake

SPARK = [pytest.mark.classic_spark, pytest.mark.delta_jars]
QUERIES = {
    "constant": "select sum(f.v) from {fact} f where f.k = 5",
    "join carrying a constant": (
        "select sum(f.v) from {fact} f join {dim} d on f.k = d.k where d.k = 5"
    ),
    "join, other side filtered": (
        "select sum(f.v) from {fact} f join {dim} d on f.k = d.k where d.name = 'x'"
    ),
    "join through an aggregate": (
        "select sum(a.s) from (select k, sum(v) as s from {fact} group by k) a "
        "join {dim} d on a.k = d.k where d.name = 'x'"
    ),
    "left join, other side filtered": (
        "select sum(f.v) from {fact} f left join {dim} d on f.k = d.k and d.name = 'x'"
    ),
    "join to keys across the range": "select sum(f.v) from {fact} f join {dim} d on f.k = d.k",
    "no filter": "select sum(f.v) from {fact} f",
}
SKIPS = {  # what completes without the removed files, per engine
    "sail": {
        "constant",
        "join carrying a constant",
        "join, other side filtered",
        "join through an aggregate",
    },
    "spark": {"constant", "join carrying a constant"},
}


@pytest.fixture
def tables(tmp_path: Path) -> tuple[str, str]:
    fact, dim = str(tmp_path / "fact"), str(tmp_path / "dim")
    for i in range(10):
        keys = pa.array(range(i * 100, i * 100 + 100), pa.int64())
        write_deltalake(fact, pa.table({"k": keys, "v": pa.array([1.0] * 100)}), mode="append")
    names = pa.array(["x", "y"])
    write_deltalake(dim, pa.table({"k": pa.array([5, 950], pa.int64()), "name": names}))
    adds = pa.table(DeltaTable(fact).get_add_actions(flatten=True)).to_pylist()
    for add in adds:
        if add["min.k"] != 0:
            os.remove(os.path.join(fact, add["path"]))
    return fact, dim


def _completes(spark: Any, sql: str) -> bool:
    try:
        spark.sql(sql).collect()
    except Exception as err:  # the engine's own error for the removed file
        text = str(err).lower()
        assert any(w in text for w in ("not found", "no such file", "not exist", "object store"))
        return False
    return True


@pytest.mark.parametrize("engine", ["sail", pytest.param("spark", marks=SPARK)])
def test_which_joins_skip_files(engine: str, tables: tuple[str, str], request: Any) -> None:
    spark = request.getfixturevalue("sail_spark" if engine == "sail" else "delta_spark")
    fact, dim = (f"delta.`{t}`" for t in tables)
    done = {
        name for name, sql in QUERIES.items() if _completes(spark, sql.format(fact=fact, dim=dim))
    }
    assert done == SKIPS[engine]
