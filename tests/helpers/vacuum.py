"""Helpers for VACUUM tests: ageing files, adding untracked files, reading content."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

DAY_S = 24 * 3600


def age_everything(table: Path, *, days: float = 30) -> None:
    """Backdate every file and directory of a table copy (git does not keep mtimes)."""
    old = time.time() - days * DAY_S
    for root, dirs, files in os.walk(table):
        for name in files + dirs:
            os.utime(os.path.join(root, name), (old, old), follow_symlinks=False)


def untracked(table: Path, rel: str, *, days: float = 30, size: int = 100) -> Path:
    """Write a file no commit references (a failed job's leftover), aged ``days``."""
    path = table / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * size)
    old = time.time() - days * DAY_S
    os.utime(path, (old, old))
    return path


def content(table: Path, version: int | None = None) -> tuple[int, str]:
    """(row count, checksum of all rows) of a Delta table at a version, read by delta-rs."""
    from deltalake import DeltaTable

    from tests.helpers.table_digest import table_digest

    return table_digest(DeltaTable(str(table), version=version).to_pyarrow_table())


def engine_content(spark: Any, table: Path) -> tuple[int, str]:
    """(row count, checksum) at the latest version, read by the Spark engine (reads DVs)."""
    from tests.helpers.table_digest import table_digest

    return table_digest(spark.read.format("delta").load(str(table)).toArrow())


def selected_files(result: Any) -> set[str]:
    return {f.path for f in result.paths if not f.is_dir}


def selected_dirs(result: Any) -> set[str]:
    return {f.path for f in result.paths if f.is_dir}


def kill_when_marked(code: str, *args: str, marker: Path, cwd: Path) -> int:
    """Run ``python -c code *args marker``, SIGKILL it once it writes ``marker``; its return code.

    The child's progress hook writes the marker and then sleeps: the kill lands mid-run, after
    at least one chunk was deleted.
    """
    import signal
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-c", code, *args, str(marker)], cwd=cwd)
    try:
        deadline = time.monotonic() + 120
        while not marker.exists():
            assert proc.poll() is None, "the run ended before the hook"
            assert time.monotonic() < deadline, "the run never reached the hook"
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=60)
    return proc.returncode
