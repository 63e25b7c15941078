"""Expired log cleanup on real tables: Spark/Databricks fixtures and tables Sail writes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from deltalake import DeltaTable

from python_ops.delta.state.snapshot import read_snapshot
from python_ops.delta.table.recorded_retentions import policy_properties
from python_ops.delta.writing.local_writer import LOCAL_DELTA_ENV
from python_ops.delta.writing.writer import set_table_properties
from python_ops.errors import ConfigError, DeltaLogError
from python_ops.ops.log_cleanup import cleanup_logs
from tests.helpers.vacuum import DAY_S, age_everything, content, engine_content

OLD_DAYS = 60


def log_names(table: Path) -> set[str]:
    return {p.name for p in (table / "_delta_log").iterdir() if p.is_file()}


def age_versions(table: Path, versions: range, *, days: float = OLD_DAYS) -> None:
    """Backdate the log files (commit, checksum, checkpoint) of some versions."""
    when = time.time() - days * DAY_S
    for path in (table / "_delta_log").iterdir():
        if path.is_file() and path.name[:20].isdigit() and int(path.name[:20]) in versions:
            os.utime(path, (when, when))


def sail_table(spark, path: Path, commits: int) -> str:
    """A table Sail writes with ``commits`` inserts (Sail checkpoints every 10 versions)."""
    name = f"t_{abs(hash(str(path)))}"
    spark.sql(
        f"create table {name} (id bigint, day string) using delta partitioned by (day) "
        f"location '{path}'"
    )
    for i in range(commits):
        spark.sql(f"insert into {name} values ({i}, '2024-01-0{1 + i % 3}')")
    # everything written just now: make it all young, then age chosen versions explicitly
    now = time.time()
    for p in (path / "_delta_log").iterdir():
        os.utime(p, (now, now))
    return name


def test_classic_checkpoint_fixture(fixture_table, sail_spark) -> None:
    table = fixture_table("simple_table_with_checkpoint")
    age_everything(table, days=OLD_DAYS)
    latest_before = content(table)
    result = cleanup_logs(str(table), dry_run=False)
    assert result.checkpoint_kept == 10
    assert result.oldest_version_kept == 10
    assert {f.path for f in result.files} == {f"_delta_log/{v:020d}.json" for v in range(10)}
    assert all(f.kind == "commit" for f in result.files)
    assert log_names(table) == {
        "00000000000000000010.checkpoint.parquet",
        "00000000000000000010.json",
        "_last_checkpoint",
    }
    assert content(table) == latest_before
    assert content(table, 10) == latest_before
    with pytest.raises(Exception, match=r"(?i)no files in log segment"):
        DeltaTable(str(table), version=9)
    with pytest.raises(DeltaLogError, match="missing"):
        read_snapshot(str(table), version=9)
    assert engine_content(sail_spark, table)[0] == latest_before[0]


def test_v2_checkpoint_sidecars(fixture_table, monkeypatch: pytest.MonkeyPatch) -> None:
    # no Delta writer here: no checkpoint is written first (Delta's would be a new v2 one, see
    # tests/integration/test_writer_choice.py), so the fixture's checkpoint 8 is the one kept
    monkeypatch.setenv(LOCAL_DELTA_ENV, "off")
    table = fixture_table("checkpoint-v2-table")
    age_everything(table, days=OLD_DAYS)
    sidecars = sorted(p.name for p in (table / "_delta_log" / "_sidecars").iterdir())
    result = cleanup_logs(str(table), dry_run=False)
    assert result.checkpoint_kept == 8
    assert result.checkpoint_not_written is not None  # v2Checkpoint: delta-rs must not write one
    kinds = {f.kind for f in result.files}
    assert kinds == {"commit", "checksum", "checkpoint", "sidecar"}
    remaining_sidecars = sorted(p.name for p in (table / "_delta_log" / "_sidecars").iterdir())
    assert remaining_sidecars == [s for s in sidecars if s.startswith("00000000000000000008")]
    assert (table / "_delta_log" / "_autostats").is_dir()
    snap = read_snapshot(str(table))
    assert (snap.version, snap.checkpoint_version, len(snap.files)) == (9, 8, 8)


def test_without_last_checkpoint_nothing_is_deleted(fixture_table) -> None:
    table = fixture_table("with_checkpoint_no_last_checkpoint")
    age_everything(table, days=OLD_DAYS)
    before = log_names(table)
    result = cleanup_logs(str(table), dry_run=False, checkpoint_if_needed=False)
    assert result.files_deleted == 0
    assert "_last_checkpoint" in (result.skipped_reason or "")
    assert log_names(table) == before


def test_checkpoint_first_when_needed(fixture_table) -> None:
    table = fixture_table("checkpoints")  # 13 commits, no checkpoint at all
    age_everything(table, days=OLD_DAYS)
    dry = cleanup_logs(str(table), dry_run=True)
    assert dry.checkpoint_first == 12
    assert dry.files_found == 12
    assert not (table / "_delta_log" / "_last_checkpoint").exists()  # dry runs write nothing
    result = cleanup_logs(str(table), dry_run=False)
    assert result.checkpoint_first == 12
    assert {f.path for f in result.files} == {f.path for f in dry.files}
    assert log_names(table) == {
        "00000000000000000012.checkpoint.parquet",
        "00000000000000000012.json",
        "_last_checkpoint",
    }
    assert DeltaTable(str(table)).version() == 12


def test_hundreds_of_commits_written_by_the_engine(tmp_path: Path, sail_spark) -> None:
    table = tmp_path / "t"
    sail_table(sail_spark, table, 200)
    assert json.loads((table / "_delta_log" / "_last_checkpoint").read_text())["version"] == 200
    age_versions(table, range(0, 150))
    # names that are not a version's commit/checksum/checkpoint are never touched
    for name in ("00000000000000000000.00000000000000000009.compacted.json", "notes.txt"):
        (table / "_delta_log" / name).write_text("{}")
    old = time.time() - 90 * DAY_S
    for name in ("00000000000000000000.00000000000000000009.compacted.json", "notes.txt"):
        os.utime(table / "_delta_log" / name, (old, old))
    before = {v: content(table, v) for v in range(150, 201)}
    latest = engine_content(sail_spark, table)
    result = cleanup_logs(str(table), dry_run=False)
    assert result.checkpoint_kept == 150
    assert result.checkpoint_first is None
    assert result.files_deleted == 150 * 2 + 14  # commits + checksums 0..149, checkpoints 10..140
    remaining = log_names(table)
    assert min(int(n[:20]) for n in remaining if n[:20].isdigit() and "compacted" not in n) == 150
    assert {"00000000000000000000.00000000000000000009.compacted.json", "notes.txt"} <= remaining
    # time travel through delta-rs (Sail 0.7.2's versionAsOf fails on any non-latest version,
    # before and after cleanup alike) and the latest version through the engine
    assert {v: content(table, v) for v in range(150, 201)} == before
    assert engine_content(sail_spark, table) == latest
    with pytest.raises(Exception, match=r"(?i)no files in log segment"):
        DeltaTable(str(table), version=149)


def test_modification_times_going_backwards(tmp_path: Path, sail_spark) -> None:
    table = tmp_path / "t"
    sail_table(sail_spark, table, 30)  # checkpoints at 10, 20, 30
    age_versions(table, range(0, 15), days=OLD_DAYS)
    age_versions(table, range(15, 16), days=0)  # version 15 was written just now ...
    age_versions(table, range(16, 31), days=OLD_DAYS + 5)  # ... later versions claim to be older
    result = cleanup_logs(str(table), dry_run=False, checkpoint_if_needed=False)
    # 16.. count as "15 + 1 ms" and later: young, so checkpoints 20 and 30 are not eligible and
    # version 15 survives (timestamp time travel keeps resolving the same way).
    assert result.checkpoint_kept == 10
    assert min(int(n[:20]) for n in log_names(table) if n[:20].isdigit()) == 10
    assert "00000000000000000015.json" in log_names(table)


def test_killed_mid_way_and_rerun(tmp_path: Path) -> None:
    from python_ops.spark_sessions import SailEngine

    table = tmp_path / "t"
    engine = SailEngine()
    try:
        sail_table(engine.spark, table, 60)
    finally:
        engine.stop()
    age_versions(table, range(0, 50))
    kept_versions = range(50, 61)
    before = {v: content(table, v) for v in kept_versions}
    script = textwrap.dedent(
        f"""
        import os, signal
        from python_ops.ops.log_cleanup import cleanup_logs

        def die_halfway(done, total):
            if done >= total // 2:
                os.kill(os.getpid(), signal.SIGKILL)

        cleanup_logs({str(table)!r}, dry_run=False, on_progress=die_halfway)
        """
    )
    killed = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, timeout=300, check=False
    )
    assert killed.returncode == -9, killed.stderr[-2000:]
    left = [n for n in log_names(table) if n[:20].isdigit() and int(n[:20]) < 50]
    assert left, "the kill came before the end"
    assert {v: content(table, v) for v in kept_versions} == before
    rerun = cleanup_logs(str(table), dry_run=False)
    assert rerun.files_deleted == len(left)
    assert {v: content(table, v) for v in kept_versions} == before


def test_same_files_as_delta_rs_cleanup_metadata(tmp_path: Path, sail_spark) -> None:
    table = tmp_path / "t"
    sail_table(sail_spark, table, 45)
    age_versions(table, range(0, 33))
    copy = tmp_path / "copy"
    shutil.copytree(table, copy)
    before = log_names(table)
    cleanup_logs(str(table), dry_run=False, checkpoint_if_needed=False)
    DeltaTable(str(copy)).cleanup_metadata()
    ours, theirs = before - log_names(table), before - log_names(copy)
    # The one difference: delta-rs leaves the checksum (.crc) files of the versions it deletes;
    # Delta's MetadataCleanup deletes them with their commits (spec 2.4). Everything else agrees.
    assert {n for n in ours if not n.endswith(".crc")} == theirs
    assert {n for n in ours if n.endswith(".crc")} == {f"{v:020d}.crc" for v in range(30)}
    assert max(int(n[:20]) for n in theirs) == 29  # both keep checkpoint 30 and what follows


def test_policy_is_recorded_as_table_properties(tmp_path: Path, sail_spark) -> None:
    table = tmp_path / "t"
    sail_table(sail_spark, table, 3)
    policy = policy_properties(log_retention_days=7, deleted_file_retention_hours=240)
    result = cleanup_logs(str(table), dry_run=False, record_policy=policy)
    assert result.properties_recorded == policy
    assert result.retention_days == 7
    assert result.retention_source == "table property"
    config = read_snapshot(str(table)).metadata.configuration
    assert config["delta.logRetentionDuration"] == "interval 7 days"
    assert config["delta.deletedFileRetentionDuration"] == "interval 240 hours"
    again = cleanup_logs(str(table), dry_run=False, record_policy=policy)
    assert again.properties_recorded == {}  # already in place: no new commit


def test_disabled_cleanup_is_respected_unless_forced(tmp_path: Path, sail_spark) -> None:
    table = tmp_path / "t"
    sail_table(sail_spark, table, 25)
    set_table_properties(str(table), {"delta.enableExpiredLogCleanup": "false"})
    age_versions(table, range(0, 25))
    skipped = cleanup_logs(str(table), dry_run=False)
    assert "enableExpiredLogCleanup=false" in (skipped.skipped_reason or "")
    assert skipped.files_deleted == 0
    forced = cleanup_logs(str(table), dry_run=False, force=True, checkpoint_if_needed=False)
    assert forced.checkpoint_kept == 20
    assert forced.files_deleted > 0


def test_bad_retention(fixture_table) -> None:
    with pytest.raises(ConfigError, match="'retention_days' has bad value -1"):
        cleanup_logs(str(fixture_table("cdf-table")), retention_days=-1)


def test_command_line_json(fixture_table) -> None:
    table = fixture_table("simple_table_with_checkpoint")
    age_everything(table, days=OLD_DAYS)
    cli = [sys.executable, "-m", "python_ops", "cleanup-logs", str(table), "--json"]
    dry = subprocess.run(
        [*cli, "--dry-run"], capture_output=True, text=True, timeout=120, check=True
    )
    report = json.loads(dry.stdout)
    assert report["files_found"] == 10
    commit_3 = "_delta_log/00000000000000000003.json"
    size = (table / commit_3).stat().st_size
    assert {"path": commit_3, "version": 3, "kind": "commit", "size_bytes": size} in report["files"]
    assert len(log_names(table)) == 13
    subprocess.run(cli, capture_output=True, text=True, timeout=120, check=True)
    assert len(log_names(table)) == 3
