"""VACUUM's selection in process (Arrow) and on Spark: the same answers, no engine unless asked."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from python_ops.delta.state.snapshot import read_snapshot
from python_ops.errors import ConfigError
from python_ops.ops.vacuum import protected_paths, vacuum
from python_ops.ops.vacuum.rule.selection import select_in_process, select_on_spark
from python_ops.ops.vacuum.sources.listing import list_visible
from python_ops.storage import open_storage
from tests.helpers.paths import ROOT
from tests.helpers.vacuum import age_everything, content, untracked

TABLES = [
    "delta-0.8.0-partitioned",
    "table-with-dv-small",
    "cdf-table",
    "table_with_column_mapping",
]


def _messy(table: Path) -> None:
    """Untracked files old and new, nested and at the root, an empty directory, hidden files."""
    untracked(table, "part-old-root.parquet", days=30)
    untracked(table, "part-new-root.parquet", days=0)
    untracked(table, "a/b/c/part-deep-old.parquet", days=30)
    untracked(table, "a/b/part-deep-new.parquet", days=0)
    untracked(table, "_hidden/part-x.parquet", days=30)
    untracked(table, ".staging/part-y.parquet", days=30)
    (table / "empty" / "inner").mkdir(parents=True)


@pytest.mark.parametrize("name", TABLES)
def test_in_process_and_spark_select_the_same_paths(fixture_table, sail_spark, name: str) -> None:
    table = fixture_table(name)
    age_everything(table, days=40)
    _messy(table)
    storage = open_storage(str(table))
    snapshot = read_snapshot(storage)
    selected = {}
    for hours in (1, 24 * 7, 24 * 60):
        cutoff = _now_ms() - hours * 3_600_000
        listing = list_visible(storage, partition_columns=snapshot.metadata.partition_columns)
        protected = protected_paths(snapshot, cutoff)
        in_process = select_in_process(listing.table(), protected, cutoff)
        on_spark = select_on_spark(sail_spark, listing.table(), protected, cutoff)
        assert in_process == on_spark, (name, hours)
        selected[hours] = {f.path for f in in_process}
    assert {"a/b/c/part-deep-old.parquet", "part-old-root.parquet", "empty"} <= selected[1]
    assert not selected[1] & {"part-new-root.parquet", "_hidden/part-x.parquet"}
    assert "part-old-root.parquet" not in selected[24 * 60]  # 30 days old, 60 days kept


def _now_ms() -> int:
    import time

    return int(time.time() * 1000)


def test_vacuum_on_either_engine_deletes_the_same_and_keeps_the_table(
    fixture_table, sail_spark
) -> None:
    results = {}
    for engine in ("in_process", "spark"):
        table = fixture_table("delta-0.8.0-partitioned")
        target = table.parent / f"t-{engine}"
        table.rename(target)
        age_everything(target, days=40)
        _messy(target)
        before = content(target)
        result = vacuum(
            str(target),
            spark=sail_spark,
            engine=engine,
            retention_hours=0,
            allow_short_retention=True,
            dry_run=False,
        )
        assert content(target) == before
        assert not (target / "a" / "b" / "c" / "part-deep-old.parquet").exists()
        assert (target / "_hidden" / "part-x.parquet").exists()
        results[engine] = sorted(f.path for f in result.paths)
    assert results["in_process"] == results["spark"]


def test_engine_choices_are_checked_before_anything_is_read(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="setting 'engine' has bad value 'gpu'"):
        vacuum(str(tmp_path / "missing"), engine="gpu")
    with pytest.raises(ConfigError, match="runs on a Spark session"):
        vacuum(str(tmp_path / "missing"), engine="spark")


def test_the_command_line_starts_no_engine_by_default(fixture_table) -> None:
    table = fixture_table("delta-0.8.0-partitioned")
    age_everything(table, days=40)
    untracked(table, "part-old-root.parquet", days=30)
    script = (
        "import sys, io, contextlib\n"
        "from python_ops.cli.main import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        f"    code = main(['vacuum', {str(table)!r}, '--dry-run', '--json'])\n"
        "print(code, 'pyspark' in sys.modules, out.getvalue())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, check=True
    )
    code, engine_loaded, payload = done.stdout.split(" ", 2)
    assert (code, engine_loaded) == ("0", "False")
    assert "part-old-root.parquet" in [p["path"] for p in json.loads(payload)["paths"]]
