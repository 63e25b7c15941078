"""Every op on every golden table, held against its invariants and against Delta Lake 4.4.

Tables are the directories holding a ``_delta_log`` at any depth under
``../shared/fixtures/golden`` (``data-reader-date-types-Asia/Beirut``); a top-level directory
with none is "not a table" and counted apart.

Part 1 runs ``python -m python_ops`` (in-process, one shared embedded engine) for each op on a
fresh, aged copy of each table and checks what each op must keep: every file the table
referenced before (live data files and their deletion-vector files) still exists, nothing outside
the table root changed, log cleanup leaves the latest snapshot as it was, OPTIMIZE leaves the
rows as they were. ``tests/integration/test_golden.py`` runs the same matrix and fails on any
traceback or violation, or when part 1 of ``docs/compatibility.md`` is stale.

Part 2 holds VACUUM and log cleanup against Delta Lake 4.4's own (a JVM Spark Connect server
with the project's Delta jars, ``tests/oracle/runs.py``): per table and op, right against Delta,
refused (and why; a gap when Delta handles the table), wrong, or not a table / Delta refuses too.
``tests/oracle`` asserts the same comparisons.

Usage: ``.venv/bin/python scripts/compatibility.py [--golden DIR] [--no-delta]``
"""

from __future__ import annotations

import argparse
import contextlib
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
# the test fixtures' folder (docs/development.md#test-fixtures): SPARKDELTA_FIXTURES, else
# shared/fixtures beside the checkout
GOLDEN = Path(os.environ.get("SPARKDELTA_FIXTURES", ROOT.parent / "shared" / "fixtures")) / "golden"
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
        not_a_table: The directory has no ``_delta_log`` at any depth.
    """

    table: str
    op: str
    exit_code: int
    summary: str
    violations: list[str] = field(default_factory=list)
    not_a_table: bool = False

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
    from python_ops.delta.state.snapshot import read_snapshot
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
    from tests.helpers.table_digest import table_digest

    try:
        from deltalake import DeltaTable

        read = DeltaTable(str(table)).to_pyarrow_table()
    except Exception:  # delta-rs raises many types for tables it cannot read
        return None
    return table_digest(read)


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


def golden_cases(golden: Path) -> list[Any]:
    """The tables under ``golden`` (``_delta_log`` at any depth) and the directories with none."""
    from tests.oracle.runs import find_cases

    return find_cases("golden", golden)


def _name(case: Any) -> str:
    return str(case.id).removeprefix("golden/")


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
    cases = [c for c in golden_cases(golden) if tables is None or _name(c) in tables]
    with tempfile.TemporaryDirectory(prefix="golden-") as work:
        for n, case in enumerate(cases):
            for i, op in enumerate(OPS):
                holder = Path(work) / f"{n}-{i}"
                holder.mkdir()
                (holder / "outside.txt").write_text("must survive")
                table = holder / case.path.name
                shutil.copytree(case.path, table, symlinks=True)
                _age(holder)
                outcome = run_op(table, op, spark=spark)
                outcome.table = _name(case)
                outcome.not_a_table = not case.is_table
                outcomes.append(outcome)
                shutil.rmtree(holder)
    return outcomes


ORACLE_OPS = (
    "vacuum dry run, table retention",
    "vacuum dry run, zero",
    "vacuum, zero",
    "cleanup-logs",
)


@dataclass
class OracleOutcome:
    """One op on one table, against Delta.

    Attributes:
        table: The table (relative to the golden directory).
        op: A key of ``ORACLE_OPS``.
        verdict: ``right``, ``refused`` (Delta handles it: a gap), ``wrong``, ``not a table``,
            ``both refuse`` (Delta refuses too), ``Delta refuses`` (we ran).
        detail: Why (refusal message, difference, Delta's error).
    """

    table: str
    op: str
    verdict: str
    detail: str = ""


def _short(text: str | None) -> str:
    text = re.sub(r"\S*/(vacuum|log)-oracle-[^/\s]+/\S+?/[ab]/", "", text or "")
    return text[:160]


def _log_verdict(log: Any) -> tuple[str, str]:
    """(verdict, detail) of one log cleanup check (``tests.oracle.runs.LogCheck``)."""
    if not log.is_table:
        return "not a table", _short(log.ours_refused)
    if log.ours_refused and log.delta_refused:
        return "both refuse", _short(log.delta_refused)
    if log.ours_refused:
        return "refused", _short(log.ours_refused)
    if log.wrong:
        return "wrong", "; ".join(log.wrong)
    if log.delta_refused:
        return "Delta refuses", _short(log.delta_refused)
    ours, theirs = len(log.ours_deleted), len(log.delta_deleted)
    note = f"{log.skipped_reason}; " if log.skipped_reason else ""
    return "right", _short(f"{note}we deleted {ours} log files, Delta {theirs}")


def run_oracle(golden: Path, *, spark: Any, workers: int = 3) -> list[OracleOutcome]:
    """VACUUM and log cleanup on every case under ``golden``, ours against Delta's.

    Args:
        golden: The golden tables' directory.
        spark: A Spark Connect session on a Delta server, retention checks off.
        workers: Tables compared concurrently.

    Returns:
        The outcomes, table by table.
    """
    from concurrent.futures import ThreadPoolExecutor

    from tests.oracle.runs import check_log_cleanup, compare_vacuum, vacuum_differences

    cases = golden_cases(golden)
    work = Path(tempfile.mkdtemp(prefix="vacuum-oracle-"))

    def one(index_case: tuple[int, Any]) -> list[OracleOutcome]:
        index, case = index_case
        scratch = work / str(index)
        (scratch / "v").mkdir(parents=True)
        (scratch / "l").mkdir()
        name = _name(case)
        try:
            c = compare_vacuum(spark, case, scratch / "v")
            log = check_log_cleanup(spark, case, scratch / "l")
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        out = []
        diffs = vacuum_differences(c) if c.verdict == "compared" else {}
        for op, key in zip(
            ORACLE_OPS[:3], ("at table retention", "at zero", "real run"), strict=True
        ):
            if c.verdict == "compared":
                verdict, detail = ("wrong", diffs[key]) if key in diffs else ("right", "")
            elif c.verdict == "refused":
                verdict, detail = "refused", _short(c.ours_refused)
            elif c.verdict == "delta refuses":
                verdict, detail = "Delta refuses", _short(c.delta_refused)
            else:
                verdict, detail = c.verdict, _short(c.delta_refused)
            out.append(OracleOutcome(name, op, verdict, detail))
        out.append(OracleOutcome(name, ORACLE_OPS[3], *_log_verdict(log)))
        return out

    try:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return [o for group in pool.map(one, enumerate(cases)) for o in group]
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _kind(o: Outcome) -> str:
    if o.violations:
        return "violation"
    if o.not_a_table:
        return "not a table"
    return "refused" if o.refused else "right"


def render(outcomes: list[Outcome]) -> str:
    """Part 1 of the Markdown page: counts, then a table x op matrix."""
    counts = Counter(_kind(o) for o in outcomes)
    tables = sorted({o.table for o in outcomes})
    not_tables = sorted({o.table for o in outcomes if o.not_a_table})
    ops = list(OPS)
    by = {(o.table, o.op): o for o in outcomes}
    lines = [
        "# Compatibility: every op on Delta Lake's golden tables",
        "",
        "Written by `scripts/compatibility.py` (and checked by "
        "`tests/integration/test_golden.py`): each CLI op of `python -m python_ops` on a fresh "
        "copy of each of Delta Lake's golden tables (the Spark-written tables of delta-io/delta's "
        "`connectors/golden-tables`, not part of this repository: copy them into a folder and "
        "pass `--golden DIR`; by default the script reads `golden/` of the test fixtures "
        "folder, see [development.md](development.md#test-fixtures)), "
        "with every file aged 60 days so that VACUUM (retention 0) and log cleanup (30 days) "
        "have work. After each destructive op the script checks that every file the table "
        "referenced still exists, nothing outside the table root changed, log cleanup left the "
        "latest snapshot as it was and OPTIMIZE left the rows as they were.",
        "",
        "Tables are the directories holding a `_delta_log` at any depth (so "
        "`data-reader-date-types-Asia/Beirut` is one); directories with none are not tables "
        "and are counted apart.",
        "",
        f"{len(tables) - len(not_tables)} tables + {len(not_tables)} not a table x "
        f"{len(ops)} ops = {len(outcomes)} runs: "
        f"**{counts['right']} right, {counts['refused']} refused cleanly (exit 2), "
        f"{counts['violation']} failing**; {counts['not a table']} runs on directories that are "
        "not a table (each refused cleanly). No run printed a traceback.",
        "",
        "| table | " + " | ".join(ops) + " |",
        "|---|" + "---|" * len(ops),
    ]
    for table in tables:
        cells = []
        for op in ops:
            o = by[(table, op)]
            mark = {"violation": "FAIL", "not a table": "not a table", "refused": "refused"}.get(
                _kind(o), "ok"
            )
            text = "; ".join(o.violations) if o.violations else o.summary
            cells.append(f"**{mark}**: {text}".replace("|", "\\|"))
        lines.append(f"| `{table}` | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


ORACLE_MARKS = {
    "right": "right",
    "refused": "refused",
    "wrong": "WRONG",
    "not a table": "not a table",
    "both refuse": "Delta refuses too",
    "Delta refuses": "Delta refuses",
}


def render_oracle(outcomes: list[OracleOutcome]) -> str:
    """Part 2 of the Markdown page: VACUUM and log cleanup against Delta, counts then a matrix."""
    counts = Counter(o.verdict for o in outcomes)
    tables = sorted({o.table for o in outcomes})
    by = {(o.table, o.op): o for o in outcomes}
    gaps = sorted({o.table for o in outcomes if o.verdict == "refused"})
    lines = [
        "## Against Delta Lake 4.4: VACUUM and log cleanup",
        "",
        "Written by `scripts/compatibility.py` with Delta Lake 4.4 (delta-spark 4.4.0 on a local "
        "Spark Connect server, the project's pinned jars) as the oracle; the same comparisons "
        "are asserted by `tests/oracle/` (also on a corpus of tables Delta 4.4 writes in the "
        "test session, one per feature). Each table is copied twice with every file aged 60 "
        "days. VACUUM: our dry run must select exactly the paths Delta's `VACUUM ... DRY RUN` "
        "lists (files and directories), at the table's own retention and at `RETAIN 0 HOURS` "
        "(check off); after our real run at zero on one copy and Delta's on the other the same "
        "files and directories must be left, `_delta_log` aside (Delta commits there) and "
        "except the hidden `.<name>.crc` checksums Hadoop's local file system deletes with each "
        "file (we never touch hidden files). Log cleanup: ours (default 30 days) must delete "
        "only files Delta's own cleanup (an ALTER that sets a 30-day log retention and "
        "checkpoints) deletes too, never the checksum of a kept file, and Delta must read every "
        "version from the oldest we kept with the rows it read before.",
        "",
        f"{len(tables)} tables x {len(ORACLE_OPS)} ops = {len(outcomes)} comparisons: "
        f"**{counts['right']} right, {counts['refused']} refused where Delta works (gaps), "
        f"{counts['wrong']} wrong**; counted apart: {counts['not a table']} on directories "
        f"that are not a table, {counts['both refuse']} where Delta refuses too, "
        f"{counts['Delta refuses']} where Delta refuses and we ran.",
        "",
        "Tables we refuse although Delta handles them (gaps): "
        + (", ".join(f"`{t}`" for t in gaps) or "none")
        + ".",
        "",
        "| table | " + " | ".join(ORACLE_OPS) + " |",
        "|---|" + "---|" * len(ORACLE_OPS),
    ]
    for table in tables:
        cells = []
        for op in ORACLE_OPS:
            o = by[(table, op)]
            text = f"**{ORACLE_MARKS[o.verdict]}**" + (f": {o.detail}" if o.detail else "")
            cells.append(text.replace("|", "\\|"))
        lines.append(f"| `{table}` | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def delta_session(workdir: Path) -> tuple[Any, Any]:
    """A Delta 4.4 Spark Connect server and a session on it with the retention checks off."""
    from pyspark.sql import SparkSession

    from tests.helpers.spark_servers import start_connect_server

    server = start_connect_server(workdir)
    spark = SparkSession.builder.remote(f"sc://127.0.0.1:{server.port}").create()
    spark.conf.set("spark.databricks.delta.retentionDurationCheck.enabled", "false")
    spark.conf.set(
        "spark.databricks.delta.vacuum.enforceTimeTravelWithinDeletedFileRetentionDuration", "false"
    )
    return server, spark


#: Part 3 of the page, the differential campaign's results (``bench/fuzz_campaign.py``), is
#: written from the campaign's own report (``campaign_section``) and kept as it is here.
CAMPAIGN_HEADING = "## Mixed writers: the differential campaign"


def kept_campaign_section() -> str:
    """Part 3 of the page as it is now ('' when there is none)."""
    old = REPORT.read_text() if REPORT.exists() else ""
    return "\n" + old[old.index(CAMPAIGN_HEADING) :] if CAMPAIGN_HEADING in old else ""


def main() -> int:
    """Run the matrix (and the Delta comparison) and write ``docs/compatibility.md``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--golden", type=Path, default=GOLDEN)
    parser.add_argument(
        "--no-delta", action="store_true", help="part 1 only (keeps part 2 of the page as it is)"
    )
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from python_ops.spark_sessions import SailEngine

    engine = SailEngine()
    try:
        outcomes = run_matrix(args.golden, spark=engine.spark)
    finally:
        engine.stop()
    page = render(outcomes)
    oracle: list[OracleOutcome] = []
    if args.no_delta:
        old = REPORT.read_text() if REPORT.exists() else ""
        marker = "## Against Delta Lake 4.4"
        if marker in old:
            end = old.index(CAMPAIGN_HEADING) if CAMPAIGN_HEADING in old else len(old)
            page += "\n" + old[old.index(marker) : end].rstrip("\n") + "\n"
    else:
        with tempfile.TemporaryDirectory(prefix="delta-server-") as workdir:
            server, spark = delta_session(Path(workdir))
            try:
                oracle = run_oracle(args.golden, spark=spark)
            finally:
                spark.stop()
                server.stop()
        page += "\n" + render_oracle(oracle)
    REPORT.write_text(page + kept_campaign_section())
    bad = [o for o in outcomes if o.violations]
    for o in bad:
        print(f"FAIL {o.table} / {o.op}: {o.violations}", file=sys.stderr)
    wrong = [o for o in oracle if o.verdict == "wrong"]
    for w in wrong:
        print(f"WRONG against Delta {w.table} / {w.op}: {w.detail}", file=sys.stderr)
    print(f"wrote {REPORT} ({len(outcomes)} runs, {len(bad)} failing, {len(wrong)} wrong)")
    return 1 if bad or wrong else 0


if __name__ == "__main__":
    sys.exit(main())
