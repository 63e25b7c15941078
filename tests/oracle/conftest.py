"""Fixtures of the oracle tests: Delta Lake 4.4 (the JVM server) as the reference for our ops.

``oracle_spark`` is a Spark Connect session of its own on the shared ``delta_server`` (its
session settings, such as the retention check switched off, touch no other test's session).
``delta_corpus`` writes the corpus of ``tests.helpers.delta_corpus`` once per test session; tests
copy a table before any op touches it.
"""

from __future__ import annotations

import fcntl
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.delta_corpus import build_corpus


@pytest.fixture(scope="session")
def oracle_spark(delta_server: Any) -> Iterator[Any]:
    """A Spark Connect session on the Delta server, with Delta's retention checks off.

    Zero-retention VACUUM (``RETAIN 0 HOURS``) is one of the comparisons, and the log cleanup
    comparison reads versions whose (backdated) commit files are older than the table's
    ``delta.deletedFileRetentionDuration``, which Delta 4.4 refuses to time travel to by
    default. Both are session settings of this session only.
    """
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.remote(f"sc://127.0.0.1:{delta_server.port}").create()
    spark.conf.set("spark.databricks.delta.retentionDurationCheck.enabled", "false")
    spark.conf.set(
        "spark.databricks.delta.vacuum.enforceTimeTravelWithinDeletedFileRetentionDuration", "false"
    )
    yield spark
    spark.stop()


@pytest.fixture(scope="session")
def delta_corpus(
    oracle_spark: Any, tmp_path_factory: pytest.TempPathFactory, worker_id: str
) -> dict[str, Path]:
    """Every corpus table, written by Delta 4.4 and planted, once per test run (read-only).

    Under pytest-xdist the workers share one corpus: the first to need it writes it into the
    run's common temporary directory while holding a lock, the others wait and read it (each
    worker building its own cost minutes of both cores in CI).
    """
    if worker_id == "master":  # one process: its own temporary directory
        return _built(oracle_spark, tmp_path_factory.mktemp("delta-corpus"))
    shared = tmp_path_factory.getbasetemp().parent / "delta-corpus"  # this run's, all workers'
    shared.mkdir(exist_ok=True)
    with (shared.parent / "delta-corpus.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        done = shared / "tables.json"
        if done.exists():
            return {name: Path(path) for name, path in json.loads(done.read_text()).items()}
        tables = _built(oracle_spark, shared / "tables")
        done.write_text(json.dumps({name: str(path) for name, path in tables.items()}))
        return tables


def _built(spark: Any, root: Path) -> dict[str, Path]:
    root.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    tables = build_corpus(spark, root)
    print(f"delta corpus: {len(tables)} tables in {time.perf_counter() - started:.1f} s")
    return tables
