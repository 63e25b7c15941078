"""VACUUM on real Delta tables: fixtures written by Spark/Databricks, and tables Sail writes."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from deltalake import DeltaTable

from python_ops.errors import ConfigError, RetentionTooShortError
from python_ops.invocation import Invocation
from python_ops.maintenance.runs.registry import op_spec
from python_ops.ops.vacuum import vacuum
from tests.helpers.vacuum import (
    age_everything,
    content,
    engine_content,
    selected_dirs,
    selected_files,
    untracked,
)


def run(table: Path, spark, **kwargs):
    kwargs.setdefault("retention_hours", 0)
    kwargs.setdefault("allow_short_retention", True)
    return vacuum(str(table), spark=spark, **kwargs)


def register(spark, path: Path, columns: str, extra: str = "") -> str:
    """Create a Delta table at ``path`` under a unique name; return the name."""
    name = f"t_{abs(hash(str(path)))}"
    spark.sql(f"create table {name} ({columns}) using delta {extra} location '{path}'")
    return name


def write_table(spark, path: Path, *, partitioned: bool = True) -> None:
    """A Sail-written table with appends, an overwrite and deletes: tombstones and versions."""
    part = "partitioned by (day)" if partitioned else ""
    name = register(spark, path, "id bigint, day string, v double", part)
    for i in range(4):
        spark.sql(
            f"insert into {name} select id, concat('2024-01-0', cast(id % 3 + 1 as string)), "
            f"id * 1.5 from range({i * 10}, {(i + 1) * 10})"
        )
    spark.sql(f"delete from {name} where id % 7 = 0")
    spark.sql(f"insert overwrite {name} select * from {name} where id < 35")


# --- fixtures written by other engines -------------------------------------------------------


def test_live_deletion_vector_survives_retention_zero(fixture_table, sail_spark) -> None:
    table = fixture_table("table-with-dv-small")
    age_everything(table)
    before = engine_content(sail_spark, table)
    result = run(table, sail_spark, dry_run=False)
    assert result.files_found == 0
    dv = table / "deletion_vector_61d16c75-6994-46b7-a15b-8b538852e50e.bin"
    assert dv.is_file()
    assert engine_content(sail_spark, table) == before == (8, before[1])


def test_change_data_files_go_by_age_only(fixture_table, sail_spark) -> None:
    table = fixture_table("cdf-table")
    age_everything(table)
    cdc = sorted(p.relative_to(table).as_posix() for p in (table / "_change_data").rglob("cdc-*"))
    young = table / cdc[0]
    os.utime(young)  # written just now: younger than the one-hour cutoff
    result = run(table, sail_spark, retention_hours=1)
    chosen = selected_files(result)
    assert {p for p in chosen if p.startswith("_change_data/")} == set(cdc[1:])
    assert cdc[0] not in chosen


def test_tombstones_inside_retention_are_protected(fixture_table, sail_spark) -> None:
    table = fixture_table("cdf-table")
    age_everything(table, days=3650)
    last_commit_ms = 1704559499570
    snapshot_removes = {
        json.loads(line)["remove"]["path"]: json.loads(line)["remove"]["deletionTimestamp"]
        for f in sorted((table / "_delta_log").glob("*.json"))
        for line in f.read_text().splitlines()
        if '"remove"' in line
    }
    result = vacuum(str(table), spark=sail_spark, now_ms=last_commit_ms + 1)
    cutoff = last_commit_ms + 1 - 168 * 3_600_000
    expired = {p for p, ts in snapshot_removes.items() if ts < cutoff}
    protected = {p for p, ts in snapshot_removes.items() if ts >= cutoff}
    chosen = selected_files(result)
    assert protected
    assert expired
    assert protected.isdisjoint(chosen)
    assert expired <= chosen


def test_column_mapping_random_prefix_directories_are_walked(fixture_table, sail_spark) -> None:
    table = fixture_table("table_with_column_mapping")
    age_everything(table)
    prefix_dirs = [d.name for d in table.iterdir() if d.is_dir() and d.name != "_delta_log"]
    assert prefix_dirs
    stray = untracked(table, f"{prefix_dirs[0]}/part-stray.parquet")
    before = engine_content(sail_spark, table)
    result = run(table, sail_spark, dry_run=False)
    assert selected_files(result) == {stray.relative_to(table).as_posix()}
    assert not stray.exists()
    assert engine_content(sail_spark, table) == before


def test_nested_and_null_partitions(fixture_table, sail_spark) -> None:
    nested = fixture_table("delta-0.8.0-partitioned")
    age_everything(nested)
    stray = untracked(nested, "year=2020/month=1/day=1/part-stray.parquet")
    empty_dir = nested / "year=2019" / "month=1"
    empty_dir.mkdir(parents=True)
    age_everything(nested)
    before = content(nested)
    result = run(nested, sail_spark, dry_run=False)
    assert selected_files(result) == {"year=2020/month=1/day=1/part-stray.parquet"}
    assert selected_dirs(result) == {"year=2019", "year=2019/month=1"}
    assert result.dirs_deleted == 2
    assert not stray.exists()
    assert not (nested / "year=2019").exists()
    assert content(nested) == before
    # hidden .crc files in partition directories are left alone (delta-rs would delete them)
    assert list(nested.rglob(".*.crc"))

    null = fixture_table("delta-0.8.0-null-partition")
    age_everything(null)
    stray = untracked(null, "k=__HIVE_DEFAULT_PARTITION__/part-stray.parquet")
    before = content(null)
    result = run(null, sail_spark, dry_run=False)
    assert selected_files(result) == {"k=__HIVE_DEFAULT_PARTITION__/part-stray.parquet"}
    assert content(null) == before


def test_hidden_files_and_directories_are_never_touched(fixture_table, sail_spark) -> None:
    table = fixture_table("delta-0.8.0-partitioned")
    hidden = [
        "_tmp/leftover.parquet",
        ".staging/leftover.parquet",
        "_x.parquet",
        ".x.parquet",
        "year=2020/_temporary/0/part.parquet",
        "year=2020/month=1/.hidden",
        "year=2020/month=1/day=1/_SUCCESS",
        "year=2020/month=1/day=1/.part.crc",
    ]
    for rel in hidden:
        untracked(table, rel)
    age_everything(table)
    result = run(table, sail_spark, dry_run=False)
    assert result.files_found == 0
    for rel in hidden:
        assert (table / rel).exists(), rel


def test_special_characters_in_partition_values(tmp_path: Path, sail_spark) -> None:
    table = tmp_path / "special"
    name = register(sail_spark, table, "id bigint, city string", "partitioned by (city)")
    sail_spark.sql(
        f"insert into {name} values (1, 'New York'), (2, 'a=b'), (3, 'x%y'), (4, 'Zürich'), "
        "(5, 'semi;colon'), (6, 'sp ace/slash')"
    )
    partition_dirs = sorted(d for d in table.iterdir() if d.name.startswith("city="))
    assert len(partition_dirs) == 6
    strays = {
        untracked(table, f"{d.name}/part-stray.parquet").relative_to(table).as_posix()
        for d in partition_dirs
    }
    age_everything(table)
    before = engine_content(sail_spark, table)
    result = run(table, sail_spark, dry_run=False)
    assert selected_files(result) == strays
    assert engine_content(sail_spark, table) == before


# --- safety ----------------------------------------------------------------------------------


def test_nothing_outside_the_root_through_symlinks(
    tmp_path: Path, fixture_table, sail_spark
) -> None:
    table = fixture_table("delta-0.8.0-partitioned")
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = untracked(outside, "precious.parquet")
    (table / "year=2020" / "link-dir").symlink_to(outside, target_is_directory=True)
    (table / "link-file.parquet").symlink_to(victim)
    age_everything(table)
    result = run(table, sail_spark, dry_run=False)
    assert result.symlinks_skipped == 2
    assert result.files_found == 0
    assert victim.is_file()
    assert (table / "link-file.parquet").is_symlink()
    assert (table / "year=2020" / "link-dir").is_symlink()


def test_uncommitted_writer_file_survives_default_retention(tmp_path: Path, sail_spark) -> None:
    table = tmp_path / "t"
    write_table(sail_spark, table)
    age_everything(table)
    in_flight = untracked(table, "day=2024-01-01/part-in-flight.parquet", days=0)
    old = untracked(table, "day=2024-01-01/part-failed-job.parquet", days=30)
    result = vacuum(str(table), spark=sail_spark, dry_run=False)
    assert result.retention_hours == 168
    assert result.retention_source == "default"
    assert in_flight.exists()
    assert not old.exists()


def test_killed_mid_delete_leaves_a_readable_table_and_rerun_finishes(
    tmp_path: Path, sail_spark
) -> None:
    table = tmp_path / "t"
    write_table(sail_spark, table)
    versions = DeltaTable(str(table)).version()
    age_everything(table)
    strays = [untracked(table, f"day=2024-01-0{1 + i % 3}/stray-{i}.parquet") for i in range(400)]
    before = {v: content(table, v) for v in range(versions + 1)}
    script = textwrap.dedent(
        f"""
        import os, signal
        from python_ops.spark_sessions import SailEngine
        from python_ops.ops.vacuum import vacuum

        def die_halfway(done, total):
            if done >= total // 2:
                os.kill(os.getpid(), signal.SIGKILL)

        engine = SailEngine()
        vacuum({str(table)!r}, spark=engine.spark, dry_run=False, max_workers=1,
               on_progress=die_halfway, progress_interval_s=0)
        """
    )
    killed = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, timeout=300, check=False
    )
    assert killed.returncode == -9, killed.stderr[-2000:]
    remaining = sum(p.exists() for p in strays)
    # one worker, one chunk in flight: killed right after the half-way report, nothing beyond
    assert remaining == len(strays) // 2
    assert {v: content(table, v) for v in range(versions + 1)} == before
    rerun = vacuum(str(table), spark=sail_spark, dry_run=False)
    assert rerun.files_deleted == remaining
    assert not any(p.exists() for p in strays)
    assert {v: content(table, v) for v in range(versions + 1)} == before


# --- invariants and time travel --------------------------------------------------------------


def test_content_and_every_retained_version_survive(tmp_path: Path, sail_spark) -> None:
    table = tmp_path / "t"
    write_table(sail_spark, table)
    latest = DeltaTable(str(table)).version()
    age_everything(table)
    untracked(table, "day=2024-01-02/part-orphan.parquet")
    untracked(table, "orphan-dir/part-orphan.parquet")
    before = {v: content(table, v) for v in range(latest + 1)}
    result = vacuum(str(table), spark=sail_spark, dry_run=False)
    assert result.files_deleted == 2
    # tombstones are minutes old: inside the 7-day retention, every version still reads
    assert {v: content(table, v) for v in range(latest + 1)} == before
    assert engine_content(sail_spark, table)[0] == before[latest][0]


# --- differential against delta-rs -----------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["simple_table_with_checkpoint", "checkpoint-v2-table", "table_with_column_mapping"]
)
def test_same_selection_as_delta_rs_on_fixtures(fixture_table, sail_spark, name: str) -> None:
    table = fixture_table(name)
    for i in range(3):
        untracked(table, f"part-orphan-{i}.parquet")
    age_everything(table)
    ours = selected_files(run(table, sail_spark))
    theirs = set(
        DeltaTable(str(table)).vacuum(
            retention_hours=0, dry_run=True, enforce_retention_duration=False, full=True
        )
    )
    assert ours == theirs


def test_same_selection_as_delta_rs_on_a_sail_written_table(tmp_path: Path, sail_spark) -> None:
    table = tmp_path / "t"
    write_table(sail_spark, table)
    untracked(table, "day=2024-01-03/part-orphan.parquet")
    age_everything(table)
    time.sleep(0.01)  # tombstones must be strictly older than "now" for both tools
    ours = run(table, sail_spark)
    theirs = set(
        DeltaTable(str(table)).vacuum(
            retention_hours=0, dry_run=True, enforce_retention_duration=False, full=True
        )
    )
    assert selected_files(ours) == theirs
    assert len(theirs) > 1


# --- retention -------------------------------------------------------------------------------


def test_short_retention_is_refused_even_for_dry_runs(fixture_table, sail_spark) -> None:
    table = fixture_table("cdf-table")
    with pytest.raises(
        RetentionTooShortError,
        match=r"'retention_hours' has bad value 24.*minimum for table .*cdf-table is 168 h "
        r".*pass allow_short_retention=True to override",
    ):
        vacuum(str(table), spark=sail_spark, retention_hours=24, dry_run=True)
    with pytest.raises(ConfigError, match=r"^setting 'retention_hours' has bad value -1"):
        vacuum(str(table), spark=sail_spark, retention_hours=-1)
    # for a model (the registry's call, as the CLI's --model and the adapter make it)
    with pytest.raises(
        RetentionTooShortError,
        match=r"^model 'fct_orders': setting 'retention_hours' has bad value 24.*"
        r"maintenance_vacuum_allow_short_retention",
    ):
        op_spec("vacuum").invoke(
            str(table), spark=sail_spark, model="fct_orders", retention_hours=24, dry_run=True
        )
    with pytest.raises(
        ConfigError, match=r"model 'fct_orders': setting 'retention_hours' has bad value -1"
    ):
        op_spec("vacuum").invoke(
            str(table), spark=sail_spark, model="fct_orders", retention_hours=-1
        )


def test_override_warns_once_per_command(fixture_table, sail_spark, caplog) -> None:
    table = fixture_table("cdf-table")
    with caplog.at_level(logging.WARNING, logger="python_ops.ops.vacuum"):
        for command in ("first", "second"):
            invocation = Invocation(command)
            for _ in range(2):  # twice in one command: one warning
                result = run(table, sail_spark, retention_hours=1, invocation=invocation)
                assert result.retention_check_overridden
    warnings = [r for r in caplog.records if "below the table's minimum" in r.getMessage()]
    assert len(warnings) == 2


def test_table_property_sets_the_retention(tmp_path: Path, sail_spark) -> None:
    table = tmp_path / "t"
    name = register(
        sail_spark,
        table,
        "id bigint",
        "tblproperties ('delta.deletedFileRetentionDuration' = 'interval 2 days')",
    )
    sail_spark.sql(f"insert into {name} values (1)")
    props = DeltaTable(str(table)).metadata().configuration
    if props.get("delta.deletedFileRetentionDuration") != "interval 2 days":
        pytest.fail(f"the engine did not record the table property: {props}")
    three_days = untracked(table, "part-3d.parquet", days=3)
    one_day = untracked(table, "part-1d.parquet", days=1)
    result = vacuum(str(table), spark=sail_spark, dry_run=False)
    assert (result.retention_hours, result.retention_source) == (48, "table property")
    assert not three_days.exists()
    assert one_day.exists()
    with pytest.raises(RetentionTooShortError, match="is 48 h "):
        vacuum(str(table), spark=sail_spark, retention_hours=24)


# --- partition scope and report --------------------------------------------------------------


def test_partition_filter_limits_listing_and_deletion(tmp_path: Path, sail_spark) -> None:
    table = tmp_path / "t"
    write_table(sail_spark, table)
    age_everything(table)
    strays = {
        d: untracked(table, f"day={d}/stray.parquet")
        for d in ("2024-01-01", "2024-01-02", "2024-01-03")
    }
    result = run(table, sail_spark, dry_run=False, partition_filter="day >= '2024-01-02'")
    assert result.partitions_scanned == 2
    assert not strays["2024-01-02"].exists()
    assert not strays["2024-01-03"].exists()
    assert strays["2024-01-01"].exists()
    with pytest.raises(
        ConfigError,
        match=r"'id' is a non-partition column; only partition columns may be used: day",
    ):
        run(table, sail_spark, partition_filter="id > 3")


def test_partition_filter_on_unpartitioned_table(fixture_table, sail_spark) -> None:
    with pytest.raises(ConfigError, match="not partitioned"):
        run(fixture_table("simple_table_with_checkpoint"), sail_spark, partition_filter="x = 1")


def test_dry_run_report_is_complete(tmp_path: Path, sail_spark) -> None:
    table = tmp_path / "t"
    write_table(sail_spark, table)
    for i in range(1500):  # more than Delta's 1,000-path cap on dry-run output
        untracked(table, f"day=2024-01-0{1 + i % 3}/stray-{i}.parquet", size=10 + i)
    age_everything(table)
    dry = vacuum(str(table), spark=sail_spark, dry_run=True)
    strays = {f for f in selected_files(dry) if "stray-" in f}
    assert len(strays) == 1500
    assert dry.files_deleted == 0
    assert all(p.exists() for p in table.rglob("stray-*"))
    sizes = {f.path: f.size_bytes for f in dry.paths}
    assert sizes["day=2024-01-01/stray-0.parquet"] == 10
    assert dry.bytes_found == sum(sizes.values())
    assert sum(g.files for g in dry.by_prefix) == dry.files_found
    assert {g.prefix for g in dry.by_prefix} == {
        "day=2024-01-01",
        "day=2024-01-02",
        "day=2024-01-03",
    }


def test_command_line_json(tmp_path: Path) -> None:
    table = tmp_path / "t"
    from python_ops.spark_sessions import SailEngine

    engine = SailEngine()
    try:
        write_table(engine.spark, table, partitioned=False)
    finally:
        engine.stop()
    stray = untracked(table, "stray.parquet", size=123)
    cli = [sys.executable, "-m", "python_ops", "vacuum", str(table), "--json"]
    dry = subprocess.run(
        [*cli, "--dry-run"], capture_output=True, text=True, timeout=300, check=True
    )
    report = json.loads(dry.stdout)
    assert report["dry_run"] is True
    assert {"path": "stray.parquet", "size_bytes": 123, "is_dir": False} in report["paths"]
    assert stray.exists()
    refused = subprocess.run(
        [*cli, "--retention-hours", "1"], capture_output=True, text=True, timeout=300, check=False
    )
    assert refused.returncode == 2
    assert "minimum for table" in refused.stderr
    assert "Traceback" not in refused.stderr
    subprocess.run(cli, capture_output=True, text=True, timeout=300, check=True)
    assert not stray.exists()
