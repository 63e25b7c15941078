"""What the path commands print for people: dry runs say "would", sizes are scaled, health is
readable, audit records are not printed unless asked for (``--verbose``, ``--audit-log``).

In-process ``main()`` on copies of real Delta tables (the shared fixtures).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from tests.helpers.paths import ROOT
from tests.helpers.trust import cli, files_on_disk
from tests.helpers.vacuum import age_everything, untracked

TABLE = "simple_table_with_checkpoint"
AUDIT_LINE = re.compile(r'^\{.*"op": "vacuum"', re.MULTILINE)


def test_vacuum_dry_run_says_would_and_scales_sizes(fixture_table, sail_spark) -> None:
    table = fixture_table(TABLE)
    age_everything(table, days=30)
    untracked(table, "leftover-1.parquet", days=30, size=3000)
    untracked(table, "leftover-2.parquet", days=30, size=3000)
    before = files_on_disk(table)

    code, out, err = cli(["vacuum", str(table), "--dry-run"], sail_spark)
    assert code == 0, err
    assert "would delete 2 files (6.00 KB) and 0 directories" in out
    assert out.rstrip().endswith("dry run: nothing was deleted or written")
    assert "bytes" not in out
    assert files_on_disk(table) == before

    code, out, err = cli(["vacuum", str(table)], sail_spark)
    assert code == 0, err
    assert "deleted 2 files (6.00 KB)" in out
    assert "would delete" not in out
    assert "dry run" not in out
    assert not (table / "leftover-1.parquet").exists()


def test_vacuum_says_which_retention_policy_applies(fixture_table, sail_spark) -> None:
    table = fixture_table(TABLE)
    code, out, _ = cli(["vacuum", str(table), "--dry-run"], sail_spark)
    assert code == 0
    assert (
        "retention 168 h: Delta's default (the table sets no "
        "delta.deletedFileRetentionDuration); a dbt model's maintenance_* retention applies "
        "only with --model NAME --project-dir DIR"
    ) in out
    code, out, _ = cli(["vacuum", str(table), "--dry-run", "--retention-hours", "240"], sail_spark)
    assert code == 0
    assert "retention 240 h: --retention-hours" in out


def test_project_flags_without_model_are_refused(fixture_table, sail_spark) -> None:
    table = fixture_table(TABLE)
    code, _out, err = cli(["vacuum", str(table), "--project-dir", str(table)], sail_spark)
    assert code == 2
    assert "--project-dir only says where to find the model of --model NAME" in err
    code, _, err = cli(["vacuum", "--dry-run"], sail_spark)
    assert code == 2
    assert "Give the table's location, or --model NAME" in err


def test_cleanup_logs_and_optimize_dry_runs_say_would(fixture_table, sail_spark) -> None:
    table = fixture_table(TABLE)
    age_everything(table, days=60)
    code, out, err = cli(["cleanup-logs", str(table), "--dry-run"], sail_spark)
    assert code == 0, err
    assert re.search(r"would delete \d+ log files \(\d+(\.\d+)? (B|KB)\)", out), out
    assert "retention 30 days: Delta's default" in out
    assert out.rstrip().endswith("dry run: nothing was deleted or written")

    code, out, err = cli(
        ["optimize", str(table), "--dry-run", "--min-small-files", "2"], sail_spark
    )
    assert code == 0, err
    assert re.search(r"would rewrite \d+ of \d+ files into 1 bin\(s\), [\d.]+ KB", out), out
    assert "target 100 MiB (engine default)" in out  # as the docs give it, not "105 MB"
    assert "would be rewritten" in out
    assert out.rstrip().endswith("dry run: nothing was deleted or written")


def test_health_is_a_readable_table_and_json_on_request(fixture_table, sail_spark) -> None:
    table = fixture_table(TABLE)
    code, out, err = cli(["health", str(table)], sail_spark)
    assert code == 0, err
    assert "TableHealth(" not in out
    lines = dict(line.split(None, 1) for line in out.splitlines() if line.strip())
    assert lines["table"] == str(table)
    assert lines["version"] == "10 (checkpoint at version 10)"
    assert re.fullmatch(r"\d+ files \([\d.]+ (B|KB)\)", lines["files"]), lines["files"]
    assert lines["partitions"] == "not partitioned"

    code, out, _ = cli(["health", str(table), "--json"], sail_spark)
    assert code == 0
    data = json.loads(out)
    assert data["version"] == 10
    assert data["location"] == str(table)


def test_audit_records_only_on_request(fixture_table, sail_spark, tmp_path: Path) -> None:
    table = fixture_table(TABLE)
    age_everything(table, days=30)
    untracked(table, "leftover.parquet", days=30, size=3000)
    done = subprocess.run(  # a process of its own: logging as a scheduler gets it
        [sys.executable, "-m", "python_ops", "vacuum", str(table)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "deleted 1 file (3.00 KB)" in done.stdout
    assert not AUDIT_LINE.search(done.stderr)
    assert "python_ops.ops.audit" not in done.stderr
    assert "deleted 1/1 files" in done.stderr  # progress still shows

    code, _, err = cli(["vacuum", str(table), "--dry-run", "--verbose"], sail_spark)
    assert code == 0
    assert AUDIT_LINE.search(err), err

    audit = tmp_path / "audit.jsonl"
    for _ in range(2):
        code, _, err = cli(
            ["vacuum", str(table), "--dry-run", "--audit-log", str(audit)], sail_spark
        )
        assert code == 0
        assert not AUDIT_LINE.search(err)
    records = [json.loads(line) for line in audit.read_text().splitlines()]
    assert [(r["op"], r["dry_run"], r["location"]) for r in records] == [
        ("vacuum", True, str(table))
    ] * 2
