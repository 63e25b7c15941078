"""Nothing a post-hook shortcut keeps reaches what VACUUM protects or what log cleanup deletes.

The shortcuts kept on the post-hook's path (docs/design.md, "Shortcuts kept") keep facts beside
the table or decide from fewer reads than the table's log; what VACUUM protects and what log
cleanup deletes always come from the table's own log. Here every kept artifact is poisoned (a
history summary beside the table that lies, a summary file in the table's root) and every
shortcut's code made to fail when called at all; VACUUM's dry run and log cleanup's selection
are then exactly what they are without any of it. Were a shortcut consulted on either path,
its poisoned code raises and the test fails.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake

from python_ops.delta.state import version_checksum
from python_ops.maintenance.records import history_summary
from python_ops.ops.log_cleanup import cleanup_logs
from python_ops.ops.vacuum.run import vacuum

DAY_MS = 24 * 3600 * 1000
LATER_MS = int(time.time() * 1000) + 90 * DAY_MS  # everything expired by then

# every function that reads or writes what a shortcut keeps, and the post-hook's state of a
# table replayed from its build's commits instead of read from its snapshot
SHORTCUTS: tuple[Callable[..., Any], ...] = (
    history_summary.read_summary,
    history_summary.write_summary,
    history_summary.head_commit,
    version_checksum.replayed_checksum,
)


def _consulted(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("a shortcut was consulted")


def _poison_code(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every shortcut's code raises when called, wherever it was imported to."""
    for function in SHORTCUTS:
        monkeypatch.setattr(function, "__code__", _consulted.__code__)


def _table(root: Path) -> Path:
    """A table of five overwrites (four generations of removed files), a checkpoint after them,
    and one more commit; an untracked file too."""
    for i in range(5):
        rows = pa.table({"id": pa.array(range(i, i + 3), pa.int64())})
        write_deltalake(str(root), rows, mode="overwrite")
    DeltaTable(str(root)).create_checkpoint()
    write_deltalake(str(root), pa.table({"id": pa.array([99], pa.int64())}), mode="append")
    (root / "part-untracked.parquet").write_bytes(b"x" * 10)
    return root


def _selections(root: Path) -> tuple[list[str], list[str]]:
    """VACUUM's dry-run selection and log cleanup's, both as of ``LATER_MS``."""
    swept = vacuum(str(root), dry_run=True, now_ms=LATER_MS, audit=False)
    cleaned = cleanup_logs(
        str(root), dry_run=True, checkpoint_if_needed=False, now_ms=LATER_MS, audit=False
    )
    return sorted(f.path for f in swept.paths), sorted(f.path for f in cleaned.files)


def _poison_artifacts(root: Path) -> None:
    """What the shortcuts keep, written beside the table and lying about it."""
    lie = {"format": 1, "head": [0, 0, 0, 0, 0], "runs": [["m", "vacuum", str(root), "", 0, None]]}
    (root / history_summary.SUMMARY_NAME).write_text(json.dumps(lie))
    # a newer time on every artifact than on any data file: no age rule may select them
    os.utime(root / history_summary.SUMMARY_NAME)


def test_vacuum_and_log_cleanup_select_from_the_log_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _table(tmp_path / "t")
    swept, cleaned = _selections(root)
    assert swept  # removed files to select
    assert cleaned  # and expired commits
    _poison_artifacts(root)
    _poison_code(monkeypatch)
    assert _selections(root) == (swept, cleaned)  # and no shortcut was called
    assert all(history_summary.SUMMARY_NAME not in path for path in swept)


def test_the_poison_takes(monkeypatch: pytest.MonkeyPatch) -> None:
    from python_ops.maintenance.records import history  # imported there by name

    _poison_code(monkeypatch)

    for function in (*SHORTCUTS, history.read_summary, history.head_commit):
        with pytest.raises(AssertionError, match="consulted"):
            function()
