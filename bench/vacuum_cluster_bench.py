"""VACUUM on a Spark cluster: how the driver's memory grows from 100,000 to 1,000,000 files.

The cluster is ``local-cluster[2,1,1024]`` from the installed pyspark package (a master and two
workers; each executor a separate JVM with its own Python workers), as in the distributed test.
For each size a fresh driver process starts the session, waits for both executors, notes its
resident memory, runs one VACUUM dry run with the listing in executor tasks
(``cluster_listing=True``, the selection on Spark), then reports the peak resident memory
(``VmHWM``) of the Python driver and of the driver JVM. Growth = peak at 1M / peak at 100k; the
baseline (session started, nothing read) goes beside. delta-rs, one process on one machine, runs
the same dry run in the same bench for reference (its whole-process peak RSS, ``wait4``).

    .venv/bin/python bench/vacuum_cluster_bench.py --sizes 100000,1000000 --repeats 2
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
sys.path.insert(0, str(ROOT))

from tests.helpers.classic import classic_env  # noqa: E402
from tests.helpers.spark_cluster import spark_home  # noqa: E402

MASTER = "local-cluster[2,1,1024]"
EXECUTORS = 2


def _status_kb(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


def _driver_jvm(pid: int) -> int:
    """The driver JVM: the java process among this process's descendants (pyspark's gateway)."""
    todo, seen = [pid], []
    while todo:
        p = todo.pop()
        for child in Path(f"/proc/{p}/task/{p}/children").read_text().split():
            seen.append(int(child))
            todo.append(int(child))
    for child in seen:
        argv = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
        if argv and argv[0].endswith(b"java"):
            return child
    raise RuntimeError("no driver JVM among the driver's child processes")


def driver(table: str) -> None:
    """Run in the driver process: start the cluster session, one VACUUM, print the figures."""
    from pyspark.sql import SparkSession

    from python_ops.ops.vacuum import vacuum

    spark = (
        SparkSession.builder.master(MASTER)
        .appName("vacuum-cluster-bench")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    deadline = time.monotonic() + 180
    while spark.sparkContext._jsc.sc().getExecutorIds().size() < EXECUTORS:
        if time.monotonic() > deadline:
            raise SystemExit("executors did not register within 180 s")
        time.sleep(0.2)
    jvm = _driver_jvm(os.getpid())
    base_py, base_jvm = _status_kb(os.getpid(), "VmRSS"), _status_kb(jvm, "VmRSS")
    started = time.perf_counter()
    result = vacuum(
        table,
        spark=spark,
        retention_hours=0,
        allow_short_retention=True,
        dry_run=True,
        cluster_listing=True,
        engine="spark",
    )
    seconds = time.perf_counter() - started
    d = result.diagnostics
    figures = {
        "files_found": result.files_found,
        "files_listed": result.files_listed,
        "seconds": seconds,
        "listing_pids": sorted(d.listing_pids) if d else [],
        "driver_pid": os.getpid(),
        "base_py_mb": base_py / 1024,
        "peak_py_mb": _status_kb(os.getpid(), "VmHWM") / 1024,
        "base_jvm_mb": base_jvm / 1024,
        "peak_jvm_mb": _status_kb(jvm, "VmHWM") / 1024,
    }
    print(json.dumps(figures), flush=True)
    spark.stop()


def run_driver(table: Path, work: Path) -> dict:
    env = classic_env()
    env.update(
        SPARK_HOME=str(spark_home(work / "spark-home")),
        PYSPARK_PYTHON=sys.executable,
        PYSPARK_DRIVER_PYTHON=sys.executable,
        SPARK_LOCAL_IP="127.0.0.1",
    )
    out = subprocess.run(
        [sys.executable, __file__, "--driver", str(table)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        start_new_session=True,
    )
    if out.returncode != 0:
        raise RuntimeError(f"driver exited {out.returncode}: {out.stderr[-2000:]}")
    figures: dict = json.loads(out.stdout.strip().splitlines()[-1])
    return figures


def delta_rs_peak(table: Path) -> tuple[float, int]:
    script = (
        "import sys\nfrom deltalake import DeltaTable\n"
        "print(len(DeltaTable(sys.argv[1]).vacuum(retention_hours=0, dry_run=True, "
        "enforce_retention_duration=False, full=True)))"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script, str(table)], stdout=subprocess.PIPE, text=True
    )
    out = proc.stdout.read() if proc.stdout else ""
    _, _, usage = os.wait4(proc.pid, 0)
    return usage.ru_maxrss / 1024, int(out.strip())


def bench_size(n: int, repeats: int, work: Path) -> dict:
    table = work / f"t{n}"
    subprocess.run(
        [sys.executable, "-c", f"import vacuum_bench; vacuum_bench.generate({str(table)!r}, {n})"],
        cwd=Path(__file__).resolve().parent,
        check=True,
    )
    runs = [run_driver(table, work) for _ in range(repeats)]
    theirs = [delta_rs_peak(table) for _ in range(repeats)]
    shutil.rmtree(table)
    row = {
        "files": n,
        "selected": runs[0]["files_found"],
        "delta_rs_selected": theirs[0][1],
        "executor_pids": sorted(
            {p for r in runs for p in r["listing_pids"]} - {runs[0]["driver_pid"]}
        ),
        "delta_rs_peak_mb": statistics.median(t[0] for t in theirs),
    }
    for key in ("seconds", "base_py_mb", "peak_py_mb", "base_jvm_mb", "peak_jvm_mb"):
        row[key] = statistics.median(r[key] for r in runs)
    print(json.dumps(row), flush=True)
    return row


def write_report(rows: list[dict], repeats: int) -> None:
    lines = [
        "## VACUUM on a cluster: driver memory from 100k to 1M files",
        "",
        f"`{MASTER}` from the pyspark package (two executor JVMs). One VACUUM dry run per fresh "
        "driver, the listing in executor tasks and the selection on Spark (`cluster_listing`); "
        "peak resident memory (`VmHWM`) of the Python driver and the driver JVM, and their "
        f"resident memory once the session was up (base). Medians of {repeats} runs. delta-rs "
        "(one process, whole-process peak RSS) runs the same dry run for reference.",
        "",
        "| files | selected (ours / delta-rs) | listed in executor pids | op s | Python driver "
        "base / peak MB | driver JVM base / peak MB | delta-rs peak MB |",
        "|---:|---|---|---:|---|---|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['files']:,} | {r['selected']:,} / {r['delta_rs_selected']:,} | "
            f"{', '.join(map(str, r['executor_pids']))} | {r['seconds']:.1f} | "
            f"{r['base_py_mb']:.0f} / {r['peak_py_mb']:.0f} | "
            f"{r['base_jvm_mb']:.0f} / {r['peak_jvm_mb']:.0f} | {r['delta_rs_peak_mb']:.0f} |"
        )
    if len(rows) >= 2:
        a, b = rows[0], rows[-1]
        growth = (b["peak_py_mb"] + b["peak_jvm_mb"]) / (a["peak_py_mb"] + a["peak_jvm_mb"])
        lines += [
            "",
            f"Growth from {a['files']:,} to {b['files']:,} files (peak / peak): Python driver "
            f"{b['peak_py_mb'] / a['peak_py_mb']:.2f}x, driver JVM "
            f"{b['peak_jvm_mb'] / a['peak_jvm_mb']:.2f}x, driver in all {growth:.2f}x "
            f"(delta-rs, one process: {b['delta_rs_peak_mb'] / a['delta_rs_peak_mb']:.2f}x).",
        ]
    write_section("VACUUM-CLUSTER", lines, source="bench/vacuum_cluster_bench.py")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--driver", help=argparse.SUPPRESS)
    args = parser.parse_args()
    compile_package()  # as an installed package is: no recompiling in timed processes
    if args.driver:
        driver(args.driver)
        return
    rows = []
    with tempfile.TemporaryDirectory(dir=ROOT / "bench") as work:
        for n in (int(s) for s in args.sizes.split(",")):
            rows.append(bench_size(n, args.repeats, Path(work)))
    write_report(rows, args.repeats)
    print((ROOT / "docs" / "benchmarks.md").read_text())


if __name__ == "__main__":
    main()
