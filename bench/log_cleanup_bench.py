"""Log cleanup benchmark: python_ops vs delta-rs cleanup_metadata, identical copies, one run.

A table with 10,000 commits and a checkpoint every 100 versions; all but the newest 100 commits
are backdated 60 days (default log retention 30 days). Each measurement runs in a fresh process
on a fresh copy. Medians and the ratio go to docs/benchmarks.md between the LOG-CLEANUP markers.

    .venv/bin/python bench/log_cleanup_bench.py --commits 10000 --repeats 3
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
EVERY = 100

OURS = """
import json, os, sys, time
import pyarrow.parquet  # loaded before timing, as delta-rs's native library is
from python_ops.ops.log_cleanup import cleanup_logs
started = time.perf_counter()
r = cleanup_logs(sys.argv[1], dry_run=False, checkpoint_if_needed=False)
print(json.dumps({"seconds": time.perf_counter() - started, "deleted": r.files_deleted}))
"""

DELTA_RS = """
import json, os, sys, time
from deltalake import DeltaTable
before = len(os.listdir(sys.argv[1] + "/_delta_log"))
started = time.perf_counter()
DeltaTable(sys.argv[1]).cleanup_metadata()
elapsed = time.perf_counter() - started
print(json.dumps({"seconds": elapsed,
                  "deleted": before - len(os.listdir(sys.argv[1] + "/_delta_log"))}))
"""


def generate(path: Path, commits: int) -> None:
    """Write ``commits`` one-file commits, a delta-rs checkpoint every EVERY versions."""
    from deltalake import DeltaTable

    log = path / "_delta_log"
    log.mkdir(parents=True)
    schema = {
        "type": "struct",
        "fields": [{"name": "id", "type": "long", "nullable": True, "metadata": {}}],
    }
    t0 = int((time.time() - 90 * 86400) * 1000)
    for v in range(commits):
        actions = []
        if v == 0:
            actions += [
                {"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}},
                {
                    "metaData": {
                        "id": "bench",
                        "format": {"provider": "parquet", "options": {}},
                        "schemaString": json.dumps(schema),
                        "partitionColumns": [],
                        "configuration": {},
                        "createdTime": t0,
                    }
                },
            ]
        actions.append(
            {
                "add": {
                    "path": f"part-{v:05d}.parquet",
                    "partitionValues": {},
                    "size": 4,
                    "modificationTime": t0 + v,
                    "dataChange": True,
                }
            }
        )
        actions.append({"commitInfo": {"timestamp": t0 + v, "operation": "WRITE"}})
        (log / f"{v:020d}.json").write_text("\n".join(json.dumps(a) for a in actions) + "\n")
        if (v + 1) % EVERY == 0:
            DeltaTable(str(path)).create_checkpoint()
    old = time.time() - 60 * 86400
    for f in log.iterdir():
        if f.name[:20].isdigit() and int(f.name[:20]) < commits - EVERY:
            os.utime(f, (old, old))


def measure(code: str, table: Path) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", code, str(table)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    compile_package()  # as an installed package is: no recompiling in timed processes
    results: dict[str, list[dict]] = {"ours": [], "delta-rs": []}
    with tempfile.TemporaryDirectory(dir=ROOT / "bench") as work:
        table = Path(work) / "t"
        started = time.perf_counter()
        generate(table, args.commits)
        print(f"generated {args.commits} commits in {time.perf_counter() - started:.1f} s")
        for _ in range(args.repeats):
            for name, code in (("delta-rs", DELTA_RS), ("ours", OURS)):
                copy = Path(work) / f"copy-{name}"
                shutil.copytree(table, copy)
                results[name].append(measure(code, copy))
                shutil.rmtree(copy)
    ours = statistics.median(r["seconds"] for r in results["ours"])
    theirs = statistics.median(r["seconds"] for r in results["delta-rs"])
    print(json.dumps(results))
    lines = [
        "## Log cleanup: python_ops vs delta-rs `cleanup_metadata`",
        "",
        f"{args.commits:,} commits, a checkpoint every {EVERY} versions, all but the newest "
        f"{EVERY} commits backdated 60 days (retention 30 days). Median of {args.repeats} runs, "
        "each a fresh process on a fresh copy; time of the op call (libraries already imported).",
        "",
        "| commits | files deleted (ours / delta-rs) | ours s | delta-rs s | ratio |",
        "|---:|---|---:|---:|---:|",
        f"| {args.commits:,} | {results['ours'][0]['deleted']:,} / "
        f"{results['delta-rs'][0]['deleted']:,} | {ours:.2f} | {theirs:.2f} | "
        f"{ours / theirs:.2f} |",
        "",
        "Both keep the newest expired checkpoint and everything after it; delta-rs wrote no "
        "checksum files here, so the counts are directly comparable.",
    ]
    write_section("LOG-CLEANUP", lines, source="bench/log_cleanup_bench.py")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
