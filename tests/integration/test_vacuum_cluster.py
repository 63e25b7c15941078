"""VACUUM with its listing and deletes in Spark tasks (``cluster_listing``), on a real cluster.

The cluster test runs a ``local-cluster`` (two executor JVMs, their Python workers) from the
installed pyspark package: the process ids the tasks report are executor-launched Python workers,
not the driver, and the cluster selects and deletes exactly what the in-process engine does on an
identical copy. The embedded-engine tests check the same path where tasks run in this process.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from python_ops.errors import StorageError
from python_ops.ops.vacuum import vacuum
from python_ops.storage import LocalStorage
from python_ops.storage.s3 import S3Storage
from tests.helpers.spark_cluster import ClusterDriver, Proc, local_cluster
from tests.helpers.vacuum import age_everything, content, untracked

NOW_MS = int(time.time() * 1000)  # one "now" (cutoff) for every run; new strays are after it
SHORT = {"retention_hours": 0, "allow_short_retention": True, "now_ms": NOW_MS}
STRAY_DIRS = 20  # top-level directories of old strays: prefixes enough for both executors


def _messy_copy(fixture_table: Callable[[str], Path], name: str) -> Path:
    """An aged copy of the partitioned fixture with strays, new files, hidden files, a link."""
    table = fixture_table("delta-0.8.0-partitioned")
    target = table.parent / name
    table.rename(target)
    age_everything(target, days=40)
    untracked(target, "part-old-root.parquet", days=30)
    untracked(target, "part-new-root.parquet", days=0)
    untracked(target, "year=2021/month=4/day=5/part-stray.parquet", days=30)
    untracked(target, "a/b/c/part-deep-old.parquet", days=30)
    untracked(target, "a/b/part-deep-new.parquet", days=0)
    untracked(target, "_hidden/part-x.parquet", days=30)
    untracked(target, ".staging/part-y.parquet", days=30)
    for i in range(STRAY_DIRS):
        untracked(target, f"stray-{i:02}/run/part-{i}.parquet", days=30, size=1000 + i)
    (target / "empty" / "inner").mkdir(parents=True)
    (target / "year=2020" / "link.parquet").symlink_to("/etc/hostname")
    return target


def _tree(table: Path) -> set[str]:
    return {str(p.relative_to(table)) for p in table.rglob("*")}


def _same_outcome(cluster: dict[str, Any], local: Any) -> None:
    expected = local.to_dict()
    for key in (
        "paths",
        "by_prefix",
        "files_listed",
        "symlinks_skipped",
        "files_found",
        "bytes_found",
        "dirs_found",
        "files_deleted",
        "bytes_deleted",
        "dirs_deleted",
        "delete_failures",
    ):
        assert cluster[key] == expected[key], key


def _executor_worker(chain: list[Proc], driver_pid: int) -> str:
    """The executor id of a task's process: a Python worker forked by an executor JVM's daemon."""
    worker, *ancestors = chain
    assert worker.pid != driver_pid
    assert "pyspark.daemon" in worker.argv or "pyspark.worker" in " ".join(worker.argv)
    executor = next(p for p in ancestors if p.is_executor)
    assert executor.argv[0].endswith("java")
    # below the executor JVM only Python processes of pyspark.daemon, never the driver
    assert all("pyspark.daemon" in p.argv for p in chain[: chain.index(executor)]), chain
    assert executor.executor_id is not None
    return executor.executor_id


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClusterDriver]:
    """A local-cluster[2,1,1024] driver for this module (about 15-20 s to start)."""
    with local_cluster(tmp_path_factory.mktemp("cluster")) as driver:
        yield driver


@pytest.mark.slow
@pytest.mark.classic_spark
def test_cluster_lists_and_deletes_in_executor_processes(
    fixture_table: Callable[[str], Path], cluster: ClusterDriver
) -> None:
    on_cluster = _messy_copy(fixture_table, "on-cluster")
    in_process = _messy_copy(fixture_table, "in-process")
    before = content(on_cluster)
    assert content(in_process) == before
    driver_pid = cluster.ready["driver_pid"]
    assert driver_pid != os.getpid()

    dry = cluster.call(str(on_cluster), engine="spark", cluster_listing=True, **SHORT)
    _same_outcome(dry["result"], vacuum(str(in_process), engine="in_process", **SHORT))
    assert dry["result"]["files_found"] == STRAY_DIRS + 3

    started = time.perf_counter()
    real = cluster.call(
        str(on_cluster), engine="spark", cluster_listing=True, dry_run=False, **SHORT
    )
    seconds = time.perf_counter() - started
    local = vacuum(str(in_process), engine="in_process", dry_run=False, **SHORT)
    _same_outcome(real["result"], local)
    assert real["result"]["files_deleted"] == STRAY_DIRS + 3
    assert real["result"]["dirs_deleted"] == 2  # empty/inner, then empty
    assert content(on_cluster) == content(in_process) == before
    assert _tree(on_cluster) == _tree(in_process)
    assert (on_cluster / "_hidden" / "part-x.parquet").exists()
    assert (on_cluster / "part-new-root.parquet").exists()

    diagnostics = real["result"]["diagnostics"]
    assert diagnostics["driver_pid"] == driver_pid
    assert diagnostics["num_prefixes_in_tasks"] >= STRAY_DIRS
    assert diagnostics["num_listing_tasks"] == 16  # task_slots: no spark.default.parallelism
    assert diagnostics["num_delete_tasks"] == 3  # the files, then two directory depths
    chains = {
        int(pid): [Proc(p["pid"], p["ppid"], tuple(p["argv"])) for p in chain]
        for pid, chain in real["processes"].items()
    }
    listed_by = {_executor_worker(chains[p], driver_pid) for p in diagnostics["listing_pids"]}
    deleted_by = {_executor_worker(chains[p], driver_pid) for p in diagnostics["delete_pids"]}
    assert listed_by == {"0", "1"}  # both executors listed
    assert deleted_by
    assert deleted_by <= {"0", "1"}
    assert driver_pid not in set(diagnostics["listing_pids"]) | set(diagnostics["delete_pids"])
    chain = chains[diagnostics["listing_pids"][0]]
    upto = next((i for i, p in enumerate(chain) if p.pid == driver_pid), len(chain) - 1)
    example = " <- ".join(p.describe() for p in chain[: upto + 1])
    print(
        f"\ncluster VACUUM (delete) {seconds:.1f} s; driver pid {driver_pid}; listing pids "
        f"{diagnostics['listing_pids']} on executors {sorted(listed_by)}; delete pids "
        f"{diagnostics['delete_pids']} on executors {sorted(deleted_by)}; a listing task's "
        f"process: {example}"
    )


def test_embedded_engine_runs_the_same_cluster_path(
    fixture_table: Callable[[str], Path], sail_spark: Any
) -> None:
    on_spark = _messy_copy(fixture_table, "on-spark")
    in_process = _messy_copy(fixture_table, "in-process")
    selected_in_process = vacuum(str(in_process), engine="in_process", **SHORT)
    dry = vacuum(str(on_spark), spark=sail_spark, engine="spark", cluster_listing=True, **SHORT)
    _same_outcome(dry.to_dict(), selected_in_process)
    assert dry.diagnostics is not None
    assert dry.diagnostics.num_prefixes_in_tasks >= STRAY_DIRS
    assert dry.diagnostics.listing_pids  # the embedded engine runs its tasks in this process
    # listed in tasks, selected in process
    both = vacuum(
        str(on_spark), spark=sail_spark, engine="in_process", cluster_listing=True, **SHORT
    )
    assert both.paths == dry.paths
    assert both.files_listed == dry.files_listed
    real = vacuum(
        str(on_spark),
        spark=sail_spark,
        engine="spark",
        cluster_listing=True,
        dry_run=False,
        **SHORT,
    )
    local = vacuum(str(in_process), engine="in_process", dry_run=False, **SHORT)
    _same_outcome(real.to_dict(), local)
    assert real.diagnostics is not None
    assert real.diagnostics.delete_pids
    assert _tree(on_spark) == _tree(in_process)


def test_partition_filter_in_tasks(fixture_table: Callable[[str], Path], sail_spark: Any) -> None:
    on_spark = _messy_copy(fixture_table, "on-spark")
    in_process = _messy_copy(fixture_table, "in-process")
    scope = {"partition_filter": "year = 2021", **SHORT}
    tasks = vacuum(str(on_spark), spark=sail_spark, cluster_listing=True, dry_run=False, **scope)
    local = vacuum(str(in_process), engine="in_process", dry_run=False, **scope)
    _same_outcome(tasks.to_dict(), local)
    assert {f.path for f in tasks.paths} == {"year=2021/month=4/day=5/part-stray.parquet"}
    assert _tree(on_spark) == _tree(in_process)


def test_a_local_table_missing_on_the_executor_is_refused(tmp_path: Path) -> None:
    (tmp_path / "t" / "_delta_log").mkdir(parents=True)
    reopen = LocalStorage(str(tmp_path / "t")).executor_factory()
    assert reopen().root == str(tmp_path / "t")
    missing = LocalStorage(str(tmp_path / "elsewhere")).executor_factory()
    with pytest.raises(StorageError, match="not on the disk of this Spark executor"):
        missing()


def test_object_store_deletes_in_tasks_in_batches(
    fixture_table: Callable[[str], Path], sail_spark: Any, s3: Any
) -> None:
    local = _messy_copy(fixture_table, "source")
    (local / "year=2020" / "link.parquet").unlink()
    uri = s3.upload_tree(local, "tables/cluster")
    s3.put("tables/cluster/stray-00/")  # a directory marker, with an old file below it
    later = int(time.time() * 1000) + 31 * 24 * 3_600_000  # S3 dates objects at upload
    kept_before = {k for k in s3.keys("tables/cluster/") if "/stray-" not in k}
    threads_storage, storage = S3Storage(uri), S3Storage(uri)
    scope = {"now_ms": later, "retention_hours": 0, "allow_short_retention": True}
    on_threads = vacuum(threads_storage, spark=sail_spark, engine="spark", **scope)
    real = vacuum(
        storage, spark=sail_spark, engine="spark", cluster_listing=True, dry_run=False, **scope
    )
    assert real.paths == on_threads.paths
    assert real.files_deleted == real.files_found >= STRAY_DIRS
    assert real.delete_failures == 0
    assert real.diagnostics is not None
    assert real.diagnostics.num_delete_tasks >= 1
    # the driver's client listed the log and the root, and deleted nothing
    assert storage.requests["DeleteObjects"] == 0
    assert storage.requests["ListObjectsV2"] < threads_storage.requests["ListObjectsV2"]
    left = s3.keys("tables/cluster/")
    assert not any("/stray-" in k and k.endswith(".parquet") for k in left)
    assert kept_before - {"tables/cluster/" + f.path for f in real.paths} <= left
