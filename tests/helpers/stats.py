"""Helpers of the statistics op's tests: tables without statistics, their log's add actions."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.helpers.paths import ROOT


def log_versions(table: Path) -> list[int]:
    """The commit versions in the table's log."""
    return sorted(int(p.name[:20]) for p in (table / "_delta_log").glob("*.json"))


def strip_stats(table: Path) -> int:
    """Remove ``stats`` from every ``add`` of every commit (a table of a writer that kept none).

    Returns:
        The number of ``add`` actions changed.
    """
    changed = 0
    for path in sorted((table / "_delta_log").glob("*.json")):
        actions = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        for action in actions:
            if "add" in action and action["add"].pop("stats", None) is not None:
                changed += 1
        path.write_text("".join(json.dumps(a) + "\n" for a in actions))
        # Hadoop's checksum of the old bytes, and Delta's version checksum (it may hold files)
        (path.parent / f".{path.name}.crc").unlink(missing_ok=True)
        path.with_suffix(".crc").unlink(missing_ok=True)
    return changed


def commit(table: Path, version: int) -> list[dict[str, Any]]:
    """The actions of one commit."""
    text = (table / "_delta_log" / f"{version:020d}.json").read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def live_adds(table: Path) -> dict[str, dict[str, Any]]:
    """The newest ``add`` action of every path still live (JSON commits only), by path."""
    live: dict[str, dict[str, Any]] = {}
    for version in log_versions(table):
        for action in commit(table, version):
            if "add" in action:
                live[action["add"]["path"]] = action["add"]
            elif "remove" in action:
                live.pop(action["remove"]["path"], None)
    return live


def data_files(table: Path) -> dict[str, tuple[str, int]]:
    """Every data file's content hash and modification time (ns), by path."""
    out = {}
    for p in table.rglob("*.parquet"):
        if "_delta_log" not in p.parts:
            digest = hashlib.sha256(p.read_bytes()).hexdigest()
            out[str(p.relative_to(table))] = (digest, p.stat().st_mtime_ns)
    return out


def run_stats(table: Path | str, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m python_ops stats <table> *args`` in a process of its own (a path or URI)."""
    return subprocess.run(
        [sys.executable, "-m", "python_ops", "stats", str(table), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )


def parsed(stats: str) -> Any:
    """A stats string parsed with exact numbers (``1.0E10`` equals ``10000000000.0``)."""
    from decimal import Decimal

    return json.loads(stats, parse_float=Decimal)


def partitioned_with_checkpoint(location: Path) -> None:
    """A delta-rs table partitioned by ``p`` (one partition null), no stats, a checkpoint last.

    Three files with disjoint ``id`` ranges; the checkpoint holds their ``add`` actions, so the
    statistics op copies them from the checkpoint's rows, not from JSON commits.
    """
    import pyarrow as pa
    from deltalake import DeltaTable, write_deltalake

    for b in range(3):
        rows = pa.table(
            {
                "id": pa.array(range(b * 10, b * 10 + 10), pa.int64()),
                "p": pa.array(["x" if b else None] * 10, pa.string()),
            }
        )
        write_deltalake(str(location), rows, mode="append", partition_by=["p"])
    strip_stats(location)
    DeltaTable(str(location)).create_checkpoint()
