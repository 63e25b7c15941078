"""Every op on S3: a real S3 API (moto server on 127.0.0.1), real Delta tables, real engines."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake

from python_ops.errors import ConfigError
from python_ops.ops.log_cleanup import cleanup_logs
from python_ops.ops.optimize.execute import optimize
from python_ops.ops.vacuum import vacuum
from python_ops.storage.s3 import S3Storage
from python_ops.storage.settings import S3Settings
from tests.helpers.s3 import FaultyProxy, S3Bucket, delta_options
from tests.helpers.s3proxy import ON_BOTH_SERVERS, ON_S3PROXY
from tests.helpers.table_digest import table_digest
from tests.helpers.vacuum import age_everything, selected_files, untracked

DAY_MS = 24 * 3_600_000
LATER = 31 * DAY_MS  # S3 sets LastModified at upload: judge ages from 31 days ahead


def s3_content(s3: S3Bucket, uri: str, version: int | None = None) -> tuple[int, str]:
    table = DeltaTable(uri, version=version, storage_options=delta_options(s3.endpoint))
    return table_digest(table.to_pyarrow_table())


def strays(table: Path) -> list[str]:
    """Untracked files a failed job left: in the root and in the first data directory."""
    data_dirs = sorted(
        p.relative_to(table).as_posix()
        for p in table.rglob("*")
        if p.is_dir() and "_delta_log" not in p.parts and not p.name.startswith(("_", "."))
    )
    rels = ["part-stray-root.parquet", "_tmp_job/leftover.parquet", ".staging.crc"]
    if data_dirs:
        rels.append(f"{data_dirs[-1]}/part-stray.parquet")
    for rel in rels:
        untracked(table, rel)
    return rels


@ON_BOTH_SERVERS
@pytest.mark.parametrize(
    "name",
    [
        "table-without-dv-small",
        "cdf-table",
        "table_with_column_mapping",
        "delta-0.8.0-partitioned",
        "delta-0.8.0-null-partition",
    ],
)
def test_vacuum_on_s3_matches_local_vacuum_and_keeps_content(
    fixture_table: Any, sail_spark: Any, s3: S3Bucket, name: str
) -> None:
    local = fixture_table(name)
    strays(local)
    age_everything(local)
    key = f"tables/{name}"
    uri = s3.upload_tree(local, key)
    s3.put(f"tables/{name}x/part-neighbour.parquet")  # shares the key prefix, other table
    s3.put("outside/part-0.parquet")
    now = int(time.time() * 1000)

    expected = vacuum(str(local), spark=sail_spark, dry_run=True, now_ms=now)
    dry = vacuum(uri, spark=sail_spark, dry_run=True, now_ms=now + LATER)
    assert selected_files(dry) == selected_files(expected)
    assert dry.dirs_found == 0  # prefixes are not directories; no markers here
    assert "_tmp_job/leftover.parquet" not in selected_files(dry)

    before_keys = s3.keys()
    before = s3_content(s3, uri)
    done = vacuum(uri, spark=sail_spark, dry_run=False, now_ms=now + LATER)
    assert done.files_deleted == len(selected_files(expected))
    assert done.delete_failures == 0
    gone = {f"{key}/{p}" for p in selected_files(expected)}
    # exactly those go; neighbours, log and hidden files stay; the one new key is VACUUM's
    # progress record, where Delta keeps it (LITE continues from it)
    state = f"{key}/_delta_log/_last_vacuum_info"
    assert state not in before_keys
    assert s3.keys() == (before_keys - gone) | {state}
    assert s3_content(s3, uri) == before


# moto only: S3Proxy keeps a `dir/` marker as a directory of its backend, lists it without
# LastModified or Size and leaves it out of a listing of its own prefix (S3 lists it as an object)
def test_directory_markers_are_handled(sail_spark: Any, s3: S3Bucket) -> None:
    uri = s3.uri("tables/events")
    options = delta_options(s3.endpoint)
    data = pa.table({"day": ["a", "a", "b"], "v": [1, 2, 3]})
    write_deltalake(uri, data, partition_by=["day"], storage_options=options)
    s3.put("tables/events/day=a/", b"")  # marker of a directory holding live files
    s3.put("tables/events/day=zz/", b"")  # marker of an empty directory (an old tool's mkdir)
    s3.put("tables/events/day=b/part-stray.parquet")
    now = int(time.time() * 1000)
    before = s3_content(s3, uri)
    result = vacuum(uri, spark=sail_spark, dry_run=False, now_ms=now + LATER)
    assert selected_files(result) == {"day=b/part-stray.parquet"}
    assert {f.path for f in result.paths if f.is_dir} == {"day=zz"}
    assert result.dirs_deleted == 1
    keys = s3.keys("tables/events/")
    assert "tables/events/day=zz/" not in keys
    assert "tables/events/day=a/" in keys  # never delete a directory that is not empty
    assert s3_content(s3, uri) == before


@ON_BOTH_SERVERS
def test_log_cleanup_on_s3_keeps_time_travel_from_the_checkpoint(
    fixture_table: Any, s3: S3Bucket
) -> None:
    local = fixture_table("simple_table_with_checkpoint")
    uri = s3.upload_tree(local, "tables/checkpointed")
    latest = s3_content(s3, uri)
    at_checkpoint = s3_content(s3, uri, version=10)
    now = int(time.time() * 1000)
    result = cleanup_logs(uri, retention_days=1, dry_run=False, now_ms=now + 2 * DAY_MS)
    assert result.oldest_version_kept == 10
    assert result.files_deleted == 10
    assert result.delete_failures == 0
    log_keys = s3.keys("tables/checkpointed/_delta_log/")
    assert not any(k.endswith(f"{v:020d}.json") for k in log_keys for v in range(10))
    assert s3_content(s3, uri) == latest
    assert s3_content(s3, uri, version=10) == at_checkpoint


def small_file_table(s3: S3Bucket, key: str, appends: int = 8) -> str:
    uri = s3.uri(key)
    for i in range(appends):
        rows = pa.table({"p": ["x", "y"] * 50, "id": list(range(i * 100, i * 100 + 100))})
        write_deltalake(
            uri, rows, mode="append", partition_by=["p"], storage_options=delta_options(s3.endpoint)
        )
    return uri


def test_optimize_on_s3_compacts_and_zorders_with_content_kept(s3: S3Bucket) -> None:
    uri = small_file_table(s3, "tables/small")
    before = s3_content(s3, uri)
    compacted = optimize(uri, min_small_files=2)
    assert compacted.files_removed == 16
    assert compacted.files_added == 2
    assert s3_content(s3, uri) == before
    zordered = optimize(uri, zorder_by=["id"], full=True)
    assert zordered.commits
    assert zordered.files_removed == 2
    assert s3_content(s3, uri) == before
    assert len(DeltaTable(uri, storage_options=delta_options(s3.endpoint)).file_uris()) == 2


def test_ops_finish_through_throttling_and_5xx(
    sail_spark: Any, s3: S3Bucket, monkeypatch: pytest.MonkeyPatch
) -> None:
    uri = small_file_table(s3, "tables/flaky")
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda i: s3.put(f"tables/flaky/p=x/part-stray-{i}.parquet"), range(40)))
    before = s3_content(s3, uri)
    proxy = FaultyProxy(s3.endpoint, every=4).start()
    try:
        monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.endpoint)
        now = int(time.time() * 1000)
        result = vacuum(uri, spark=sail_spark, dry_run=False, now_ms=now + LATER)
        assert result.files_deleted == 40
        assert result.delete_failures == 0
        optimized = optimize(uri, min_small_files=2)
        assert optimized.files_added == 2
        logs = cleanup_logs(uri, retention_days=1, dry_run=False, now_ms=now + 2 * DAY_MS)
        assert logs.delete_failures == 0
        assert proxy.stats()["failed"] > 5  # faults were injected and retried
    finally:
        proxy.stop()
    assert s3_content(s3, uri) == before


@ON_BOTH_SERVERS
def test_batched_deletes_and_paginated_listing(sail_spark: Any, s3: S3Bucket) -> None:
    uri = small_file_table(s3, "tables/many", appends=1)
    names = [f"p=y/part-stray-{i:04d}.parquet" for i in range(1_500)]
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(lambda rel: s3.put(f"tables/many/{rel}", b"x"), names))
    storage = S3Storage(uri)
    now = int(time.time() * 1000)
    result = vacuum(storage, spark=sail_spark, dry_run=False, now_ms=now + LATER)
    assert result.files_deleted == 1_500
    # 1,502 data objects: root (1), p=x (1), p=y (2 pages); the log is read, never walked
    assert storage.requests["DeleteObjects"] == 2
    assert storage.requests["DeleteObject"] == 0
    assert storage.requests["HeadObject"] == 0
    assert storage.requests["ListObjectsV2"] <= 6


def no_credentials_anywhere(monkeypatch: pytest.MonkeyPatch) -> None:
    """No keys in the environment, no profile files for boto3's chain to find."""
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")


def test_missing_credentials_name_what_is_missing(
    s3: S3Bucket, monkeypatch: pytest.MonkeyPatch
) -> None:
    uri = small_file_table(s3, "tables/nocreds", appends=1)
    no_credentials_anywhere(monkeypatch)
    with pytest.raises(ConfigError, match=r"AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"):
        optimize(uri)
    with pytest.raises(ConfigError, match=r"No S3 credentials for s3://.*tables/nocreds"):
        cleanup_logs(uri)


def test_commits_are_refused_where_the_store_ignores_conditional_writes(
    s3: S3Bucket, monkeypatch: pytest.MonkeyPatch
) -> None:
    uri = small_file_table(s3, "tables/unsafe", appends=3)
    proxy = FaultyProxy(s3.endpoint, strip_conditional=True).start()
    try:
        monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.endpoint)
        with pytest.raises(ConfigError, match=r"ignores conditional writes \(If-None-Match\)"):
            optimize(uri, min_small_files=2)
    finally:
        proxy.stop()
    assert DeltaTable(uri, storage_options=delta_options(s3.endpoint)).version() == 2


@ON_BOTH_SERVERS
def test_cluster_listing_in_spark_tasks_selects_the_same(
    fixture_table: Any, sail_spark: Any, s3: S3Bucket
) -> None:
    local = fixture_table("delta-0.8.0-partitioned")
    strays(local)
    uri = s3.upload_tree(local, "tables/nested")
    now = int(time.time() * 1000) + LATER
    on_threads, in_tasks = S3Storage(uri), S3Storage(uri)
    threads = vacuum(on_threads, spark=sail_spark, dry_run=True, now_ms=now)
    tasks = vacuum(in_tasks, spark=sail_spark, dry_run=True, now_ms=now, cluster_listing=True)
    assert tasks.files_listed == threads.files_listed > 0
    assert selected_files(tasks) == selected_files(threads)
    assert any(p.endswith("/part-stray.parquet") for p in selected_files(tasks))
    # the driver listed only the root; the partition prefixes were listed in Spark tasks
    assert on_threads.requests["ListObjectsV2"] > in_tasks.requests["ListObjectsV2"]


def test_credentials_from_the_spark_session(
    sail_spark: Any, s3: S3Bucket, monkeypatch: pytest.MonkeyPatch
) -> None:
    uri = small_file_table(s3, "tables/sparkcreds", appends=1)
    no_credentials_anywhere(monkeypatch)
    keys = {
        "spark.hadoop.fs.s3a.access.key": "testing",
        "spark.hadoop.fs.s3a.secret.key": "testing",
    }
    for key, value in keys.items():
        sail_spark.conf.set(key, value)
    try:
        result = vacuum(uri, spark=sail_spark, dry_run=True)
        settings = S3Settings.resolve(spark=sail_spark)
    finally:
        for key in keys:
            sail_spark.conf.unset(key)
    assert result.files_listed == 2
    assert settings.access_key_id == "testing"
    assert "testing" not in repr(settings)  # secrets never shown


@ON_S3PROXY
def test_commits_are_refused_on_s3proxy_which_ignores_conditional_writes(s3: S3Bucket) -> None:
    """S3Proxy 2.6.0 overwrites on ``PutObject`` with ``If-None-Match: *``: OPTIMIZE refuses."""
    uri = small_file_table(s3, "tables/s3proxy", appends=3)
    before = s3_content(s3, uri)
    with pytest.raises(ConfigError, match=r"ignores conditional writes \(If-None-Match\)"):
        optimize(uri, min_small_files=2)
    assert DeltaTable(uri, storage_options=delta_options(s3.endpoint)).version() == 2
    assert s3_content(s3, uri) == before


@ON_BOTH_SERVERS
def test_the_version_before_a_build_is_read_from_the_log_s_names_on_s3(s3: S3Bucket) -> None:
    # what a build's start records (``head_version``) from an object store's names: the
    # newest commit, as the log's classified listing has it; nothing there: no version
    from python_ops.delta.log.commits import commit_versions
    from python_ops.delta.log.log_files import LOG_DIR
    from python_ops.maintenance.facts.build_start import head_version

    for version in (0, 1, 2, 11):
        s3.put(f"t/{LOG_DIR}/{version:020d}.json", b"{}")
    for name in ("00000000000000000011.crc", "00000000000000000010.checkpoint.parquet", "x.json"):
        s3.put(f"t/{LOG_DIR}/{name}", b"x")
    uri = s3.uri("t")
    assert S3Storage(uri).list_names(LOG_DIR) != []
    assert head_version(S3Storage(uri)) == commit_versions(S3Storage(uri))[-1] == 11
    assert head_version(S3Storage(s3.uri("nothing-here"))) is None
    # with a checkpoint's pointer, listed from its version on (one request, not the whole
    # log); a pointer past every commit (a log replaced) leaves it to the whole listing
    for pointer, commits_from_it in ((10, [11]), (2, [2, 11]), (50, [])):
        s3.put(f"t/{LOG_DIR}/_last_checkpoint", json.dumps({"version": pointer}).encode())
        storage = S3Storage(uri)
        after = storage.list_range(LOG_DIR, start_after=f"{LOG_DIR}/{pointer:020d}")
        names = [e.path.rpartition("/")[2] for e in after]
        assert [int(n[:20]) for n in names if n.endswith(".json") and n[0].isdigit()] == (
            commits_from_it
        )
        assert head_version(storage) == 11
