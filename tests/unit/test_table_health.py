"""table_health against the shared fixture tables: files, tombstones, checkpoints (log only)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from deltalake import DeltaTable

from python_ops.errors import ConfigError, TableNotFoundError
from python_ops.ops.health import table_health

WEEK_MS = 7 * 24 * 3600 * 1000


def _raw_tombstones(table: Path) -> tuple[int, int]:
    """Count remove actions not re-added, and the newest commit timestamp, from the raw JSON."""
    live: set[str] = set()
    removed: set[str] = set()
    newest = 0
    for commit in sorted((table / "_delta_log").glob("*.json")):
        for line in commit.read_text().splitlines():
            action = json.loads(line)
            if "add" in action:
                live.add(action["add"]["path"])
                removed.discard(action["add"]["path"])
            if "remove" in action:
                removed.add(action["remove"]["path"])
                live.discard(action["remove"]["path"])
            if "commitInfo" in action:
                newest = max(newest, action["commitInfo"]["timestamp"])
    return len(removed), newest


def test_checkpointed_table(fixture_table) -> None:
    table = fixture_table("simple_table_with_checkpoint")
    health = table_health(str(table))
    assert health.version == 10
    assert health.checkpoint_version == 10
    assert health.num_files == len(DeltaTable(str(table)).file_uris()) == 11
    assert health.total_bytes == 11 * 442
    # 11 commits, 1 checkpoint and _last_checkpoint
    assert health.num_log_files == 13
    assert health.partition_columns == ()


def test_tombstones_inside_and_outside_retention(fixture_table) -> None:
    table = fixture_table("cdf-table")
    expected, newest_commit_ms = _raw_tombstones(table)
    assert expected == 7
    # Removes were written on 2023-12-22 (3), 2023-12-29 (3) and 2024-01-06 (1).
    fresh = table_health(str(table), now_ms=1703265021672)
    assert fresh.num_tombstones == 7
    assert fresh.deleted_file_retention_hours == 168
    at_last_commit = table_health(str(table), now_ms=newest_commit_ms)
    assert at_last_commit.num_tombstones == 1
    expired = table_health(str(table), now_ms=newest_commit_ms + 2 * WEEK_MS)
    assert expired.num_tombstones == 0
    assert fresh.partition_columns == ("birthday",)
    assert fresh.num_partitions == len(DeltaTable(str(table)).partitions()) == 3


def test_small_file_threshold(fixture_table) -> None:
    table = fixture_table("delta-0.8.0-partitioned")
    health = table_health(str(table), small_file_threshold_bytes=1)
    assert health.num_small_files == 0
    health = table_health(str(table), small_file_threshold_bytes=10**9)
    assert health.num_small_files == health.num_files == 6
    assert health.small_file_share == 1.0
    assert health.partition_columns == ("year", "month", "day")


def test_v2_checkpoint_table(fixture_table) -> None:
    health = table_health(str(fixture_table("checkpoint-v2-table")))
    assert (health.version, health.checkpoint_version, health.num_files) == (9, 8, 8)


def test_reads_only_the_log(fixture_table) -> None:
    table = fixture_table("cdf-table")
    before = table_health(str(table), now_ms=0)
    for data_file in table.rglob("*.parquet"):
        if "_delta_log" not in data_file.parts:
            data_file.unlink()
    after = table_health(str(table), now_ms=0)
    assert (after.num_files, after.total_bytes, after.num_tombstones) == (
        before.num_files,
        before.total_bytes,
        before.num_tombstones,
    )


def test_bad_threshold_is_refused(fixture_table) -> None:
    table = fixture_table("cdf-table")
    with pytest.raises(ConfigError, match=r"small_file_threshold_bytes.*whole number of 1 or more"):
        table_health(str(table), small_file_threshold_bytes=0)


def test_missing_table(tmp_path: Path) -> None:
    with pytest.raises(TableNotFoundError):
        table_health(str(tmp_path / "nope"))
