"""Delta's own engine beside ours and delta-rs: VACUUM dry run and OPTIMIZE, whole processes.

VACUUM: the table of ``vacuum_bench.generate`` (100 partitions, 60 % live, 20 % expired
tombstones, 20 % untracked, backdated 30 days, checkpoint), dry run at zero retention, three
tools alternating, each a fresh process timed from outside:
- Delta: a Python process that starts classic local Spark with the project's Delta jars and runs
  ``VACUUM delta.`<t>` RETAIN 0 HOURS DRY RUN`` (retention check off); the statement alone is
  timed inside the process and reported beside, never instead;
- ours: ``python -m python_ops vacuum <t> --dry-run`` (no engine);
- delta-rs: ``DeltaTable.vacuum(dry_run=True, full=True)``.

OPTIMIZE: a table of many small files in a few partitions, each run on a fresh copy in a fresh
process that starts local Spark with Delta: Delta's plain ``OPTIMIZE delta.`<t>``` against
``python_ops``'s ``optimize(t, spark=spark)`` (our plan, routed to Delta's writer on that
session). Both read back with Delta: the same rows.

    .venv/bin/python bench/delta_bench.py --files 100000 --repeats 3
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from report import compile_package, write_section

ROOT = Path(__file__).resolve().parent.parent

SESSION = """
import json, sys, time
started = time.perf_counter()
from pyspark.sql import SparkSession
from python_ops.delta_jars import LOCAL_CONF, require_delta_jars, session_conf
builder = SparkSession.builder.master("local[2]").appName("bench")
for key, value in {**session_conf(require_delta_jars()), **LOCAL_CONF}.items():
    builder = builder.config(key, value)
spark = builder.getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
spark.conf.set("spark.databricks.delta.retentionDurationCheck.enabled", "false")
start_s = time.perf_counter() - started
"""

DELTA_VACUUM = (
    SESSION
    + """
t0 = time.perf_counter()
rows = spark.sql(f"VACUUM delta.`{sys.argv[1]}` RETAIN 0 HOURS DRY RUN").collect()
print(json.dumps({"files": len(rows), "op_s": time.perf_counter() - t0, "start_s": start_s}))
"""
)

DELTA_RS_VACUUM = """
import json, sys
from deltalake import DeltaTable
files = DeltaTable(sys.argv[1]).vacuum(retention_hours=0, dry_run=True,
                                       enforce_retention_duration=False, full=True)
print(json.dumps({"files": len(files)}))
"""

OPTIMIZE = (
    SESSION
    + """
table = sys.argv[1]
t0 = time.perf_counter()
if sys.argv[2] == "delta":
    metrics = spark.sql(f"OPTIMIZE delta.`{table}`").collect()[0]["metrics"]
    added, removed = metrics["numFilesAdded"], metrics["numFilesRemoved"]
else:
    from python_ops.ops.optimize.execute import optimize
    result = optimize(table, spark=spark, min_small_files=2)
    added, removed = result.files_added, result.files_removed
op_s = time.perf_counter() - t0
row = spark.sql(f"SELECT count(*) n, sum(id) s FROM delta.`{table}`").collect()[0]
print(json.dumps({"files": removed, "added": added, "op_s": op_s, "start_s": start_s,
                  "rows": row["n"], "checksum": row["s"]}))
"""
)


def measure(argv: list[str]) -> dict:
    """One whole process: wall s, CPU s, peak RSS MB (``wait4``) and its last JSON line."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=ROOT, text=True
    )
    out = proc.stdout.read() if proc.stdout else ""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{argv[:4]} exited {os.waitstatus_to_exitcode(status)}")
    payload = json.loads(out.strip().splitlines()[-1])
    if "files_found" in payload:  # our CLI's JSON
        payload = {"files": payload["files_found"], "op_s": payload["identify_s"]}
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, **payload}


def _median(runs: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def bench_vacuum(n: int, repeats: int, work: Path) -> list[str]:
    """VACUUM dry run at ``n`` files: Delta, ours and delta-rs; the report's lines."""
    table = work / f"vacuum-{n}"
    subprocess.run(
        [sys.executable, "-c", f"import vacuum_bench; vacuum_bench.generate({str(table)!r}, {n})"],
        cwd=Path(__file__).resolve().parent,
        check=True,
    )
    tools = {
        "Delta 4.4 (local Spark)": [sys.executable, "-c", DELTA_VACUUM, str(table)],
        "ours": [
            sys.executable,
            "-m",
            "python_ops",
            "vacuum",
            str(table),
            "--retention-hours",
            "0",
            "--allow-short-retention",
            "--dry-run",
            "--json",
        ],
        "delta-rs": [sys.executable, "-c", DELTA_RS_VACUUM, str(table)],
    }
    runs: dict[str, list[dict]] = {name: [] for name in tools}
    load = [os.getloadavg()[0]]
    for _ in range(repeats):
        for name, argv in tools.items():
            runs[name].append(measure(argv))
            print(name, json.dumps(runs[name][-1]), flush=True)
    load.append(os.getloadavg()[0])
    shutil.rmtree(table)
    delta = runs["Delta 4.4 (local Spark)"]
    lines = [
        f"## VACUUM dry run beside Delta's own: {n:,} files",
        "",
        "`bench/delta_bench.py`: the table of `bench/vacuum_bench.py` (100 partitions; 60 % live, "
        "20 % expired tombstones, 20 % untracked; backdated 30 days; checkpoint), dry run at zero "
        f"retention, the three tools alternating, medians of {repeats} fresh processes timed "
        "from outside. Delta's process starts classic local Spark (local[2]) with the project's "
        "Delta 4.4.0 jars and the project's small-machine settings (`python_ops.delta_jars."
        "LOCAL_CONF`: 4 listing tasks instead of Spark's 10,000); its JVM start and the statement "
        "alone are reported beside the whole process. Ratio = ours / the other tool (lower is "
        "better).",
        "",
        "| tool | files selected | whole process s | CPU s | op alone s | ours / tool "
        "(whole process) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    ours_wall = _median(runs["ours"], "wall")
    for name, tool_runs in runs.items():
        op = f"{_median(tool_runs, 'op_s'):.2f}" if "op_s" in tool_runs[0] else "-"
        wall = _median(tool_runs, "wall")
        # the JVM is a grandchild the Python process does not reap: its CPU is not in wait4's
        cpu = "-" if tool_runs is delta else f"{_median(tool_runs, 'cpu'):.2f}"
        lines.append(
            f"| {name} | {tool_runs[0]['files']:,} | {wall:.2f} | {cpu} | {op} | "
            f"{ours_wall / wall:.2f} |"
        )
    lines += [
        "",
        f"Delta's session start inside its process: {_median(delta, 'start_s'):.2f} s (median). "
        f"Ours / Delta on the statement alone: "
        f"{_median(runs['ours'], 'op_s') / _median(delta, 'op_s'):.2f}. "
        f"1-minute load average before / after: {load[0]:.1f} / {load[1]:.1f} (2 cores).",
    ]
    return lines


def small_files_table(path: Path, files: int, days: int) -> None:
    """``files`` one-batch appends spread over ``days`` partitions, written by delta-rs."""
    import pyarrow as pa
    from deltalake import write_deltalake

    rows = 2_000
    for i in range(files):
        ids = pa.array(range(i * rows, (i + 1) * rows), pa.int64())
        day = pa.array([f"2024-01-{1 + i % days:02d}"] * rows)
        write_deltalake(
            str(path), pa.table({"id": ids, "day": day}), mode="append", partition_by=["day"]
        )


def bench_optimize(files: int, repeats: int, work: Path) -> list[str]:
    """Delta's plain OPTIMIZE vs ours routed to Delta, same table; the report's lines."""
    table = work / "optimize"
    small_files_table(table, files, days=4)
    tools = {"Delta's OPTIMIZE": "delta", "ours routed to Delta": "ours"}
    runs: dict[str, list[dict]] = {name: [] for name in tools}
    for _ in range(repeats):
        for name, which in tools.items():
            copy = work / "optimize-copy"
            shutil.copytree(table, copy)
            runs[name].append(measure([sys.executable, "-c", OPTIMIZE, str(copy), which]))
            print(name, json.dumps(runs[name][-1]), flush=True)
            shutil.rmtree(copy)
    shutil.rmtree(table)
    delta, ours = runs["Delta's OPTIMIZE"], runs["ours routed to Delta"]
    lines = [
        f"## OPTIMIZE beside Delta's own: {files} small files in 4 partitions",
        "",
        f"Each run a fresh copy and a fresh process starting local Spark with Delta; medians of "
        f"{repeats}. Delta's plain `OPTIMIZE` against `python_ops` `optimize(t, spark=spark)` "
        "(our plan, executed by Delta's writer on the same session). Both read back with Delta.",
        "",
        "| run | files removed / added | rows, sum(id) after | whole process s | op alone s |",
        "|---|---|---|---:|---:|",
    ]
    for name, tool_runs in runs.items():
        r = tool_runs[0]
        lines.append(
            f"| {name} | {r['files']} / {r['added']} | {r['rows']:,}, {r['checksum']:,} | "
            f"{_median(tool_runs, 'wall'):.2f} | {_median(tool_runs, 'op_s'):.2f} |"
        )
    lines += [
        "",
        f"Ours / Delta: whole process {_median(ours, 'wall') / _median(delta, 'wall'):.2f}, "
        f"op alone {_median(ours, 'op_s') / _median(delta, 'op_s'):.2f}.",
    ]
    return lines


def main() -> None:
    """Run both benchmarks and write their section of docs/benchmarks.md."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--optimize-files", type=int, default=60)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    compile_package()  # as an installed package is: no recompiling in timed processes
    with tempfile.TemporaryDirectory(dir=ROOT / "bench") as work:
        lines = bench_vacuum(args.files, args.repeats, Path(work))
        lines += ["", *bench_optimize(args.optimize_files, args.repeats, Path(work))]
    write_section("DELTA", lines, source="bench/delta_bench.py")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
