"""VACUUM benchmark: whole processes, python_ops's CLI and post-hook path vs delta-rs, in one run.

For each size it generates a partitioned Delta table whose files are 60 % live, 20 % tombstoned
(expired) and 20 % untracked, backdated 30 days, with a checkpoint. What a user waits for is
timed: each run is a fresh process (interpreter start, imports and, for ours, everything the
command does; no engine is started by default), alternating ours and delta-rs. Wall time is
measured around the process, CPU time and peak RSS come from the kernel (``wait4``) for that
process. identify = dry run; delete = real run on a fresh copy. The op-internal identify time
our result reports goes beside. Medians and ratios go to docs/benchmarks.md.

Two of ours: the command line (``python -m python_ops vacuum``) and the post-hook path, a script
that runs VACUUM through the runner as the dbt post-hook and ``vacuum_all`` do
(``Maintainer.maintain_model`` of a model whose only op is VACUUM, retention 24 h with
``maintenance_vacuum_allow_short_retention``: the model settings cannot say 0; every file here is
30 days old, so the selection is the same). python_ops is byte-compiled first (as an installed
package is; this environment sets PYTHONDONTWRITEBYTECODE, which otherwise recompiles the
package in every process, about 0.1 s, while pyarrow and deltalake ship compiled).

    .venv/bin/python bench/vacuum_bench.py --sizes 100000,1000000 --repeats 5
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from report import compile_package, write_section

ROOT = Path(__file__).resolve().parent.parent
PARTITIONS = 100
PER_COMMIT = 10_000

DELTA_RS = """
import json, sys
from deltalake import DeltaTable
files = DeltaTable(sys.argv[1]).vacuum(retention_hours=0, dry_run=sys.argv[2] == "dry",
                                       enforce_retention_duration=False, full=True)
print(json.dumps(files))
"""


POSTHOOK = """
import json, sys
from python_ops.invocation import Invocation
from python_ops.maintenance.configuration.config import parse_config
from python_ops.maintenance.running.runner import Maintainer
from python_ops.maintenance.selection.targets import ModelTarget
config = parse_config("bench", {
    "maintenance_vacuum_retention_hours": 24, "maintenance_vacuum_allow_short_retention": True,
    "maintenance_vacuum_mode": "full", "maintenance_optimize_enabled": False,
    "maintenance_cleanup_logs_enabled": False, "maintenance_purge_enabled": False})
target = ModelTarget("bench", sys.argv[1], config)
maintainer = Maintainer(spark=None, history=None, invocation=Invocation("bench"))
(o,) = [o for o in maintainer.maintain_model(target, only_due=False, dry_run=sys.argv[2] == "dry")
        if o.op == "vacuum"]
assert str(o.status) == "succeeded", o.detail
print(json.dumps({"files_found": o.counts.files_removed, "identify_s": o.duration_s}))
"""


def _posthook(table: Path, mode: str) -> list[str]:
    return [sys.executable, "-c", POSTHOOK, str(table), mode]


def _ours(table: Path, mode: str) -> list[str]:
    argv = [sys.executable, "-m", "python_ops", "vacuum", str(table), "--retention-hours", "0"]
    argv += ["--allow-short-retention", "--json"]
    return argv + (["--dry-run"] if mode == "dry" else [])


def _theirs(table: Path, mode: str) -> list[str]:
    return [sys.executable, "-c", DELTA_RS, str(table), mode]


def generate(path: Path | str, n_files: int) -> None:
    """Write a table of ``n_files`` tiny data files and its log (JSON commits + checkpoint)."""
    path = Path(path)
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


def measure(argv: list[str]) -> dict:
    """Run one whole process: wall seconds, CPU seconds, peak RSS (MB) and its JSON output."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=ROOT, text=True
    )
    out = proc.stdout.read() if proc.stdout else ""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{argv[:4]} exited {proc.returncode}")
    payload = json.loads(out.strip().splitlines()[-1])
    files = len(payload) if isinstance(payload, list) else payload["files_found"]
    return {
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "peak_mb": usage.ru_maxrss / 1024,
        "files": files,
        "op_identify_s": None if isinstance(payload, list) else payload["identify_s"],
    }


def _copy(source: Path, target: Path) -> None:
    """``cp -a`` (mtimes kept): shutil.copytree copies about 1,200 small files a second here."""
    subprocess.run(["cp", "-a", str(source), str(target)], check=True)


def _remove(path: Path) -> None:
    subprocess.run(["rm", "-rf", str(path)], check=True)


def bench_size(n: int, repeats: int, work: Path, delete_max: int, delete_repeats: int) -> dict:
    table = work / f"t{n}"
    started = time.perf_counter()
    # Generate in a child process: a child's peak RSS (wait4) starts from its parent's RSS at
    # fork, so this process must stay small for the measured processes' figures to be theirs.
    subprocess.run(
        [sys.executable, "-c", f"import vacuum_bench; vacuum_bench.generate({str(table)!r}, {n})"],
        cwd=Path(__file__).resolve().parent,
        check=True,
    )
    print(f"generated {n} files in {time.perf_counter() - started:.1f} s", flush=True)
    tools = {"delta-rs": _theirs, "ours": _ours, "post-hook": _posthook}
    runs: dict[str, list[dict]] = {name: [] for name in tools}
    for _ in range(repeats):  # alternate: both tools see the same machine noise
        for name, argv in tools.items():
            runs[name].append(measure(argv(table, "dry")))
    deletes: dict[str, list[dict]] = {name: [] for name in tools}
    for _ in range(0 if n > delete_max else delete_repeats):
        for name, argv in tools.items():
            copy = work / f"copy-{name}"
            _copy(table, copy)
            deletes[name].append(measure(argv(copy, "real")))
            _remove(copy)
    _remove(table)
    row: dict = {"files": n}
    for name in tools:
        row[name] = {
            "selected": runs[name][0]["files"],
            "wall": statistics.median(r["wall"] for r in runs[name]),
            "wall_min": min(r["wall"] for r in runs[name]),
            "wall_max": max(r["wall"] for r in runs[name]),
            "cpu": statistics.median(r["cpu"] for r in runs[name]),
            "peak_mb": statistics.median(r["peak_mb"] for r in runs[name]),
            "delete": statistics.median(d["wall"] for d in deletes[name])
            if deletes[name]
            else None,
            "delete_peak_mb": statistics.median(d["peak_mb"] for d in deletes[name])
            if deletes[name]
            else None,
        }
    for name in ("ours", "post-hook"):
        row[name]["op_identify_s"] = statistics.median(r["op_identify_s"] for r in runs[name])
    print(json.dumps(row), flush=True)
    return row


def write_report(rows: list[dict], repeats: int, loads: list[float], deletes: str) -> None:
    lines = [
        "## VACUUM: whole processes, `python -m python_ops vacuum` and the post-hook path vs a "
        "delta-rs script",
        "",
        f"Partitioned table ({PARTITIONS} partitions), files 60 % live, 20 % expired tombstones, "
        "20 % untracked, all backdated 30 days, with a checkpoint. Each run is a fresh process "
        "timed from outside (interpreter start, imports and the op; ours starts no engine: the "
        "selection runs on Arrow in the process), the three alternating; medians of "
        f"{repeats} runs (delete: {deletes}). CPU and peak RSS are the process's own "
        "(`wait4`). delete = a real run on a fresh copy. Ratio = ours / delta-rs (lower is "
        "better); the op-internal time of ours is beside, never instead. CLI = `python -m "
        "python_ops vacuum <t> --retention-hours 0 --allow-short-retention --json [--dry-run]`; "
        "post-hook path = a script running VACUUM through `Maintainer.maintain_model` (the "
        "runner the dbt post-hook and `vacuum_all` use) for a model whose only op is VACUUM; "
        "delta-rs = `DeltaTable(t).vacuum(retention_hours=0, dry_run=..., full=True)`. "
        "python_ops byte-compiled, as installed.",
        "",
        "| files | run | selected | identify wall s (min-max) | ratio (min-max runs) | CPU "
        "s | CPU ratio | peak RSS MB | ratio | delete s | ratio | delete peak RSS MB | ratio | "
        "op-internal s |",
        "|---:|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        d = r["delta-rs"]
        for name in ("delta-rs", "ours", "post-hook"):
            o = r[name]
            label = {"delta-rs": "delta-rs", "ours": "ours, CLI", "post-hook": "ours, post-hook"}
            deleted = o["delete"] is not None
            if name == "delta-rs":
                ratios = ["", "", "", "", ""]
            else:
                ratios = [
                    f"{o['wall'] / d['wall']:.2f} "
                    f"({o['wall_min'] / d['wall_max']:.2f}-{o['wall_max'] / d['wall_min']:.2f})",
                    f"{o['cpu'] / d['cpu']:.2f}",
                    f"{o['peak_mb'] / d['peak_mb']:.2f}",
                    f"{o['delete'] / d['delete']:.2f}" if deleted else "-",
                    f"{o['delete_peak_mb'] / d['delete_peak_mb']:.2f}" if deleted else "-",
                ]
            internal = f"{o['op_identify_s']:.2f}" if "op_identify_s" in o else ""
            delete = f"{o['delete']:.2f}" if deleted else "-"
            delete_mb = f"{o['delete_peak_mb']:.0f}" if deleted else "-"
            lines.append(
                f"| {r['files']:,} | {label[name]} | {o['selected']:,} | {o['wall']:.2f} "
                f"({o['wall_min']:.2f}-{o['wall_max']:.2f}) | {ratios[0]} | {o['cpu']:.2f} | "
                f"{ratios[1]} | {o['peak_mb']:.0f} | {ratios[2]} | {delete} | {ratios[3]} | "
                f"{delete_mb} | {ratios[4]} | {internal} |"
            )
    lines += [
        "",
        f"1-minute load average at the start and end of each size: "
        f"{', '.join(f'{x:.1f}' for x in loads)} (2 cores).",
    ]
    write_section("VACUUM", lines, source="bench/vacuum_bench.py")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--delete-max",
        type=int,
        default=10_000_000,
        help="real (delete) runs only for sizes up to this many files",
    )
    parser.add_argument(
        "--delete-repeats",
        type=int,
        default=1,
        help="real runs per tool (each on a fresh copy: copying the table is most of the time)",
    )
    args = parser.parse_args()
    compile_package()
    rows = []
    loads: list[float] = []
    with tempfile.TemporaryDirectory(dir=ROOT / "bench") as work:
        for n in (int(s) for s in args.sizes.split(",")):
            loads.append(os.getloadavg()[0])
            rows.append(
                bench_size(n, args.repeats, Path(work), args.delete_max, args.delete_repeats)
            )
            loads.append(os.getloadavg()[0])
    deleted = [f"{r['files']:,}" for r in rows if r["ours"]["delete"] is not None]
    skipped = [f"{r['files']:,}" for r in rows if r["ours"]["delete"] is None]
    deletes = (
        f"{args.delete_repeats} run(s) per tool at {', '.join(deleted)} files, each on a fresh "
        "copy"
        + (
            f"; {', '.join(skipped)} not deleted (--delete-max: copying a million small files "
            "takes minutes here)"
            if skipped
            else ""
        )
        if deleted
        else "not run"
    )
    write_report(rows, args.repeats, loads, deletes)
    print((ROOT / "docs" / "benchmarks.md").read_text())


if __name__ == "__main__":
    main()
