"""Helpers for the trust tests: run the CLI in-process, append commits, fingerprint a table."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

from python_ops.cli.main import main


def cli(argv: list[str], spark: Any) -> tuple[int, str, str]:
    """Run ``python -m python_ops`` in-process on the shared session: (exit code, out, err)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv, spark=spark)
    return code, out.getvalue(), err.getvalue()


def files_on_disk(table: Path) -> dict[str, int]:
    """Every file under the table (log included) with its size."""
    return {str(p.relative_to(table)): p.stat().st_size for p in table.rglob("*") if p.is_file()}


def latest_version(table: Path) -> int:
    return max(int(p.name[:20]) for p in (table / "_delta_log").glob("*.json"))


def append_commit(table: Path, *actions: dict[str, Any] | str) -> Path:
    """Write the next commit with these actions (dicts as JSON, strings as raw lines)."""
    version = latest_version(table) + 1
    info = {"commitInfo": {"timestamp": 1_700_000_000_000, "operation": "SET TBLPROPERTIES"}}
    lines = [json.dumps(info)] + [a if isinstance(a, str) else json.dumps(a) for a in actions]
    path = table / "_delta_log" / f"{version:020d}.json"
    path.write_text("\n".join(lines) + "\n")
    return path
