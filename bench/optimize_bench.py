"""OPTIMIZE benchmark: compaction overhead vs delta-rs, Z-order file skipping, read time on Sail.

Two generated tables of ``--rows`` rows (customer_id, event_ts, amount, country) in about
``--files`` small files, rows in random order: one unpartitioned, one partitioned by ``date``
(``--days`` days). For each:

- compaction: ``python_ops.ops.optimize.optimize`` vs ``DeltaTable.optimize.compact()`` on
  identical fresh copies, each in a fresh process, ``--repeats`` times; medians and the ratio;
- Z-order on (customer_id, event_ts) with a target size giving ~``--zorder-files`` files: the
  average number of files whose min/max statistics admit a value, for 50 random point lookups on
  each column, before, after ours and after delta-rs's ``z_order``;
- a selective query (one customer; one minute of events) on the embedded engine (Sail), before
  and after our Z-order, median of 5.

Results go to docs/benchmarks.md between the OPTIMIZE markers.

    .venv/bin/python bench/optimize_bench.py --rows 10000000 --files 2000 --repeats 3
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
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
START_S = 1_704_067_200  # 2024-01-01T00:00:00Z
COLUMNS = ["customer_id", "event_ts"]
CUSTOMERS = 1_000_000

OURS = """
import json, sys, time
import pyarrow.parquet, deltalake  # loaded before timing in both runners
from python_ops.ops.optimize.execute import optimize
started = time.perf_counter()
r = optimize(sys.argv[1], zorder_by=json.loads(sys.argv[2]) or None,
             target_size_bytes=int(sys.argv[3]) or None, full=True, min_small_files=2)
print(json.dumps({"seconds": time.perf_counter() - started, "added": r.files_added,
                  "removed": r.files_removed}))
"""

DELTA_RS = """
import json, sys, time
import pyarrow.parquet, deltalake
from deltalake import DeltaTable
columns, target = json.loads(sys.argv[2]), int(sys.argv[3]) or None
started = time.perf_counter()
t = DeltaTable(sys.argv[1])
m = t.optimize.z_order(columns, target_size=target) if columns else t.optimize.compact(
    target_size=target)
print(json.dumps({"seconds": time.perf_counter() - started, "added": m["numFilesAdded"],
                  "removed": m["numFilesRemoved"]}))
"""


def generate(path: Path, *, rows: int, files: int, days: int, partitioned: bool) -> None:
    """Random rows in random order, written by delta-rs into about ``files`` files."""
    import numpy as np
    import pyarrow as pa
    from deltalake import write_deltalake

    rng = np.random.default_rng(42)
    ts = rng.integers(START_S * 10**6, (START_S + days * 86400) * 10**6, rows)
    countries = np.array(["DE", "FR", "US", "GB", "IT", "ES", "NL", "PL", "SE", "JP"])
    data = {
        "customer_id": rng.integers(0, CUSTOMERS, rows),
        "event_ts": pa.array(ts, pa.timestamp("us", "UTC")),
        "amount": np.round(rng.random(rows) * 500, 2),
        "country": pa.array(countries[rng.integers(0, len(countries), rows)]),
    }
    if partitioned:
        day = (ts // 10**6 - START_S) // 86400
        data["date"] = pa.array(
            [str(dt.date(2024, 1, 1) + dt.timedelta(days=int(d))) for d in range(days)]
        ).take(pa.array(day))
    table = pa.table(data)
    bytes_per_row = 25  # measured: ~25 bytes/row compressed for this schema
    target = max(1, rows * bytes_per_row // files)
    reader = pa.RecordBatchReader.from_batches(table.schema, table.to_batches(50_000))
    write_deltalake(
        str(path), reader, partition_by=["date"] if partitioned else None, target_file_size=target
    )


def run(script: str, table: Path, columns: list[str], target: int) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-c", script, str(table), json.dumps(columns), str(target)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def _micros(value: Any) -> int:
    text = str(value).rstrip("Z")
    moment = dt.datetime.fromisoformat(text).replace(tzinfo=dt.UTC)
    return int(moment.timestamp() * 10**6)


def admitted(table: Path, lookups: dict[str, list[int]]) -> dict[str, float]:
    """Average number of files whose min/max admit each lookup value, per column."""
    from python_ops.delta.state.snapshot import read_snapshot

    files = read_snapshot(str(table), with_stats=True).files
    out = {}
    for column, values in lookups.items():
        bounds = []
        for f in files:
            stats = json.loads(f.stats or "{}")
            lo, hi = stats["minValues"][column], stats["maxValues"][column]
            if column == "event_ts":
                lo, hi = _micros(lo), _micros(hi)
            bounds.append((lo, hi))
        out[column] = sum(sum(1 for lo, hi in bounds if lo <= v <= hi) for v in values) / len(
            values
        )
    out["files"] = len(files)
    return out


def read_times(
    tables: dict[str, Path], lookups: dict[str, list[int]]
) -> dict[str, dict[str, float]]:
    """Median seconds of a one-customer and a one-minute query on the embedded engine."""
    from python_ops.spark_sessions import SailEngine

    engine = SailEngine()
    spark = engine.spark
    out: dict[str, dict[str, float]] = {}
    try:
        for label, path in tables.items():
            df = spark.read.format("delta").load(str(path))
            df.createOrReplaceTempView("t")
            spark.sql("select count(*) from t").collect()  # warm the session and the cache
            queries = {
                "customer_id": [
                    f"select count(*), sum(amount) from t where customer_id = {c}"
                    for c in lookups["customer_id"][:5]
                ],
                "event_ts": [
                    "select count(*), sum(amount) from t where event_ts between "
                    f"timestamp_micros({m}) and timestamp_micros({m + 60 * 10**6})"
                    for m in lookups["event_ts"][:5]
                ],
            }
            out[label] = {}
            for column, sqls in queries.items():
                seconds = []
                for sql in sqls:
                    started = time.perf_counter()
                    spark.sql(sql).collect()
                    seconds.append(time.perf_counter() - started)
                out[label][column] = statistics.median(seconds)
    finally:
        engine.stop()
    return out


def bench_variant(
    work: Path, *, partitioned: bool, args: argparse.Namespace
) -> tuple[list[str], dict[str, Any]]:
    label = f"partitioned by date ({args.days} days)" if partitioned else "unpartitioned"
    work = work / ("partitioned" if partitioned else "unpartitioned")
    base = work / "base"
    generate(base, rows=args.rows, files=args.files, days=args.days, partitioned=partitioned)
    from python_ops.delta.state.snapshot import read_snapshot

    snap = read_snapshot(str(base))
    size = sum(f.size_bytes for f in snap.files)
    print(f"{label}: {len(snap.files)} files, {size / 1e6:.0f} MB", flush=True)

    ours_s, rs_s = [], []
    for i in range(args.repeats):
        a, b = work / f"c_ours_{i}", work / f"c_rs_{i}"
        shutil.copytree(base, a)
        shutil.copytree(base, b)
        order = [(OURS, a, ours_s), (DELTA_RS, b, rs_s)]
        for script, path, sink in order if i % 2 == 0 else order[::-1]:
            r = run(script, path, [], 0)
            sink.append(r["seconds"])
            print(f"  compaction {'ours' if script is OURS else 'delta-rs'}: {r}", flush=True)
        compacted = a
    rows_compact = {
        "ours": statistics.median(ours_s),
        "delta_rs": statistics.median(rs_s),
        "files_after": len(read_snapshot(str(compacted)).files),
    }

    rng = random.Random(11)
    lookups = {
        "customer_id": [rng.randrange(CUSTOMERS) for _ in range(50)],
        "event_ts": [
            rng.randrange(START_S * 10**6, (START_S + args.days * 86400) * 10**6) for _ in range(50)
        ],
    }
    target = max(1, size // args.zorder_files)
    z_ours, z_rs = work / "z_ours", work / "z_rs"
    shutil.copytree(base, z_ours)
    shutil.copytree(base, z_rs)
    t_ours = run(OURS, z_ours, COLUMNS, target)
    t_rs = run(DELTA_RS, z_rs, COLUMNS, target)
    print(f"  z-order ours {t_ours}, delta-rs {t_rs}", flush=True)
    skipping = {
        "before": admitted(base, lookups),
        "ours": admitted(z_ours, lookups),
        "delta_rs": admitted(z_rs, lookups),
    }
    print(f"  skipping {skipping}", flush=True)
    reads = read_times({"before": base, "compacted": compacted, "z-ordered": z_ours}, lookups)
    print(f"  reads {reads}", flush=True)
    data = {
        "label": label,
        "files": len(snap.files),
        "mb": size / 1e6,
        "compact": rows_compact,
        "zorder_seconds": {"ours": t_ours["seconds"], "delta_rs": t_rs["seconds"]},
        "skipping": skipping,
        "reads": reads,
    }
    return render(data, args), data


def render(d: dict[str, Any], args: argparse.Namespace) -> list[str]:
    c, s, r = d["compact"], d["skipping"], d["reads"]
    f = s["ours"]["files"]
    bound = 3 * f**0.5
    lines = [
        f"### {d['label']}: {args.rows:,} rows in {d['files']:,} files ({d['mb']:.0f} MB)",
        "",
        "| compaction | ours (s) | delta-rs (s) | ratio | files after |",
        "|---|---|---|---|---|",
        f"| median of {args.repeats} | {c['ours']:.2f} | {c['delta_rs']:.2f} | "
        f"{c['ours'] / c['delta_rs']:.2f}x | {c['files_after']} |",
        "",
        "| Z-order (customer_id, event_ts) | files F | admitted per customer_id lookup | "
        "admitted per event_ts lookup | seconds |",
        "|---|---|---|---|---|",
        f"| before (random small files) | {s['before']['files']} | "
        f"{s['before']['customer_id']:.1f} | {s['before']['event_ts']:.1f} | |",
        f"| python_ops (range ids) | {f} | {s['ours']['customer_id']:.1f} | "
        f"{s['ours']['event_ts']:.1f} | {d['zorder_seconds']['ours']:.1f} |",
        f"| delta-rs z_order (raw bytes) | {s['delta_rs']['files']} | "
        f"{s['delta_rs']['customer_id']:.1f} | {s['delta_rs']['event_ts']:.1f} | "
        f"{d['zorder_seconds']['delta_rs']:.1f} |",
        "",
        f"Target 3·√F = {bound:.1f} for F = {f}: customer_id "
        f"{'met' if s['ours']['customer_id'] <= bound else 'NOT met'}, event_ts "
        f"{'met' if s['ours']['event_ts'] <= bound else 'NOT met'}.",
        "",
        "| selective query on Sail (median of 5) | before | compacted | Z-ordered |",
        "|---|---|---|---|",
    ]
    for column, what in (("customer_id", "one customer"), ("event_ts", "one minute")):
        lines.append(
            f"| {what} | {r['before'][column]:.3f} s | {r['compacted'][column]:.3f} s | "
            f"{r['z-ordered'][column]:.3f} s |"
        )
    return [*lines, ""]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--days", type=int, default=4)
    parser.add_argument("--zorder-files", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--keep", action="store_true", help="keep the generated tables")
    args = parser.parse_args()
    compile_package()  # as an installed package is: no recompiling in timed processes
    work = Path(tempfile.mkdtemp(prefix="optimize-bench-"))
    try:
        lines = [
            "## OPTIMIZE: compaction overhead, Z-order skipping, read time",
            "",
            f"`bench/optimize_bench.py --rows {args.rows} --files {args.files} --days "
            f"{args.days} --zorder-files {args.zorder_files} --repeats {args.repeats}`; every "
            "run in a fresh process on a fresh copy; compaction with the default 100 MiB "
            "target. 'admitted' = files whose min/max statistics admit the value (50 random "
            "point lookups per column), i.e. files a reader must open.",
            "",
        ]
        for partitioned in (False, True):
            variant, _ = bench_variant(work, partitioned=partitioned, args=args)
            lines += variant
        write_section("OPTIMIZE", lines, source="bench/optimize_bench.py")
        print("\n".join(lines))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"tables kept in {work}", file=sys.stderr)


if __name__ == "__main__":
    main()
