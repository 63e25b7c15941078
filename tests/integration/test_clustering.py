"""Liquid clustering as maintenance, on tables Delta 4.4 clusters (the ``delta_spark`` server).

OPTIMIZE of a clustered table is Delta's clustering OPTIMIZE, run on the engine's Delta: due
when files were written since the last clustering (files without ``clusteringProvider``), and
``OPTIMIZE ... FULL`` once after ``ALTER TABLE ... CLUSTER BY`` changed the columns. Delta reads
the same rows afterwards.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from python_ops.delta.state.snapshot import read_snapshot
from python_ops.errors import ConfigError
from python_ops.maintenance.configuration.config import parse_config
from python_ops.maintenance.runs.registry import op_spec
from python_ops.maintenance.selection.targets import ModelTarget
from python_ops.ops.optimize.execute import optimize
from python_ops.ops.optimize.writers.clustering import clustering_state, is_clustered
from python_ops.storage import open_storage
from tests.helpers.delta_reads import oracle, table_sql

pytestmark = [pytest.mark.classic_spark, pytest.mark.delta_jars]


def clustered_table(spark: Any, table: Path, appends: int = 3) -> None:
    """A table clustered by ``a`` (CTAS), then ``appends`` small appends: all unclustered."""
    spark.sql(
        f"CREATE TABLE {table_sql(table)} USING delta CLUSTER BY (a) AS "
        "SELECT id AS a, id % 7 AS b, cast(id AS string) AS c FROM range(500)"
    ).collect()
    for i in range(appends):
        spark.sql(
            f"INSERT INTO {table_sql(table)} "
            f"SELECT id AS a, id % 7 AS b, 'x' AS c FROM range({1000 + i * 50}, {1050 + i * 50})"
        ).collect()


def commit_info(table: Path, version: int) -> dict[str, Any]:
    path = table / "_delta_log" / f"{version:020d}.json"
    for line in path.read_text().splitlines():
        action = json.loads(line)
        if "commitInfo" in action:
            return dict(action["commitInfo"])
    raise AssertionError(f"no commitInfo in {path}")


def due(table: Path, **config: Any) -> tuple[bool, str]:
    target = ModelTarget("events", str(table), parse_config("events", config))
    return op_spec("optimize").due(target, read_snapshot(str(table)), 0)


def test_optimize_clusters_what_was_written_since_the_last_clustering(
    tmp_path: Path, delta_spark: Any
) -> None:
    table = tmp_path / "events"
    clustered_table(delta_spark, table)
    before = oracle(delta_spark, table)
    snapshot = read_snapshot(str(table))
    state = clustering_state(open_storage(str(table)), snapshot)
    assert is_clustered(snapshot)
    assert state.unclustered_files == len(snapshot.files) >= 4
    assert not state.full
    is_due, why = due(table, maintenance_min_small_files=2)
    assert is_due, why
    assert "written since the last clustering" in why

    result = optimize(str(table), spark=delta_spark)

    assert result.writer.startswith("Delta OPTIMIZE (SQL) (clustering) on"), result.writer
    assert result.files_removed == state.unclustered_files
    assert result.files_added >= 1
    assert len(result.commits) == 1
    info = commit_info(table, result.commits[0])
    assert info["operation"] == "OPTIMIZE"
    assert json.loads(info["operationParameters"]["clusterBy"]) == ["a"]
    after = read_snapshot(str(table))
    assert {f.clustering_provider for f in after.files} == {"liquid"}
    assert oracle(delta_spark, table) == before
    assert not due(table, maintenance_min_small_files=2)[0]

    again = optimize(str(table), spark=delta_spark)

    assert again.skipped_reason == "every file is clustered"
    assert again.commits == ()
    assert read_snapshot(str(table)).version == after.version


def test_a_clustering_column_change_runs_optimize_full_once(
    tmp_path: Path, delta_spark: Any
) -> None:
    table = tmp_path / "events"
    clustered_table(delta_spark, table, appends=1)
    optimize(str(table), spark=delta_spark)
    delta_spark.sql(f"ALTER TABLE {table_sql(table)} CLUSTER BY (b)").collect()
    changed_at = read_snapshot(str(table)).version
    before = oracle(delta_spark, table)
    is_due, why = due(table)
    assert is_due, why
    assert f"changed at version {changed_at}" in why

    dry = optimize(str(table), spark=delta_spark, dry_run=True)
    assert dry.plan["full"] is True
    assert dry.commits == ()

    result = optimize(str(table), spark=delta_spark)

    info = commit_info(table, result.commits[0])
    assert info["operationParameters"]["isFull"] in (True, "true")
    assert json.loads(info["operationParameters"]["clusterBy"]) == ["b"]
    assert oracle(delta_spark, table) == before
    state = clustering_state(open_storage(str(table)), read_snapshot(str(table)))
    assert not state.full
    assert state.unclustered_files == 0
    assert not due(table)[0]


def test_zorder_and_a_partition_predicate_are_refused_on_a_clustered_table(
    tmp_path: Path, delta_spark: Any
) -> None:
    table = tmp_path / "events"
    clustered_table(delta_spark, table, appends=1)
    version = read_snapshot(str(table)).version

    with pytest.raises(ConfigError, match="liquid-clustered: Delta's OPTIMIZE clusters it"):
        optimize(str(table), zorder_by=["b"], spark=delta_spark)
    with pytest.raises(ConfigError, match="liquid-clustered and has no partitions"):
        optimize(str(table), where="b = 1", spark=delta_spark)

    assert read_snapshot(str(table)).version == version


def test_cluster_by_and_zorder_by_on_one_model_are_refused() -> None:
    with pytest.raises(ConfigError, match=r"model 'events'.*maintenance_zorder_by.*Keep one"):
        parse_config("events", {"maintenance_cluster_by": ["a"], "maintenance_zorder_by": ["b"]})
