"""Fixtures of the oracle tests: Delta Lake 4.4 (the JVM server) as the reference for our ops.

``oracle_spark`` is a Spark Connect session of its own on the shared ``delta_server`` (its
session settings, such as the retention check switched off, touch no other test's session).
``delta_corpus`` writes the corpus of ``tests.helpers.delta_corpus`` once per test session; tests
copy a table before any op touches it.
"""

from __future__ import annotations

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
def delta_corpus(oracle_spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every corpus table, written by Delta 4.4 and planted, once per session (read-only)."""
    root = tmp_path_factory.mktemp("delta-corpus")
    started = time.perf_counter()
    tables = build_corpus(oracle_spark, root)
    print(f"delta corpus: {len(tables)} tables in {time.perf_counter() - started:.1f} s")
    return tables
