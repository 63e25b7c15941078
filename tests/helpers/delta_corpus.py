"""A corpus of Delta tables written by Delta Lake 4.4 itself, one per feature Delta writes.

The oracle tests (``tests/oracle``) hold our VACUUM and log cleanup against Delta's own on these
tables. ``build_corpus`` writes every table through a Spark Connect session on the Delta server
(the ``delta_spark`` fixture): each has several commits, some of which remove files (DELETE,
UPDATE, OPTIMIZE, INSERT OVERWRITE), so tombstones exist, and a checkpoint interval of 3 so
checkpoints exist. ``plant`` then adds what VACUUM must tell apart (untracked old files at the
top and in partition directories, hidden files and directories, young and middle-aged untracked
files, empty old directories) and backdates every file with ``os.utime``.

Every feature of the brief could be created with Delta 4.4:

- ``checkpointProtection`` is created directly (``delta.feature.checkpointProtection`` plus
  ``delta.requireCheckpointProtectionBeforeVersion``); Delta's own way to get it, ``ALTER TABLE
  ... DROP FEATURE deletionVectors`` without ``TRUNCATE HISTORY``, works too but takes about 40 s
  here (a REORG, three empty commits with checkpoints), too slow for every test session.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DAY_S = 86_400
HOUR_S = 3_600
# Data files Delta wrote are backdated this far, so every tombstoned file is old enough for a
# zero retention and every live file is old too (it must be protected by the log, not by age).
DATA_AGE_S = 10 * DAY_S
SHORT_RETENTION = "interval 48 hours"


@dataclass(frozen=True)
class CorpusTable:
    """One generated table.

    Attributes:
        name: The table's name (its directory under the corpus root).
        feature: The Delta feature it exercises.
        statements: The SQL that wrote it (``{t}`` is the table reference).
        partition_column: Its partition column, if partitioned.
    """

    name: str
    feature: str
    statements: tuple[str, ...]
    partition_column: str | None = None


def _props(*extra: str) -> str:
    return "TBLPROPERTIES (" + ", ".join(("'delta.checkpointInterval'='3'", *extra)) + ")"


TABLES: tuple[CorpusTable, ...] = (
    CorpusTable(
        "deletion_vectors",
        "deletionVectors: a live DV file, and an older DV file only a tombstone references",
        (
            "CREATE TABLE {t} (id BIGINT, v STRING) USING delta "
            + _props(
                "'delta.enableDeletionVectors'='true'",
                f"'delta.deletedFileRetentionDuration'='{SHORT_RETENTION}'",
            ),
            "INSERT INTO {t} SELECT id, cast(id AS STRING) FROM range(0, 20, 1, 2)",
            "INSERT INTO {t} SELECT id, cast(id AS STRING) FROM range(20, 30, 1, 1)",
            "DELETE FROM {t} WHERE id >= 20",
            "DELETE FROM {t} WHERE id = 3",
            "DELETE FROM {t} WHERE id = 4",
        ),
    ),
    CorpusTable(
        "column_mapping_name",
        "columnMapping mode name, partitioned: random-prefix data directories, a renamed column",
        (
            "CREATE TABLE {t} (id BIGINT, `a col` STRING, p INT) USING delta PARTITIONED BY (p) "
            + _props("'delta.columnMapping.mode'='name'"),
            "INSERT INTO {t} SELECT id, 'x', id % 2 FROM range(0, 6, 1, 1)",
            "ALTER TABLE {t} RENAME COLUMN `a col` TO `b col`",
            "INSERT OVERWRITE {t} SELECT id, 'y', id % 2 FROM range(0, 4, 1, 1)",
            "INSERT INTO {t} SELECT id, 'z', 2 FROM range(10, 12, 1, 1)",
        ),
        partition_column="p",
    ),
    CorpusTable(
        "column_mapping_id",
        "columnMapping mode id, a dropped column, OPTIMIZE",
        (
            "CREATE TABLE {t} (id BIGINT, v STRING, w INT) USING delta "
            + _props("'delta.columnMapping.mode'='id'"),
            "INSERT INTO {t} SELECT id, 'a', 1 FROM range(0, 5, 1, 1)",
            "INSERT INTO {t} SELECT id, 'b', 2 FROM range(5, 10, 1, 1)",
            "ALTER TABLE {t} DROP COLUMN w",
            "OPTIMIZE {t}",
        ),
    ),
    CorpusTable(
        "identity_columns",
        "identityColumns (GENERATED ALWAYS AS IDENTITY)",
        (
            "CREATE TABLE {t} (id BIGINT GENERATED ALWAYS AS IDENTITY, v INT) USING delta "
            + _props(),
            "INSERT INTO {t} (v) SELECT id FROM range(0, 5, 1, 1)",
            "INSERT INTO {t} (v) SELECT id FROM range(5, 10, 1, 1)",
            "DELETE FROM {t} WHERE v < 5",
            "OPTIMIZE {t}",
        ),
    ),
    CorpusTable(
        "in_commit_timestamps",
        "inCommitTimestamp: commit times live in the commits, not in file times",
        (
            "CREATE TABLE {t} (id BIGINT) USING delta "
            + _props("'delta.enableInCommitTimestamps'='true'"),
            "INSERT INTO {t} SELECT id FROM range(0, 5, 1, 1)",
            "INSERT INTO {t} SELECT id FROM range(5, 10, 1, 1)",
            "INSERT OVERWRITE {t} SELECT id FROM range(0, 3, 1, 1)",
            "INSERT INTO {t} SELECT id FROM range(3, 6, 1, 1)",
        ),
    ),
    CorpusTable(
        "row_tracking",
        "rowTracking (+ domainMetadata), OPTIMIZE",
        (
            "CREATE TABLE {t} (id BIGINT) USING delta "
            + _props("'delta.enableRowTracking'='true'"),
            "INSERT INTO {t} SELECT id FROM range(0, 5, 1, 1)",
            "INSERT INTO {t} SELECT id FROM range(5, 10, 1, 1)",
            "UPDATE {t} SET id = id + 100 WHERE id < 2",
            "OPTIMIZE {t}",
        ),
    ),
    CorpusTable(
        "liquid_clustering",
        "clustering (CLUSTER BY), OPTIMIZE clusters",
        (
            "CREATE TABLE {t} (id BIGINT, k INT) USING delta CLUSTER BY (k) " + _props(),
            "INSERT INTO {t} SELECT id, CAST(id % 3 AS INT) FROM range(0, 6, 1, 1)",
            "INSERT INTO {t} SELECT id, CAST(id % 3 AS INT) FROM range(6, 12, 1, 1)",
            "OPTIMIZE {t}",
            "DELETE FROM {t} WHERE k = 0",
        ),
    ),
    CorpusTable(
        "type_widening",
        "typeWidening: a SMALLINT column widened to INT, files of both types",
        (
            "CREATE TABLE {t} (id BIGINT, s SMALLINT) USING delta "
            + _props("'delta.enableTypeWidening'='true'"),
            "INSERT INTO {t} SELECT id, CAST(id AS SMALLINT) FROM range(0, 5, 1, 1)",
            "ALTER TABLE {t} ALTER COLUMN s TYPE INT",
            "INSERT INTO {t} SELECT id, CAST(id AS INT) + 100000 FROM range(5, 10, 1, 1)",
            "DELETE FROM {t} WHERE id = 0",
        ),
    ),
    CorpusTable(
        "v2_checkpoints",
        "v2Checkpoint with sidecars (checkpointPolicy=v2, a checkpoint every 2 commits)",
        (
            "CREATE TABLE {t} (id BIGINT) USING delta TBLPROPERTIES "
            "('delta.checkpointPolicy'='v2', 'delta.checkpointInterval'='2')",
            "INSERT INTO {t} SELECT id FROM range(0, 5, 1, 1)",
            "INSERT INTO {t} SELECT id FROM range(5, 10, 1, 1)",
            "DELETE FROM {t} WHERE id < 3",
            "INSERT OVERWRITE {t} SELECT id FROM range(0, 4, 1, 1)",
        ),
    ),
    CorpusTable(
        "change_data_feed",
        "changeDataFeed, partitioned: UPDATE and DELETE write _change_data files",
        (
            "CREATE TABLE {t} (id BIGINT, p STRING) USING delta PARTITIONED BY (p) "
            + _props("'delta.enableChangeDataFeed'='true'"),
            "INSERT INTO {t} SELECT id, IF(id % 2 = 0, 'even', 'odd') FROM range(0, 8, 1, 1)",
            "UPDATE {t} SET id = id + 100 WHERE id = 2",
            "DELETE FROM {t} WHERE id = 3",
            "INSERT INTO {t} SELECT id, 'even' FROM range(20, 22, 1, 1)",
        ),
        partition_column="p",
    ),
    CorpusTable(
        "checkpoint_protection",
        "checkpointProtection with requireCheckpointProtectionBeforeVersion=4",
        (
            "CREATE TABLE {t} (id BIGINT) USING delta "
            + _props(
                "'delta.feature.checkpointProtection'='supported'",
                "'delta.requireCheckpointProtectionBeforeVersion'='4'",
            ),
            "INSERT INTO {t} SELECT id FROM range(0, 5, 1, 1)",
            "INSERT INTO {t} SELECT id FROM range(5, 10, 1, 1)",
            "DELETE FROM {t} WHERE id < 2",
            "INSERT OVERWRITE {t} SELECT id FROM range(0, 4, 1, 1)",
            "INSERT INTO {t} SELECT id FROM range(4, 6, 1, 1)",
        ),
    ),
    CorpusTable(
        "special_partitions",
        "partition values with a space, '=', '%', a quote, '/', unicode (escaped directory names)",
        (
            "CREATE TABLE {t} (id BIGINT, p STRING) USING delta PARTITIONED BY (p) "
            + _props(f"'delta.deletedFileRetentionDuration'='{SHORT_RETENTION}'"),
            "INSERT INTO {t} VALUES (1, 'a b'), (2, 'x=y'), (3, '100%'), (4, \"it's\"), "
            "(5, 'ünï ☃'), (6, 'a/b'), (7, 'plain')",
            "DELETE FROM {t} WHERE p = 'x=y'",
            "INSERT OVERWRITE {t} PARTITION (p = '100%') VALUES (30)",
            "INSERT INTO {t} VALUES (8, 'a b'), (9, 'x=y')",
        ),
        partition_column="p",
    ),
)
BY_NAME = {t.name: t for t in TABLES}


def sql_path(path: Path) -> str:
    """``delta.`<path>``` for a table directory (backticks in the path doubled)."""
    return "delta.`" + str(path).replace("`", "``") + "`"


def build_table(spark: Any, table: CorpusTable, root: Path) -> Path:
    """Write one corpus table under ``root`` with Delta (through ``spark``) and plant files.

    Args:
        spark: A Spark Connect session on the Delta server.
        table: The table to write.
        root: The corpus directory.

    Returns:
        The table's directory.
    """
    path = root / table.name
    for statement in table.statements:
        spark.sql(statement.format(t=sql_path(path))).collect()
    plant(path, partition_column=table.partition_column)
    return path


def build_corpus(
    spark: Any,
    root: Path,
    *,
    workers: int = 3,
    on_table: Callable[[str, float], None] | None = None,
) -> dict[str, Path]:
    """Write every corpus table under ``root``, a few tables at a time (one session).

    Args:
        spark: A Spark Connect session on the Delta server.
        root: An empty directory.
        workers: Tables written concurrently (the statements of one table run in order).
        on_table: Called with (name, seconds) after each table.

    Returns:
        Table name to directory.
    """

    def one(table: CorpusTable) -> Path:
        started = time.perf_counter()
        path = build_table(spark, table, root)
        if on_table is not None:
            on_table(table.name, time.perf_counter() - started)
        return path

    with ThreadPoolExecutor(max_workers=workers) as pool:
        paths = list(pool.map(one, TABLES))
    return {t.name: p for t, p in zip(TABLES, paths, strict=True)}


def _set_age(path: Path, age_s: float) -> None:
    when = time.time() - age_s
    os.utime(path, (when, when), follow_symlinks=False)


def _write(path: Path, age_s: float, data: bytes = b"untracked") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    _set_age(path, age_s)


def data_files(table: Path) -> list[Path]:
    """Every file and directory under ``table`` except ``_delta_log``'s content."""
    out = []
    for dirpath, dirnames, filenames in os.walk(table):
        if Path(dirpath) == table and "_delta_log" in dirnames:
            dirnames.remove("_delta_log")
        out += [Path(dirpath) / n for n in filenames + dirnames]
    return out


def plant(table: Path, *, partition_column: str | None = None) -> list[str]:
    """Add what VACUUM must tell apart, and backdate every data file.

    Every file Delta wrote outside ``_delta_log`` is made ``DATA_AGE_S`` old. Then:
    untracked files 30 days old at the top level and in the first partition directory (and in
    the first random-prefix directory of column-mapped tables); one 3 days old and one 1 day
    old (either side of a 48-hour table retention); a young one (now); hidden files and
    directories (``_tmp/x.parquet``, ``.hidden``, ``_tmp_dir/deep/y.parquet``, all old, never
    touched); an empty old directory at the top and an empty old partition-like directory.

    Args:
        table: The table directory.
        partition_column: The partition column, if any (where partition directories are).

    Returns:
        The relative paths planted.
    """
    for path in data_files(table):
        _set_age(path, DATA_AGE_S)
    subdirs = sorted(p for p in table.iterdir() if p.is_dir() and not p.name.startswith(("_", ".")))
    planted: dict[str, float] = {
        "untracked-old.parquet": 30 * DAY_S,
        "untracked-3d.parquet": 3 * DAY_S,
        "untracked-1d.parquet": 1 * DAY_S,
        "untracked-young.parquet": 0,
        "_tmp/x.parquet": 30 * DAY_S,
        "_tmp_dir/deep/y.parquet": 30 * DAY_S,
        ".hidden": 30 * DAY_S,
        ".hidden-dir/z.parquet": 30 * DAY_S,
    }
    if subdirs:  # a partition or random-prefix directory Delta wrote
        first = subdirs[0].name
        planted[f"{first}/untracked-old.parquet"] = 30 * DAY_S
        planted[f"{first}/.hidden-in-partition"] = 30 * DAY_S
        planted[f"{first}/_tmp/w.parquet"] = 30 * DAY_S
    for rel, age in planted.items():
        _write(table / rel, age)
    empty = ["empty-old-dir"]
    if partition_column is not None:
        empty.append(f"{partition_column}=never-written")
    for rel in empty:
        (table / rel).mkdir(parents=True, exist_ok=True)
        _set_age(table / rel, 30 * DAY_S)
    for rel in planted:  # their new parent directories are old too
        parent = (table / rel).parent
        while parent != table:
            _set_age(parent, 30 * DAY_S)
            parent = parent.parent
    return sorted(planted) + empty
