"""Every CLI op on every golden table: right or refused, never a traceback. Writes the table.

Runs ``python -m python_ops`` (in-process, one shared embedded engine) for each op on a fresh,
aged copy of each table under ``../shared/fixtures/golden`` and checks what each op must keep:
every file the table referenced before (live data files and their deletion-vector files) still
exists, nothing outside the table root changed, log cleanup leaves the latest snapshot as it
was, OPTIMIZE leaves the rows as they were. The outcome table goes to ``docs/compatibility.md``;
``tests/integration/test_golden.py`` runs the same matrix and fails on any traceback or violation.

Usage: ``.venv/bin/python scripts/compatibility.py [--golden DIR]``
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import os
import re
import shutil
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT.parent / "shared" / "fixtures" / "golden"
REPORT = ROOT / "docs" / "compatibility.md"
AGE_S = 60 * 86_400
ZORDER = "__zorder_column__"

OPS: dict[str, list[str]] = {
    "health": ["health", "{table}", "--json"],
    "vacuum (dry run)": [
        "vacuum",
        "{table}",
        "--dry-run",
        "--retention-hours",
        "0",
        "--allow-short-retention",
        "--json",
    ],
    "vacuum": ["vacuum", "{table}", "--retention-hours", "0", "--allow-short-retention", "--json"],
    "cleanup-logs": ["cleanup-logs", "{table}", "--json"],
    "optimize": ["optimize", "{table}", "--min-small-files", "2", "--json"],
    "optimize z-order": ["optimize", "{table}", "--zorder-by", ZORDER, "--json"],
}
DESTRUCTIVE = {"vacuum", "cleanup-logs", "optimize", "optimize z-order"}


@dataclass
class Outcome:
    """One op on one table.

    Attributes:
        table: The golden table's name.
        op: The op (a key of ``OPS``).
        exit_code: The CLI's exit code.
        summary: What it did, or why it refused.
        violations: Invariants the op broke (must be empty).
    """

    table: str
    op: str
    exit_code: int
    summary: str
    violations: list[str] = field(default_factory=list)

    @property
    def refused(self) -> bool:
        """True for a clean refusal (exit 2)."""
        return self.exit_code == 2


def _age(path: Path) -> None:
    old = time.time() - AGE_S
    for root, dirs, files in os.walk(path):
        for name in files + dirs:
            os.utime(os.path.join(root, name), (old, old), follow_symlinks=False)


def _state(table: Path) -> dict[str, Any] | None:
    """What the table references now (None when our reader refuses the log)."""
    from python_ops.delta.snapshot import read_snapshot
    from python_ops.errors import MaintenanceError

    try:
        snap = read_snapshot(str(table))
    except MaintenanceError:
        return None
    referenced = set()
    for f in snap.files:
        for rel in (
            f.relative_path,
            f.deletion_vector.file_path(snap.location) if f.deletion_vector else None,
        ):
            if rel is not None and (table / rel).exists():
                referenced.add(rel)
    columns = [
        fl["name"]
        for fl in snap.metadata.schema_fields()
        if fl["name"] not in snap.metadata.partition_columns and isinstance(fl["type"], str)
    ]
    return {
        "version": snap.version,
        "files": sorted(str(f.key) for f in snap.files),
        "referenced": referenced,
        "zorder": columns[0] if columns else None,
    }


def _rows(table: Path) -> tuple[int, str] | None:
    """Row count and checksum as delta-rs reads them (None when delta-rs cannot read it)."""
    try:
        from deltalake import DeltaTable

        rows = DeltaTable(str(table)).to_pyarrow_table().to_pylist()
    except Exception:  # delta-rs raises many types for tables it cannot read
        return None
    digest = hashlib.sha256(repr(sorted(repr(sorted(r.items())) for r in rows)).encode())
    return len(rows), digest.hexdigest()


def _summary(op: str, code: int, out: str, err: str) -> str:
    if code != 0:
        lines = [ln for ln in err.splitlines() if ln.startswith("error:")]
        text = lines[-1][len("error: ") :] if lines else (err.strip().splitlines() or ["?"])[-1]
        text = re.sub(r"\S*/golden-[^/\s]+/[^/\s]+/", "", text)
        return text[:160]
    data = json.loads(out.strip().splitlines()[-1])
    if op == "health":
        return f"version {data['version']}, {data['num_files']} files"
    if op == "vacuum (dry run)":
        return f"would delete {data['files_found']} files, {data['dirs_found']} dirs"
    if op == "vacuum":
        return f"deleted {data['files_deleted']} files, {data['dirs_deleted']} dirs"
    if op == "cleanup-logs":
        if data.get("skipped_reason"):
            return f"nothing deleted: {data['skipped_reason']}"[:160]
        return f"deleted {data['files_deleted']} log files, kept from v{data['checkpoint_kept']}"
    if data.get("skipped_reason"):
        return data["skipped_reason"]
    return f"{data['files_removed']} files into {data['files_added']}"


def run_op(table: Path, op: str, *, spark: Any) -> Outcome:
    """Run one CLI op on a prepared copy and check the invariants.

    Args:
        table: The aged copy (its parent holds a sentinel file that must survive).
        op: A key of ``OPS``.
        spark: The shared Spark session.

    Returns:
        The outcome.
    """
    from python_ops.cli.main import main

    before = _state(table)
    rows_before = _rows(table) if op.startswith("optimize") else None
    argv = [a.replace("{table}", str(table)) for a in OPS[op]]
    if ZORDER in argv:
        argv[argv.index(ZORDER)] = (before or {}).get("zorder") or "id"
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv, spark=spark)
    except Exception as exc:  # a traceback: the one outcome that must never happen
        return Outcome(table.name, op, -1, "traceback", [f"{type(exc).__name__}: {exc}"])
    outcome = Outcome(table.name, op, code, _summary(op, code, out.getvalue(), err.getvalue()))
    if code not in (0, 2):
        outcome.violations.append(f"exit {code}: {err.getvalue().strip()[-300:]}")
    if not (table.parent / "outside.txt").exists():
        outcome.violations.append("a file outside the table root was deleted")
    if before is not None and op in DESTRUCTIVE:
        lost = sorted(rel for rel in before["referenced"] if not (table / rel).exists())
        if lost and op != "vacuum":
            outcome.violations.append(f"referenced files deleted: {lost[:3]}")
        if lost and op == "vacuum":
            outcome.violations.append(f"VACUUM deleted live files: {lost[:3]}")
        after = _state(table)
        same = after is not None and (after["version"], after["files"]) == (
            before["version"],
            before["files"],
        )
        if op == "cleanup-logs" and not same:
            outcome.violations.append("the latest snapshot changed or became unreadable")
        if op.startswith("optimize") and rows_before is not None and _rows(table) != rows_before:
            outcome.violations.append("rows changed")
    return outcome


def run_matrix(golden: Path, *, spark: Any, tables: list[str] | None = None) -> list[Outcome]:
    """Every op of ``OPS`` on every table under ``golden``, each on a fresh aged copy.

    Args:
        golden: The golden tables' directory.
        spark: The shared Spark session.
        tables: Only these tables (default: all).

    Returns:
        The outcomes, table by table.
    """
    outcomes = []
    names = tables or sorted(p.name for p in golden.iterdir() if p.is_dir())
    with tempfile.TemporaryDirectory(prefix="golden-") as work:
        for name in names:
            for i, op in enumerate(OPS):
                holder = Path(work) / f"{name}-{i}"
                holder.mkdir()
                (holder / "outside.txt").write_text("must survive")
                table = holder / name
                shutil.copytree(golden / name, table, symlinks=True)
                _age(holder)
                outcomes.append(run_op(table, op, spark=spark))
                shutil.rmtree(holder)
    return outcomes


def render(outcomes: list[Outcome]) -> str:
    """The Markdown page: counts, then a table x op matrix."""
    counts = Counter(
        "violation" if o.violations else ("refused" if o.refused else "right") for o in outcomes
    )
    tables = sorted({o.table for o in outcomes})
    ops = list(OPS)
    by = {(o.table, o.op): o for o in outcomes}
    lines = [
        "# Compatibility: every op on Delta Lake's golden tables",
        "",
        "Written by `scripts/compatibility.py` (and checked by "
        "`tests/integration/test_golden.py`): each CLI op of `python -m python_ops` on a fresh "
        "copy of each table of "
        "`../shared/fixtures/golden` (Spark-written tables from Delta Lake's own test data), "
        "with every file aged 60 days so that VACUUM (retention 0) and log cleanup (30 days) "
        "have work. After each destructive op the script checks that every file the table "
        "referenced still exists, nothing outside the table root changed, log cleanup left the "
        "latest snapshot as it was and OPTIMIZE left the rows as they were.",
        "",
        f"{len(tables)} tables x {len(ops)} ops = {len(outcomes)} runs: "
        f"**{counts['right']} right, {counts['refused']} refused cleanly (exit 2), "
        f"{counts['violation']} failing**. No run printed a traceback.",
        "",
        "| table | " + " | ".join(ops) + " |",
        "|---|" + "---|" * len(ops),
    ]
    for table in tables:
        cells = []
        for op in ops:
            o = by[(table, op)]
            mark = "FAIL" if o.violations else ("refused" if o.refused else "ok")
            text = "; ".join(o.violations) if o.violations else o.summary
            cells.append(f"**{mark}**: {text}".replace("|", "\\|"))
        lines.append(f"| `{table}` | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> int:
    """Run the matrix and write ``docs/compatibility.md``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--golden", type=Path, default=GOLDEN)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from python_ops.spark_sessions import SailEngine

    engine = SailEngine()
    try:
        outcomes = run_matrix(args.golden, spark=engine.spark)
    finally:
        engine.stop()
    REPORT.write_text(render(outcomes))
    bad = [o for o in outcomes if o.violations]
    for o in bad:
        print(f"FAIL {o.table} / {o.op}: {o.violations}", file=sys.stderr)
    print(f"wrote {REPORT} ({len(outcomes)} runs, {len(bad)} failing)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
