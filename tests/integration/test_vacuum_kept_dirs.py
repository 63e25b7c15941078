"""A selected directory that is not empty when its turn comes is kept, not a failure (issue 25/4).

A partition directory a writer is filling right now holds only young files, so the counting
rule selects it and the non-recursive delete cannot remove it: the CLI exits 0 and every report
(text, JSON, the audit record) names the directory as kept and why. A file that cannot be
deleted stays a failure, named by path. Real tables (copies of the shared fixtures), the real
command line in a subprocess, the real local storage.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from python_ops.cli.render import vacuum_text
from python_ops.ops.vacuum import vacuum
from tests.helpers.paths import ROOT
from tests.helpers.vacuum import DAY_S, age_everything, untracked

TABLE = "delta-0.8.0-partitioned"
EMPTY = "year=2019"  # an old, empty partition directory: selected by the counting rule


def _python_ops(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "python_ops", *argv],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )


def _old_empty_dir(table: Path) -> Path:
    age_everything(table, days=30)
    d = table / EMPTY
    d.mkdir()
    old = time.time() - 30 * DAY_S
    os.utime(d, (old, old))
    return d


def test_a_directory_filled_between_dry_and_real_run_is_kept_and_the_cli_exits_0(
    fixture_table, tmp_path: Path
) -> None:
    table = fixture_table(TABLE)
    empty = _old_empty_dir(table)
    untracked(table, "year=2020/leftover.parquet", days=30, size=700)

    dry = _python_ops("vacuum", str(table), "--dry-run", "--json")
    assert dry.returncode == 0, dry.stderr
    selected = {p["path"]: p["is_dir"] for p in json.loads(dry.stdout)["paths"]}
    assert selected == {EMPTY: True, "year=2020/leftover.parquet": False}

    (empty / "part-00000-new.parquet").write_bytes(b"x" * 10)  # a writer starts filling it
    audit = tmp_path / "audit.jsonl"
    real = _python_ops("vacuum", str(table), "--audit-log", str(audit))

    assert real.returncode == 0, real.stdout + real.stderr  # was 1: "1 paths could not be ..."
    assert "could not be deleted" not in real.stdout
    assert (
        f"kept directory {EMPTY}: not empty: holds {EMPTY}/part-00000-new.parquet "
        "(modified after the cutoff: a writer may be filling it)"
    ) in real.stdout, real.stdout
    assert "deleted 1 file (700 B) and 0 directories" in real.stdout
    assert (empty / "part-00000-new.parquet").exists()
    assert not (table / "year=2020/leftover.parquet").exists()

    (record,) = [json.loads(line) for line in audit.read_text().splitlines()]
    assert record["status"] == "succeeded"
    assert record["delete_failures"] == 0
    assert record["dirs_kept"] == [
        {
            "path": EMPTY,
            "reason": f"not empty: holds {EMPTY}/part-00000-new.parquet (modified after the "
            "cutoff: a writer may be filling it)",
        }
    ]

    again = _python_ops("vacuum", str(table), "--json")  # JSON output says the same
    assert again.returncode == 0, again.stderr
    result = json.loads(again.stdout)
    assert [k["path"] for k in result["dirs_kept"]] == [EMPTY]
    assert (result["dirs_deleted"], result["delete_failures"]) == (0, 0)


def test_a_file_appearing_after_the_listing_keeps_its_directory(fixture_table) -> None:
    table = fixture_table(TABLE)
    empty = _old_empty_dir(table)
    untracked(table, "year=2020/leftover.parquet", days=30)

    def plant(done: int, total: int) -> None:  # files are done, directories come next
        untracked(table, f"{EMPTY}/late.parquet", days=30)  # old, but never listed

    result = vacuum(str(table), dry_run=False, on_progress=plant, progress_interval_s=0)

    assert [(k.path, k.reason) for k in result.dirs_kept] == [
        (
            EMPTY,
            f"not empty: holds {EMPTY}/late.parquet (not in the listing: it appeared after the "
            "listing)",
        )
    ]
    assert (result.dirs_found, result.dirs_deleted, result.delete_failures) == (1, 0, 0)
    assert (empty / "late.parquet").exists()


def test_a_file_that_cannot_be_deleted_is_a_failure_named_by_path(fixture_table) -> None:
    table = fixture_table(TABLE)
    age_everything(table, days=30)
    untracked(table, "year=2020/a.parquet", days=30)
    untracked(table, "year=2020/b.parquet", days=30)

    def block(done: int, total: int) -> None:  # after a.parquet: b.parquet becomes a directory
        target = table / "year=2020/b.parquet"
        if target.is_file():
            target.unlink()
            target.mkdir()

    result = vacuum(
        str(table), dry_run=False, max_workers=1, on_progress=block, progress_interval_s=0
    )

    assert result.delete_failures == 1
    assert result.paths_not_deleted == ("year=2020/b.parquet",)
    assert result.dirs_kept == ()
    text = vacuum_text(result, policy="test")
    assert "1 paths could not be deleted: year=2020/b.parquet" in text
    shutil.rmtree(table / "year=2020/b.parquet")
