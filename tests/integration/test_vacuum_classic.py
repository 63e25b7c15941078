"""The same VACUUM code on classic local JVM Spark (no Delta jars: it only reads the log)."""

from __future__ import annotations

import pytest

from python_ops.ops.vacuum import vacuum
from tests.helpers.vacuum import age_everything, content, untracked

pytestmark = pytest.mark.classic_spark

SHORT = {"retention_hours": 0, "allow_short_retention": True}


def paths(result: dict) -> set[str]:
    return {p["path"] for p in result["paths"] if not p["is_dir"]}


@pytest.mark.parametrize(
    "name",
    ["cdf-table", "delta-0.8.0-partitioned", "table_with_column_mapping", "table-with-dv-small"],
)
def test_classic_spark_selects_what_the_embedded_engine_selects(
    fixture_table, classic_vacuum, sail_spark, name: str
) -> None:
    table = fixture_table(name)
    untracked(table, "stray-dir/part-stray.parquet")
    age_everything(table)
    now_ms = 1_800_000_000_000
    on_classic = classic_vacuum(str(table), now_ms=now_ms, **SHORT)["result"]
    on_sail = vacuum(str(table), spark=sail_spark, now_ms=now_ms, **SHORT).to_dict()
    assert on_classic["paths"] == on_sail["paths"]
    assert "stray-dir/part-stray.parquet" in paths(on_classic)


def test_classic_spark_deletes_and_keeps_the_table(fixture_table, classic_vacuum) -> None:
    table = fixture_table("delta-0.8.0-partitioned")
    stray = untracked(table, "year=2021/part-stray.parquet")
    (table / "year=2018").mkdir()
    age_everything(table)
    before = content(table)
    result = classic_vacuum(str(table), dry_run=False, **SHORT)["result"]
    assert paths(result) == {"year=2021/part-stray.parquet"}
    assert result["dirs_deleted"] == 1
    assert not stray.exists()
    assert not (table / "year=2018").exists()
    assert content(table) == before


def test_classic_spark_partition_filter_and_errors(fixture_table, classic_vacuum) -> None:
    table = fixture_table("delta-0.8.0-partitioned")
    kept = untracked(table, "year=2020/month=1/day=1/stray.parquet")
    gone = untracked(table, "year=2021/month=4/day=5/stray.parquet")
    age_everything(table)
    result = classic_vacuum(
        str(table), dry_run=False, partition_filter="year = 2021 and month = 4", **SHORT
    )["result"]
    assert result["partitions_scanned"] == 1
    assert kept.exists()
    assert not gone.exists()
    refused = classic_vacuum(str(table), retention_hours=1)
    assert refused["error"] == "RetentionTooShortError"
    assert "Request at least 168 h," in refused["message"]
