"""Modern tables: OPTIMIZE through the lazily started Delta writer beside delta-rs, and a purge.

1. OPTIMIZE, whole processes (``python -m python_ops optimize <t> --json``, no engine given):
   the same small-file table twice, once plain (delta-rs writes it, in the process) and once
   with deletion vectors enabled (delta-rs cannot write it: the CLI starts a local Spark with
   Delta 4.4 in a child process, runs Delta's OPTIMIZE there and stops it). Each run on a
   fresh copy; the two alternate; medians and the ratio.
2. Purge: a table with deletion vectors where a DELETE soft-deleted 20 % of the rows
   (``python -m python_ops purge <t> --json``, whole process, the same lazily started
   writer): files, bytes of the live files and Delta's read time of the table (a full scan,
   median of 5 in one warm session) before and after; Delta reads the same rows.

    .venv/bin/python bench/modern_bench.py --repeats 3
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
from typing import Any

from report import compile_package, write_section

ROOT = Path(__file__).resolve().parent.parent


def session() -> Any:
    """Classic local Spark with the project's Delta jars (the tables' author and reader)."""
    from pyspark.sql import SparkSession

    from python_ops.delta_jars import LOCAL_CONF, require_delta_jars, session_conf

    builder = SparkSession.builder.master("local[2]").appName("modern-bench")
    for key, value in {**session_conf(require_delta_jars()), **LOCAL_CONF}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def sql_name(path: Path) -> str:
    return "delta.`" + str(path).replace("`", "``") + "`"


def cli(*args: str) -> dict[str, Any]:
    """One whole ``python -m python_ops`` process: wall s, peak RSS MB, its JSON."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "python_ops", *args, "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=ROOT,
        text=True,
    )
    out = proc.stdout.read() if proc.stdout else ""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{args} exited {os.waitstatus_to_exitcode(status)}: {out[-500:]}")
    return {"wall": wall, "rss_mb": usage.ru_maxrss / 1024, **json.loads(out)}


def small_files(path: Path, files: int) -> None:
    """``files`` one-batch appends of 2,000 rows (delta-rs), unpartitioned."""
    import pyarrow as pa
    from deltalake import write_deltalake

    for i in range(files):
        ids = pa.array(range(i * 2000, (i + 1) * 2000), pa.int64())
        write_deltalake(
            str(path), pa.table({"id": ids, "v": pa.compute.multiply(ids, 3)}), mode="append"
        )


def bench_optimize(spark: Any, files: int, repeats: int, work: Path) -> list[str]:
    plain, dv = work / "plain", work / "dv"
    small_files(plain, files)
    shutil.copytree(plain, dv)
    spark.sql(
        f"ALTER TABLE {sql_name(dv)} SET TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')"
    ).collect()
    runs: dict[str, list[dict[str, Any]]] = {"delta-rs (plain table)": [], "Delta (DV table)": []}
    for _ in range(repeats):
        for name, source in (("delta-rs (plain table)", plain), ("Delta (DV table)", dv)):
            copy = work / "copy"
            shutil.copytree(source, copy)
            result = cli("optimize", str(copy), "--min-small-files", "2")
            count = spark.sql(f"SELECT count(*) n, sum(v) s FROM {sql_name(copy)}").first()
            result["rows"], result["checksum"] = int(count["n"]), int(count["s"])
            runs[name].append(result)
            print(name, {k: result[k] for k in ("wall", "rss_mb", "writer")}, flush=True)
            shutil.rmtree(copy)
    rs, delta = runs["delta-rs (plain table)"], runs["Delta (DV table)"]

    def med(r: list[dict[str, Any]], key: str) -> float:
        return statistics.median(x[key] for x in r)

    lines = [
        f"## OPTIMIZE: delta-rs beside the lazily started Delta writer ({files} small files)",
        "",
        f"`python -m python_ops optimize <t> --min-small-files 2 --json`, whole processes, each on "
        f"a fresh copy, alternating; medians of {repeats}. The same {files} files of 2,000 rows; "
        "the second table only has deletion vectors enabled, which delta-rs cannot write, so "
        "the process starts a local Spark with Delta 4.4 (child process) and Delta's OPTIMIZE "
        "rewrites it. Delta reads both afterwards.",
        "",
        "| table | writer | files removed / added | rows, sum(v) after | wall s | "
        "Python peak RSS MB |",
        "|---|---|---|---|---:|---:|",
    ]
    for name, r in runs.items():
        lines.append(
            f"| {name} | {r[0]['writer']} | {r[0]['files_removed']} / {r[0]['files_added']} | "
            f"{r[0]['rows']:,}, {r[0]['checksum']:,} | {med(r, 'wall'):.2f} | "
            f"{med(r, 'rss_mb'):.0f} |"
        )
    lines += [
        "",
        "Peak RSS is the CLI's Python process; the Delta writer's JVM is a process of its own, "
        "not counted there. "
        f"Delta writer / delta-rs: wall {med(delta, 'wall') / med(rs, 'wall'):.1f}x (the JVM "
        "start is most of it; a run that needs it pays it once and reuses the writer for every "
        "table after).",
    ]
    return lines


def read_time(spark: Any, path: Path) -> float:
    """Median of 5 full scans of the table by Delta (warm session)."""
    times = []
    for _ in range(5):
        started = time.perf_counter()
        spark.sql(f"SELECT sum(v), count(*) FROM {sql_name(path)}").collect()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def live(spark: Any, path: Path) -> tuple[int, int]:
    detail = spark.sql(f"DESCRIBE DETAIL {sql_name(path)}").first()
    return int(detail["numFiles"]), int(detail["sizeInBytes"])


def bench_purge(spark: Any, rows: int, work: Path) -> list[str]:
    table = work / "purge"
    spark.sql(
        f"CREATE TABLE {sql_name(table)} USING delta "
        "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true') AS "
        f"SELECT id, id * 3 AS v, repeat('x', 40) AS pad FROM range(0, {rows}, 1, 8)"
    ).collect()
    spark.sql(f"DELETE FROM {sql_name(table)} WHERE id % 5 = 0").collect()
    before_rows = spark.sql(f"SELECT count(*) n, sum(v) s FROM {sql_name(table)}").first()
    files_before, bytes_before = live(spark, table)
    read_before = read_time(spark, table)
    result = cli("purge", str(table))
    files_after, bytes_after = live(spark, table)
    read_after = read_time(spark, table)
    after_rows = spark.sql(f"SELECT count(*) n, sum(v) s FROM {sql_name(table)}").first()
    assert tuple(after_rows) == tuple(before_rows), (before_rows, after_rows)
    return [
        f"## Purge: {rows:,} rows, 20 % soft-deleted by a DELETE (deletion vectors)",
        "",
        "`python -m python_ops purge <t> --json` (whole process; it starts the local Delta "
        "writer, which runs `REORG TABLE ... APPLY (PURGE)`). Live files and bytes from Delta's "
        "`DESCRIBE DETAIL`; read time: Delta's full scan (`sum(v), count(*)`), median of 5 in "
        "one warm session. Delta reads the same rows before and after "
        f"({int(before_rows['n']):,} rows).",
        "",
        "| | live files | live bytes | Delta full scan s |",
        "|---|---:|---:|---:|",
        f"| before | {files_before} | {bytes_before:,} | {read_before:.3f} |",
        f"| after | {files_after} | {bytes_after:,} | {read_after:.3f} |",
        "",
        f"The purge: {result['files_removed']} files rewritten into {result['files_added']}, "
        f"{result['deleted_rows']:,} soft-deleted rows dropped; live bytes "
        f"{bytes_after / bytes_before:.2f}x, scan {read_after / read_before:.2f}x; whole process "
        f"{result['wall']:.1f} s ({result['writer']}). The old files stay until VACUUM.",
    ]


def main() -> None:
    """Run both and write their section of docs/benchmarks.md."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=40)
    parser.add_argument("--purge-rows", type=int, default=2_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    compile_package()  # as an installed package is: no recompiling in timed processes
    spark = session()
    with tempfile.TemporaryDirectory(dir=ROOT / "bench") as work:
        lines = bench_optimize(spark, args.files, args.repeats, Path(work))
        lines += ["", *bench_purge(spark, args.purge_rows, Path(work))]
    write_section("MODERN", lines, source="bench/modern_bench.py")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
