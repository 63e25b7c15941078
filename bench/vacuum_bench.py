"""VACUUM benchmark: python_ops on the embedded engine vs delta-rs full vacuum, in one run.

For each size it generates a partitioned Delta table whose files are 60 % live, 20 % tombstoned
(expired) and 20 % untracked, backdated 30 days, with a checkpoint. Each measurement runs in a
fresh subprocess (so peak RSS is per run): identify = dry run, delete = real run on a fresh copy.
Medians and ratios go to docs/benchmarks.md between the VACUUM markers.

    .venv/bin/python bench/vacuum_bench.py --sizes 10000,100000,500000 --repeats 3
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

from report import write_section

ROOT = Path(__file__).resolve().parent.parent
PARTITIONS = 100
PER_COMMIT = 10_000

OURS = """
import json, sys, time
from python_ops.spark_sessions import SailEngine
from python_ops.ops.vacuum import vacuum
engine = SailEngine()
started = time.perf_counter()
r = vacuum(sys.argv[1], spark=engine.spark, retention_hours=0, allow_short_retention=True,
           dry_run=sys.argv[2] == "dry")
elapsed = time.perf_counter() - started
engine.stop()
import resource
print(json.dumps({"seconds": elapsed, "files": r.files_found, "identify_s": r.identify_s,
                  "delete_s": r.delete_s,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

DELTA_RS = """
import json, sys, time
from deltalake import DeltaTable
started = time.perf_counter()
files = DeltaTable(sys.argv[1]).vacuum(retention_hours=0, dry_run=sys.argv[2] == "dry",
                                       enforce_retention_duration=False, full=True)
import resource
print(json.dumps({"seconds": time.perf_counter() - started, "files": len(files),
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def generate(path: Path, n_files: int) -> None:
    """Write a table of ``n_files`` tiny data files and its log (JSON commits + checkpoint)."""
    log = path / "_delta_log"
    log.mkdir(parents=True)
    schema = {
        "type": "struct",
        "fields": [
            {"name": "id", "type": "long", "nullable": True, "metadata": {}},
            {"name": "p", "type": "integer", "nullable": True, "metadata": {}},
        ],
    }
    old_ms = int((time.time() - 40 * 86400) * 1000)
    actions: list[list[dict]] = [
        [
            {"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}},
            {
                "metaData": {
                    "id": "bench",
                    "format": {"provider": "parquet", "options": {}},
                    "schemaString": json.dumps(schema),
                    "partitionColumns": ["p"],
                    "configuration": {},
                    "createdTime": old_ms,
                }
            },
            {"commitInfo": {"timestamp": old_ms, "operation": "CREATE TABLE"}},
        ]
    ]
    for p in range(PARTITIONS):
        (path / f"p={p}").mkdir()
    batch: list[dict] = []
    removes: list[dict] = []
    for i in range(n_files):
        rel = f"p={i % PARTITIONS}/part-{i:07d}.parquet"
        with open(path / rel, "wb") as fh:
            fh.write(b"PAR1")
        kind = i % 5
        if kind == 4:
            continue  # untracked
        add = {
            "path": rel,
            "partitionValues": {"p": str(i % PARTITIONS)},
            "size": 4,
            "modificationTime": old_ms,
            "dataChange": True,
        }
        batch.append({"add": add})
        if kind == 3:
            removes.append(
                {
                    "remove": {
                        "path": rel,
                        "deletionTimestamp": old_ms + 1,
                        "dataChange": True,
                        "size": 4,
                        "partitionValues": add["partitionValues"],
                    }
                }
            )
        if len(batch) >= PER_COMMIT:
            actions.append([*batch, {"commitInfo": {"timestamp": old_ms, "operation": "WRITE"}}])
            batch = []
    if batch:
        actions.append([*batch, {"commitInfo": {"timestamp": old_ms, "operation": "WRITE"}}])
    for start in range(0, len(removes), PER_COMMIT):
        chunk = removes[start : start + PER_COMMIT]
        actions.append([*chunk, {"commitInfo": {"timestamp": old_ms, "operation": "DELETE"}}])
    for version, commit in enumerate(actions):
        (log / f"{version:020d}.json").write_text("\n".join(json.dumps(a) for a in commit) + "\n")
    from deltalake import DeltaTable

    DeltaTable(str(path)).create_checkpoint()
    old = time.time() - 30 * 86400
    for root, dirs, files in os.walk(path):
        for name in files + dirs:
            os.utime(os.path.join(root, name), (old, old))


def measure(code: str, table: Path, mode: str) -> dict:
    """Run one tool in a fresh process; its JSON line has seconds, files and peak RSS."""
    out = subprocess.run(
        [sys.executable, "-c", code, str(table), mode],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def median(values: list[float]) -> float:
    return statistics.median(values)


def bench_size(n: int, repeats: int, work: Path) -> dict:
    table = work / f"t{n}"
    started = time.perf_counter()
    generate(table, n)
    print(f"generated {n} files in {time.perf_counter() - started:.1f} s", flush=True)
    row: dict = {"files": n}
    for name, code in (("delta-rs", DELTA_RS), ("ours", OURS)):
        runs = [measure(code, table, "dry") for _ in range(repeats)]
        row[f"{name}_identify_s"] = median([r["seconds"] for r in runs])
        row[f"{name}_selected"] = runs[0]["files"]
        row[f"{name}_identify_peak_mb"] = median([r["peak_mb"] for r in runs])
        deletes = []
        for _ in range(repeats if n <= 100_000 else 1):
            copy = work / f"copy-{name}"
            shutil.copytree(table, copy, symlinks=True)
            deletes.append(measure(code, copy, "real")["seconds"])
            shutil.rmtree(copy)
        row[f"{name}_delete_s"] = median(deletes)
        print(name, json.dumps({k: v for k, v in row.items() if k.startswith(name)}), flush=True)
    shutil.rmtree(table)
    return row


def write_report(rows: list[dict], repeats: int) -> None:
    lines = [
        "## VACUUM: identify (dry run) and delete, python_ops on the embedded engine vs delta-rs",
        "",
        f"Partitioned table ({PARTITIONS} partitions), files 60 % live, 20 % expired tombstones, "
        "20 % untracked, all backdated 30 days, with a checkpoint. Each number is the median of "
        f"{repeats} runs (delete on 500k: 1 run), each run a fresh process. Times are of the op "
        "call (ours excludes starting the embedded engine, about 0.1 s, as in a dbt process that "
        "already runs it); delete = identify + delete on a fresh copy, as both tools do it in one "
        "call. Ratio = ours / delta-rs (lower is better).",
        "",
        "| files | selected (ours / delta-rs) | identify ours s | identify delta-rs s | ratio | "
        "delete ours s | delete delta-rs s | ratio | identify s per 100k files (ours) |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['files']:,} | {r['ours_selected']:,} / {r['delta-rs_selected']:,} | "
            f"{r['ours_identify_s']:.2f} | {r['delta-rs_identify_s']:.2f} | "
            f"{r['ours_identify_s'] / r['delta-rs_identify_s']:.2f} | {r['ours_delete_s']:.2f} | "
            f"{r['delta-rs_delete_s']:.2f} | {r['ours_delete_s'] / r['delta-rs_delete_s']:.2f} | "
            f"{r['ours_identify_s'] / r['files'] * 100_000:.2f} |"
        )
    lines += ["", "Peak RSS of the identify process (MB, median; ours includes the engine):", ""]
    lines += ["| files | ours | delta-rs |", "|---:|---:|---:|"]
    for r in rows:
        ours, theirs = r["ours_identify_peak_mb"], r["delta-rs_identify_peak_mb"]
        lines.append(f"| {r['files']:,} | {ours:.0f} | {theirs:.0f} |")
    write_section("VACUUM", lines, source="bench/vacuum_bench.py")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,500000")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(dir=ROOT / "bench") as work:
        for n in (int(s) for s in args.sizes.split(",")):
            rows.append(bench_size(n, args.repeats, Path(work)))
    write_report(rows, args.repeats)
    print((ROOT / "docs" / "benchmarks.md").read_text())


if __name__ == "__main__":
    main()
