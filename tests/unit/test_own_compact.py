"""When delta-rs's post-commit hook would delete log files, compaction commits itself."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pyarrow as pa
from deltalake import DeltaTable, write_deltalake

from python_ops.delta.snapshot import read_snapshot
from python_ops.ops.optimize.own_compact import hook_would_clean

DAY_S = 86_400


def _table(path: Path, configuration: dict[str, str | None] | None = None) -> None:
    for i in range(4):
        write_deltalake(
            str(path), pa.table({"id": [i]}), mode="append", configuration=configuration
        )
    DeltaTable(str(path)).create_checkpoint()


def _age(path: Path, days: float) -> None:
    when = time.time() - days * DAY_S
    for p in (path / "_delta_log").iterdir():
        os.utime(p, (when, when))


def test_old_commits_before_a_checkpoint_would_be_cleaned(tmp_path: Path) -> None:
    _table(tmp_path / "t")
    assert not hook_would_clean(read_snapshot(str(tmp_path / "t")))  # all young
    _age(tmp_path / "t", 40)
    assert hook_would_clean(read_snapshot(str(tmp_path / "t")))
    # a day of margin before the 30-day retention: 29.5 days old counts as expired already
    _age(tmp_path / "t", 29.5)
    assert hook_would_clean(read_snapshot(str(tmp_path / "t")))


def test_no_checkpoint_or_cleanup_off_means_nothing_to_clean(tmp_path: Path) -> None:
    for i in range(3):
        write_deltalake(str(tmp_path / "n"), pa.table({"id": [i]}), mode="append")
    _age(tmp_path / "n", 40)
    assert not hook_would_clean(read_snapshot(str(tmp_path / "n")))
    _table(tmp_path / "off", {"delta.enableExpiredLogCleanup": "false"})
    _age(tmp_path / "off", 40)
    assert not hook_would_clean(read_snapshot(str(tmp_path / "off")))
    _table(tmp_path / "bad", {"delta.logRetentionDuration": "forever"})
    _age(tmp_path / "bad", 1)
    assert hook_would_clean(read_snapshot(str(tmp_path / "bad")))  # unparsable: safe path
