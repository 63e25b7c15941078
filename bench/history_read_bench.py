"""A process's first read of the maintenance history, as the history grows.

A post-hook's first decision in a dbt process needs the last run of each (model, op). The
history keeps a row for every op run, every skip (a build that wrote less than
``maintenance_min_files_written``: an incremental model that loaded nothing) and every bound a
listing proved, and nothing prunes it: a first build of 1,000 models keeps 2,010 rows, and an
estate whose incremental models often load nothing adds a skip row for each of them at every
build. Three ways to that first answer, each in a fresh process (what a dbt process has
imported loaded first; the read itself timed, as a hook pays it), alternating, on histories of
1, 10 and 100 appends of 2,000 rows (a skip and a kept bound for each of 1,000 models):

- ``summary``: the last runs the previous command's flush kept beside the history
  (``history_summary``), used while its commit is the newest;
- ``table``: this package's reader, the columns deciding uses (what a process pays without one);
- ``delta-rs``: the same columns through ``DeltaTable.to_pyarrow_table``, then the same rule.

Usage: ``.venv/bin/python bench/history_read_bench.py [--builds 1 10 100] [--rounds 5]
[--write]``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.report import compile_package, write_section
from python_ops.maintenance.records.history import HistoryRecord, HistoryStore
from python_ops.maintenance.records.history_summary import SUMMARY_NAME

MODELS = 1000
START = dt.datetime(2026, 11, 1, tzinfo=dt.UTC)

READ = r"""
import json, sys, time
arm, location, out = sys.argv[1:4]
from python_ops.maintenance.records.history import HistoryStore
from python_ops.maintenance.records.history_last import LAST_RUN_COLUMNS, last_runs
# what a dbt process with the adapter has loaded before its first hook: the read is timed,
# not its imports (delta-rs' ``pyarrow.dataset`` too)
import pyarrow, pyarrow.compute, pyarrow._parquet
import python_ops.delta.state.parquet_file, python_ops.delta.state.snapshot
import python_ops.ops.vacuum.rule.selection
if arm == "delta-rs":
    import pyarrow.dataset
    from deltalake import DeltaTable
wall, cpu = time.perf_counter(), time.process_time()
if arm == "delta-rs":
    table = DeltaTable(location).to_pyarrow_table(columns=list(LAST_RUN_COLUMNS))
    found = last_runs(table).get(("m0000", "log_bounds"))
else:
    found = HistoryStore(location).last_success("m0000", "log_bounds")
wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
assert found is not None
with open(out, "w") as handle:
    json.dump({"wall_ms": wall * 1000, "cpu_ms": cpu * 1000, "at": found.started_at_us}, handle)
import os
os._exit(0)  # delta-rs' runtime threads can abort an interpreter's exit ("terminate called")
"""


def _build_rows(build: int) -> list[HistoryRecord]:
    """One append's rows: a skip and a kept bound (a proof) for each of 1,000 models."""
    at = START + dt.timedelta(hours=build)
    rows = []
    for m in range(MODELS):
        model = f"m{m:04d}"
        common = {
            "invocation_id": f"inv-{build}",
            "model": model,
            "table_location": f"/warehouse/fleet/{model}",
            "dry_run": False,
            "error": None,
            "started_at": at + dt.timedelta(milliseconds=m),
            "duration_s": 0.0,
        }
        rows.append(
            HistoryRecord(
                **common,
                op="optimize",
                parameters="{}",
                status="skipped",
                reason="the build wrote 1 file: fewer than maintenance_min_small_files",
            )
        )
        bound = {"oldest_ms": 1795000000000 + build, "newest_version": build, "retention": 30}
        rows.append(
            HistoryRecord(
                **common, op="log_bounds", parameters=json.dumps(bound), status="succeeded"
            )
        )
    return rows


def make_history(location: str, builds: int) -> None:
    """A history of ``builds`` appends, then its summary as a command's flush leaves it."""
    for build in range(builds - 1):
        HistoryStore(location).append(_build_rows(build))
    last = HistoryStore(location)
    last.last_success("m0000", "log_bounds")  # read, as a command's first hook does
    last.defer(_build_rows(builds - 1))
    last.flush()  # the last build's rows, then the summary of that commit
    if not (Path(location) / SUMMARY_NAME).exists():
        raise SystemExit("no summary was written")


def _read(arm: str, location: str, code: Path) -> dict[str, float]:
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        command = [sys.executable, "-c", READ, arm, location, out.name]
        env = {**os.environ, "PYTHONPATH": str(code)}
        subprocess.run(command, check=True, env=env, capture_output=True)
        found: dict[str, float] = json.loads(Path(out.name).read_text())
    return found


def measure(builds: int, rounds: int, code: Path) -> dict[str, dict[str, float]]:
    """Median first-read wall and CPU (ms) of each arm on a history of ``builds`` builds."""
    top = Path(tempfile.mkdtemp(prefix="history-bench-"))
    try:
        location = str(top / "history")
        make_history(location, builds)
        summary = Path(location) / SUMMARY_NAME
        kept = top / "summary.json"
        shutil.copy(summary, kept)
        runs: dict[str, list[dict[str, float]]] = {"summary": [], "table": [], "delta-rs": []}
        for _ in range(rounds):
            for arm in runs:
                if arm == "summary":
                    shutil.copy(kept, summary)
                elif summary.exists():
                    summary.unlink()  # what a process finds without one
                runs[arm].append(_read(arm, location, code))
        answers = {r["at"] for arm in runs.values() for r in arm}
        if len(answers) != 1:
            raise SystemExit(f"the arms disagree on the last run: {answers}")
        return {
            arm: {
                "rows": builds * 2 * MODELS,
                "wall_ms": statistics.median(r["wall_ms"] for r in found),
                "cpu_ms": statistics.median(r["cpu_ms"] for r in found),
            }
            for arm, found in runs.items()
        }
    finally:
        shutil.rmtree(top, ignore_errors=True)


def render(results: dict[int, dict[str, dict[str, float]]], rounds: int) -> list[str]:
    """The section's lines."""
    lines = [
        "",
        "A process's first answer from the maintenance history (the last run of each model and",
        "op), on histories of appends of 2,000 rows (a skip and a kept bound for each of 1,000",
        "models), in fresh processes, what a dbt process has imported first; median of",
        f"{rounds} alternating rounds. `summary`: the last runs the previous command kept",
        "beside the history (`history_summary`); `table`: this package's reader without one;",
        "`delta-rs`: the same columns through `DeltaTable.to_pyarrow_table`, then the same rule.",
        "",
        "| appends | rows | summary CPU ms | table CPU ms | delta-rs CPU ms | summary / table "
        "| summary / delta-rs | summary wall ms | table wall ms | delta-rs wall ms |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for builds, arms in results.items():
        s, t, d = arms["summary"], arms["table"], arms["delta-rs"]
        lines.append(
            f"| {builds} | {s['rows']:,} | {s['cpu_ms']:.1f} | {t['cpu_ms']:.1f} | "
            f"{d['cpu_ms']:.1f} | {s['cpu_ms'] / t['cpu_ms']:.2f}x | "
            f"{s['cpu_ms'] / d['cpu_ms']:.2f}x | {s['wall_ms']:.1f} | {t['wall_ms']:.1f} | "
            f"{d['wall_ms']:.1f} |"
        )
    return lines


def main() -> None:
    """Run the bench; print (and with ``--write``, keep) the section."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--builds", type=int, nargs="+", default=[1, 10, 100])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    compile_package()
    code = Path(__file__).resolve().parent.parent
    results = {}
    for builds in args.builds:
        results[builds] = measure(builds, args.rounds, code)
        print(builds, json.dumps(results[builds]), flush=True)
    lines = render(results, args.rounds)
    print("\n".join(lines))
    if args.write:
        write_section("HISTORY-READ", lines, source="bench/history_read_bench.py")


if __name__ == "__main__":
    main()
