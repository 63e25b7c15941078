"""OPTIMIZE of a table whose live file is gone refuses before it writes (issue 65 item 12).

A missing input in the second partition used to let the first partition commit, then read
"committed version(s) 4, then failed: ... (nothing was committed)": both at once, after the
table changed. Every planned input is now looked for in storage before anything is written; a
failure after a partition did commit (an unreadable file) says what committed, never "nothing".
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake

from python_ops.cli.main import main
from python_ops.errors import ChangedThenFailedError, LiveFilesMissingError
from python_ops.ops.optimize.execute import optimize


def _two_partitions(path: Path) -> Path:
    """Four one-row appends into each of p=a and p=b (delta-rs): versions 0..3."""
    for i in range(4):
        rows = pa.table({"id": [i, i + 10], "p": ["a", "b"]})
        write_deltalake(str(path), rows, mode="append", partition_by=["p"])
    return path


def _a_file_of(table: Path, partition: str) -> Path:
    return sorted((table / partition).glob("*.parquet"))[0]


def _data_files(table: Path) -> set[str]:
    return {str(p.relative_to(table)) for p in table.rglob("*.parquet")}


def test_a_missing_live_file_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    table = _two_partitions(tmp_path / "t")
    gone = _a_file_of(table, "p=b")
    gone.unlink()
    files_before = _data_files(table)
    with pytest.raises(LiveFilesMissingError) as refused:
        optimize(str(table), min_small_files=2)
    assert str(refused.value) == (
        f"OPTIMIZE of {table} refused: 1 live data file(s) the table's log references are "
        f"missing from storage: 'p=b/{gone.name}'. Restore them before rewriting the table. "
        "Nothing was written or committed."
    )
    assert DeltaTable(str(table)).version() == 3  # no commit, not even p=a's
    assert _data_files(table) == files_before  # no file written


def test_the_command_line_refuses_it_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = _two_partitions(tmp_path / "t")
    gone = _a_file_of(table, "p=b")
    gone.unlink()
    assert main(["optimize", str(table), "--min-small-files", "2"]) == 2
    err = capsys.readouterr().err
    assert f"error: OPTIMIZE of {table} refused: 1 live data file(s)" in err
    assert f"'p=b/{gone.name}'" in err
    assert "committed version" not in err
    assert DeltaTable(str(table)).version() == 3


def test_a_failure_after_a_commit_says_what_committed(tmp_path: Path) -> None:
    """An input that exists but is not Parquet is found only when read: p=a has committed."""
    table = _two_partitions(tmp_path / "t")
    broken = _a_file_of(table, "p=b")
    broken.write_bytes(b"not parquet")
    with pytest.raises(ChangedThenFailedError) as failed:
        optimize(str(table), min_small_files=2)
    message = str(failed.value)
    assert message.startswith(f"OPTIMIZE of {table} committed version(s) 4, then failed: ")
    assert f"live data file 'p=b/{broken.name}' cannot be read as Parquet" in message
    assert message.endswith("; this partition was not committed")
    assert "nothing was committed" not in message
    assert DeltaTable(str(table)).version() == 4
