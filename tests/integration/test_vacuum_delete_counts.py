"""VACUUM counts what it deleted, never what it tried: a file that could not be deleted is not.

The real command line in a subprocess on a copy of a shared fixture table, with one old
untracked file the filesystem refuses to delete (its directory read-only for a non-root user;
for root, which ignores directory modes, the file itself immutable, ``chattr +i``). Before the
fix the run exited 1 and named the file, but its progress line said ``deleted 3/3 files`` and
the partition's line counted the file as deleted.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.helpers.paths import ROOT
from tests.helpers.vacuum import age_everything, untracked

TABLE = "delta-0.8.0-partitioned"
STUCK = "year=2021/stuck.parquet"


def _python_ops(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "python_ops", *argv],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )


def _chattr(flag: str, path: Path) -> bool:
    chattr = shutil.which("chattr")
    if chattr is None:
        return False
    done = subprocess.run([chattr, flag, str(path)], capture_output=True, check=False)
    return done.returncode == 0


def _immutable_works(scratch: Path) -> bool:
    """Whether ``chattr +i`` really stops root deleting a file here."""
    probe = scratch / "probe"
    probe.write_bytes(b"x")
    if not _chattr("+i", probe):
        probe.unlink()
        return False
    try:
        probe.unlink()
    except PermissionError:
        return True
    finally:
        _chattr("-i", probe)
        probe.unlink(missing_ok=True)
    return False


@pytest.fixture
def undeletable(tmp_path: Path) -> Iterator[Callable[[Path], None]]:
    """``undeletable(file)``: the filesystem refuses to delete ``file`` until the test ends."""
    undo: list[Callable[[], None]] = []

    def make(path: Path) -> None:
        if os.geteuid() != 0:
            path.parent.chmod(0o555)
            undo.append(lambda: path.parent.chmod(0o755))
        elif _immutable_works(tmp_path):
            _chattr("+i", path)
            undo.append(lambda: _chattr("-i", path))
        else:
            pytest.skip("running as root where chattr +i does not stop a delete")

    yield make
    for step in undo:
        step()


def test_a_file_that_could_not_be_deleted_is_not_counted_as_deleted(
    fixture_table: Callable[[str], Path], undeletable: Callable[[Path], None]
) -> None:
    table = fixture_table(TABLE)
    age_everything(table, days=30)
    untracked(table, "year=2020/old-0.parquet", days=30, size=100)
    untracked(table, "year=2020/old-1.parquet", days=30, size=100)
    undeletable(untracked(table, STUCK, days=30, size=100))

    done = _python_ops("vacuum", str(table))

    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 paths could not be deleted: year=2021/stuck.parquet" in done.stdout, done.stdout
    assert "deleted 2 files (200 B) and 0 directories" in done.stdout, done.stdout
    lines = [line.strip() for line in done.stdout.splitlines()]
    assert "year=2020: 2 files (200 B), 0 dirs" in lines, done.stdout
    # was "year=2021: 1 file (100 B), 0 dirs" under "deleted"
    assert "year=2021: 0 files (0 B), 0 dirs; not deleted: 1 file (100 B), 0 dirs" in lines
    # was "vacuum <table>: deleted 3/3 files"
    assert "deleted 3/3 files" not in done.stderr, done.stderr
    assert f"vacuum {table}: deleted 2/3 files; 1 could not be deleted" in done.stderr
    assert (table / STUCK).exists()
    assert not (table / "year=2020/old-0.parquet").exists()


def test_the_json_result_counts_only_the_files_deleted(
    fixture_table: Callable[[str], Path], undeletable: Callable[[Path], None]
) -> None:
    table = fixture_table(TABLE)
    age_everything(table, days=30)
    untracked(table, "year=2020/old-0.parquet", days=30, size=100)
    undeletable(untracked(table, STUCK, days=30, size=100))

    done = _python_ops("vacuum", str(table), "--json")

    assert done.returncode == 1, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert (result["files_found"], result["files_deleted"], result["bytes_deleted"]) == (2, 1, 100)
    assert (result["delete_failures"], result["paths_not_deleted"]) == (1, [STUCK])
    assert "deleted 1/2 files; 1 could not be deleted" in done.stderr, done.stderr
