"""``delta_identity`` held against Delta Lake 4.4 itself: does a ``remove`` cancel an ``add``?

Each case is a hand-written two-commit table: version 0 adds one real one-row Parquet file under
one spelling of its path, version 1 removes it under another. Delta's own read of the latest
version (on the run's Delta Connect server) says whether the remove cancelled the add (0 rows)
or not (1 row).

Delta keys the replay by ``java.net.URI`` (``InMemoryLogReplay``), but first repartitions the
actions by the canonical path *string* (``Snapshot.stateReconstruction``). With one snapshot
partition the URI alone decides (``uri_class``). With more, two spellings that are one URI but
two strings (``%c3`` vs ``%C3``, ``file:/`` vs ``file:///``; Delta qualifies ``/abs`` as
``file:///abs``) meet only when their strings hash to one partition. One string
(``delta_identity``) always meets; ours keeps a file removed only by another string of its URI
live and flags it (``Snapshot.ambiguous``).
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from python_ops.delta.log.actions import relativize
from python_ops.delta.log.file_identity import delta_identity, uri_class
from python_ops.delta.state.snapshot import read_snapshot
from tests.helpers.delta_reads import table_sql

pytestmark = [pytest.mark.classic_spark, pytest.mark.delta_jars, pytest.mark.slow]

NFC, NFD = unicodedata.normalize("NFC", "café"), unicodedata.normalize("NFD", "café")
# (id, add path, remove path); {root} is the table's absolute directory
CASES = [
    ("same", "x.parquet", "x.parquet"),
    ("raw-vs-escaped", "café/x.parquet", "caf%C3%A9/x.parquet"),
    ("hex-case", "caf%c3%a9/x.parquet", "caf%C3%A9/x.parquet"),
    ("dot", "a/./x.parquet", "a/x.parquet"),
    ("double-slash", "a//x.parquet", "a/x.parquet"),
    ("dot-dot", "a/b/../x.parquet", "a/x.parquet"),
    ("abs-vs-file", "{root}/x.parquet", "file:{root}/x.parquet"),
    ("abs-vs-file3", "{root}/x.parquet", "file://{root}/x.parquet"),
    ("file-vs-file3", "file:{root}/x.parquet", "file://{root}/x.parquet"),
    ("abs-vs-relative", "{root}/x.parquet", "x.parquet"),
    ("relative-vs-file", "x.parquet", "file:{root}/x.parquet"),
    ("escaped-vs-double-escaped", "sp%20ace/x.parquet", "sp%2520ace/x.parquet"),
    ("nfc-vs-nfd", f"{NFC}/x.parquet", f"{NFD}/x.parquet"),
    ("cjk", "日本/x.parquet", "%E6%97%A5%E6%9C%AC/x.parquet"),
    ("emoji", "\U0001f600/x.parquet", "%F0%9F%98%80/x.parquet"),
    ("plus", "a%2Bb/x.parquet", "a+b/x.parquet"),
    ("equals", "p%3D1/x.parquet", "p=1/x.parquet"),
]
PARAMS = [pytest.param(*case, id=case[0]) for case in CASES]
# Delta's default number of snapshot partitions (the tests' server is set to 2).
DEFAULT_PARTITIONS = 50
# One URI, two fixed strings that 50 partitions keep apart (measured), so Delta keeps the add.
# (abs-vs-file and file-vs-file3 too, mostly: their strings hold the temporary directory.)
SPLIT_BY_DEFAULT = {"hex-case"}
SCHEMA = {"type": "struct", "fields": [{"name": "id", "type": "integer", "nullable": True}]}


@pytest.fixture(scope="module")
def spark(delta_server: Any) -> Iterator[Any]:
    """A Connect session of its own on the run's Delta server (this module changes settings)."""
    from pyspark.sql import SparkSession

    session = SparkSession.builder.remote(f"sc://127.0.0.1:{delta_server.port}").create()
    yield session
    session.stop()


def build(table: Path, add_path: str, remove_path: str) -> None:
    """Write version 0 (a one-row file added as ``add_path``) and 1 (``remove_path`` removed)."""
    physical = relativize(add_path, str(table))
    assert physical is not None, add_path
    (table / physical).parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"id": pa.array([1], pa.int32())}), table / physical)
    size = (table / physical).stat().st_size
    metadata = {
        "id": "00000000-0000-0000-0000-000000000001",
        "format": {"provider": "parquet", "options": {}},
        "schemaString": json.dumps(SCHEMA),
        "partitionColumns": [],
        "configuration": {},
        "createdTime": 1_700_000_000_000,
    }
    add = {
        "path": add_path,
        "partitionValues": {},
        "size": size,
        "modificationTime": 1_700_000_000_000,
        "dataChange": True,
    }
    remove = {"path": remove_path, "deletionTimestamp": 1_700_000_001_000, "dataChange": True}
    protocol = {"minReaderVersion": 1, "minWriterVersion": 2}
    commits: list[list[dict[str, Any]]] = [
        [{"protocol": protocol}, {"metaData": metadata}, {"add": add}],
        [{"remove": remove}],
    ]
    (table / "_delta_log").mkdir()
    for version, actions in enumerate(commits):
        text = "".join(json.dumps(a, ensure_ascii=False) + "\n" for a in actions)
        (table / "_delta_log" / f"{version:020d}.json").write_text(text, encoding="utf-8")


class Answer(NamedTuple):
    """Delta's answer for one case, beside ours."""

    cancelled: bool  # Delta read no row: the remove cancelled the add
    same_string: bool  # delta_identity equal: Delta's replay always meets them
    same_uri: bool  # uri_class equal: one URI, so they cancel when they meet
    ambiguous: bool  # our snapshot flags the live file as ambiguous


def replay(spark: Any, tmp_path: Path, add: str, remove: str, partitions: int) -> Answer:
    """Build the case's table and replay it on Delta with ``partitions`` snapshot partitions."""
    table = tmp_path / "t"
    table.mkdir()
    add, remove = (p.replace("{root}", str(table)) for p in (add, remove))
    build(table, add, remove)
    spark.conf.set("spark.databricks.delta.snapshotPartitions", str(partitions))
    rows = int(spark.sql(f"SELECT count(*) AS n FROM {table_sql(table)}").first()["n"])
    assert rows in (0, 1)
    a, r = (delta_identity(p, str(table)) for p in (add, remove))
    snapshot = read_snapshot(str(table))
    return Answer(rows == 0, a == r, uri_class(a) == uri_class(r), bool(snapshot.ambiguous))


@pytest.mark.parametrize(("case", "add", "remove"), PARAMS)
def test_one_partition_cancels_exactly_when_the_uris_match(
    spark: Any, tmp_path: Path, case: str, add: str, remove: str
) -> None:
    answer = replay(spark, tmp_path, add, remove, 1)
    assert answer.cancelled == answer.same_uri, f"{case}: {answer}"


@pytest.mark.parametrize(("case", "add", "remove"), PARAMS)
def test_default_partitions_cancel_one_string_and_never_another_uri(
    spark: Any, tmp_path: Path, case: str, add: str, remove: str
) -> None:
    answer = replay(spark, tmp_path, add, remove, DEFAULT_PARTITIONS)
    if answer.same_string:
        assert answer.cancelled, f"{case}: {answer}"  # one string: always cancelled
    if not answer.same_uri:
        assert not answer.cancelled, f"{case}: {answer}"  # another URI: never
    # one URI, two strings: Delta decides by its grouping; ours keeps the file live and says so
    assert answer.ambiguous == (answer.same_uri and not answer.same_string), f"{case}: {answer}"
    if case in SPLIT_BY_DEFAULT:  # measured: 50 partitions keep these two strings apart
        assert not answer.cancelled, f"{case}: {answer}"
