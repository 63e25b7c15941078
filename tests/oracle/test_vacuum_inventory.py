"""VACUUM from an inventory report, held against Delta 4.4's ``VACUUM ... USING INVENTORY``.

A partitioned table Delta wrote (appends, an overwrite: removed files), untracked leftovers of
a failed job, everything aged 30 days; an inventory report of the table's storage as a cloud
writes one (every object, files only, ``file:`` URIs, the log included) plus an object outside
the table. Our selection from the report is Delta's from the same report, and the listing's;
the real run deletes it and Delta reads the same rows.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from python_ops.errors import ConfigError
from python_ops.ops.vacuum import vacuum
from tests.helpers.delta_reads import oracle, table_sql
from tests.helpers.vacuum import age_everything, untracked
from tests.oracle.runs import delta_relative

pytestmark = [pytest.mark.classic_spark, pytest.mark.delta_jars]


def inventory_of(root: Path, report: Path, *, extra: list[Path]) -> None:
    """A Parquet inventory report of every file under ``root`` (and ``extra``), as S3's."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    files = [Path(d) / f for d, _, names in os.walk(root) for f in names] + extra
    pq.write_table(
        pa.table(
            {
                "path": pa.array([f"file:{p}" for p in files], pa.string()),
                "length": pa.array([p.stat().st_size for p in files], pa.int64()),
                "isDir": pa.array([False] * len(files), pa.bool_()),
                "modificationTime": pa.array(
                    [int(p.stat().st_mtime * 1000) for p in files], pa.int64()
                ),
            }
        ),
        report,
    )


@pytest.fixture
def table(tmp_path: Path, oracle_spark: Any) -> tuple[Path, Path, Path]:
    """(table, its inventory report, a file outside the table that the report names)."""
    table = tmp_path / "lake" / "events"
    name = table_sql(table)
    oracle_spark.sql(
        f"CREATE TABLE {name} (id BIGINT, day STRING) USING delta PARTITIONED BY (day)"
    ).collect()
    for i in range(3):
        oracle_spark.sql(
            f"INSERT INTO {name} SELECT id, concat('2024-01-0', cast(id % 3 + 1 AS string)) "
            f"FROM range({i * 100}, {(i + 1) * 100})"
        ).collect()
    oracle_spark.sql(f"INSERT OVERWRITE {name} SELECT * FROM {name} WHERE id % 2 = 0").collect()
    untracked(table, "day=2024-01-01/part-00000-failed-job.snappy.parquet")
    untracked(table, "part-00001-failed-job.snappy.parquet")
    outside = untracked(tmp_path / "lake", "not-this-table/part-00002.parquet")
    age_everything(table)
    report = tmp_path / "inventory.parquet"
    inventory_of(table, report, extra=[outside])
    return table, report, outside


def test_our_selection_from_an_inventory_is_delta_s(
    table: tuple[Path, Path, Path], oracle_spark: Any
) -> None:
    path, report, outside = table
    ours = vacuum(
        str(path),
        inventory=str(report),
        retention_hours=1,
        allow_short_retention=True,
        dry_run=True,
        audit=False,
    )
    query = f"SELECT * FROM parquet.`{report}`"
    rows = oracle_spark.sql(
        f"VACUUM {table_sql(path)} USING INVENTORY ({query}) RETAIN 1 HOURS DRY RUN"
    ).collect()
    theirs = {delta_relative(path, str(r[0])) for r in rows}
    listed = vacuum(
        str(path), retention_hours=1, allow_short_retention=True, dry_run=True, audit=False
    )

    selected = {f.path for f in ours.paths}
    assert selected == theirs
    # as Delta: from an inventory, hidden files inside partition directories (the Hadoop
    # checksums Delta's writer leaves) are candidates too; a listing never sees them
    checksums = {p for p in selected if p.rpartition("/")[2].startswith(".")}
    assert checksums
    assert selected - checksums == {f.path for f in listed.paths if not f.is_dir}
    assert "part-00001-failed-job.snappy.parquet" in selected
    assert ours.files_found >= 2 + 3  # the leftovers and the overwritten files
    assert ours.mode == "full"
    assert outside.exists()


def test_the_real_run_deletes_the_selection_and_delta_reads_the_same_rows(
    table: tuple[Path, Path, Path], oracle_spark: Any
) -> None:
    path, report, outside = table
    before = oracle(oracle_spark, path)
    done = vacuum(
        str(path),
        inventory=str(report),
        retention_hours=1,
        allow_short_retention=True,
        dry_run=False,
        audit=False,
    )
    assert done.files_deleted == done.files_found > 0
    assert not any((path / f.path).exists() for f in done.paths)
    assert outside.exists()  # named by the report, outside the table: never touched
    assert oracle(oracle_spark, path) == before


def test_a_report_without_delta_s_inventory_columns_is_refused(
    table: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path, _, _ = table
    bad = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"key": ["a"], "size": pa.array([1], pa.int64())}), bad)
    with pytest.raises(ConfigError, match=r"lacks Delta's inventory columns.*path string"):
        vacuum(str(path), inventory=str(bad), dry_run=True, audit=False)
    with pytest.raises(ConfigError, match="not with mode lite"):
        vacuum(str(path), inventory=str(bad), mode="lite", dry_run=True, audit=False)


def test_a_report_older_than_the_cutoff_or_of_another_place_is_refused(
    table: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    path, report, _ = table
    before = sorted(p for p in path.rglob("*"))
    then = time.time() - 3 * 3600  # written 3 h ago; the cutoff is 1 h ago
    os.utime(report, (then, then))
    with pytest.raises(ConfigError, match=r"written .* UTC, before the retention cutoff"):
        vacuum(
            str(path),
            inventory=str(report),
            retention_hours=1,
            allow_short_retention=True,
            dry_run=False,
            audit=False,
        )
    elsewhere = tmp_path / "elsewhere.parquet"
    inventory_of(tmp_path / "lake" / "not-this-table", elsewhere, extra=[])
    with pytest.raises(ConfigError, match="has no entry under the table root"):
        vacuum(
            str(path),
            inventory=str(elsewhere),
            retention_hours=1,
            allow_short_retention=True,
            dry_run=False,
            audit=False,
        )
    assert sorted(p for p in path.rglob("*")) == before
