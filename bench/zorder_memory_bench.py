"""Z-order memory benchmark: peak RSS and wall of ours (external sort) vs delta-rs's z_order.

For each ``--rows`` size, an unpartitioned table (customer_id bigint, event_ts timestamp, amount
double, country string; random rows in random order, about ``--input-files`` files) is written
by delta-rs in a temporary directory, in chunks, so generating it holds only a chunk. Each
repeat Z-orders fresh copies on (customer_id, event_ts) with a target size giving about
``--zorder-files`` files, every run a whole process under ``/usr/bin/time -v`` (its maximum
resident set size and elapsed time):

- ours: ``python -m python_ops optimize <table> --zorder-by ... --full --memory-budget B``;
- before: the same command on the code of ``--before`` (the in-memory Z-order), when given;
- delta-rs: ``DeltaTable(path).optimize.z_order(columns, target_size=...)``.

Above ``--in-memory-max-rows`` only ours runs (the in-memory writers would need several times
the machine's memory there: 4.3x / 2.7x the Parquet size, measured at 16M rows). Quality: the
average number of files whose min/max statistics admit a value, for 50 random point lookups on
each column (files a reader must open), against 3·sqrt(F). Medians and ratios go to
docs/benchmarks.md between the ZORDER-MEMORY markers.

    .venv/bin/python bench/zorder_memory_bench.py --rows 4000000 16000000 --repeats 3 \
        --before /tmp/python_ops-6a03820
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from optimize_bench import CUSTOMERS, START_S, admitted
from report import compile_package, write_section

ROOT = Path(__file__).resolve().parent.parent
COLUMNS = ["customer_id", "event_ts"]
CHUNK_ROWS = 2_000_000
DAYS = 4

DELTA_RS = """
import json, sys
from deltalake import DeltaTable
m = DeltaTable(sys.argv[1]).optimize.z_order(json.loads(sys.argv[2]), target_size=int(sys.argv[3]))
print(json.dumps({"added": m["numFilesAdded"], "removed": m["numFilesRemoved"]}))
"""


def generate(path: Path, *, rows: int, files: int) -> None:
    """Random rows in random order, appended by delta-rs a chunk at a time."""
    import numpy as np
    import pyarrow as pa
    from deltalake import write_deltalake

    rng = np.random.default_rng(42)
    countries = np.array(["DE", "FR", "US", "GB", "IT", "ES", "NL", "PL", "SE", "JP"])
    per_file = max(1, rows // files) * 34  # ~34 bytes a row compressed (measured)
    done = 0
    while done < rows:
        n = min(CHUNK_ROWS, rows - done)
        ts = rng.integers(START_S * 10**6, (START_S + DAYS * 86400) * 10**6, n)
        table = pa.table(
            {
                "customer_id": rng.integers(0, CUSTOMERS, n),
                "event_ts": pa.array(ts, pa.timestamp("us", "UTC")),
                "amount": np.round(rng.random(n) * 500, 2),
                "country": pa.array(countries[rng.integers(0, len(countries), n)]),
            }
        )
        write_deltalake(str(path), table, mode="append", target_file_size=per_file)
        done += n


def timed(
    command: list[str], env: dict[str, str] | None = None, cwd: Path = ROOT
) -> dict[str, float]:
    """Run ``command`` under /usr/bin/time -v: its peak RSS (MB) and wall seconds."""
    out = subprocess.run(
        ["/usr/bin/time", "-v", *command],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        check=False,
    )
    if out.returncode != 0:
        raise RuntimeError(f"{command[:4]} failed: {out.stderr[-2000:]}")
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", out.stderr)
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", out.stderr)
    assert rss, out.stderr[-2000:]
    assert wall, out.stderr[-2000:]
    seconds = 0.0
    for part in wall.group(1).split(":"):
        seconds = seconds * 60 + float(part)
    cpu = re.findall(r"(?:User|System) time \(seconds\): ([\d.]+)", out.stderr)
    # the machine is shared: CPU seconds (user + system) vary less with other load than the
    # wall; the 1-minute load average as the run ended, to read the walls by
    return {
        "rss_mb": int(rss.group(1)) / 1024,
        "wall_s": seconds,
        "cpu_s": sum(float(c) for c in cpu),
        "load": os.getloadavg()[0],
    }


def ours(table: Path, target: int, budget: str, code: Path) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(code)}
    command = [sys.executable, "-m", "python_ops", "optimize", str(table), "--zorder-by"]
    command += [",".join(COLUMNS), "--full", "--target-size", str(target), "--json"]
    if budget:
        command += ["--memory-budget", budget]
    return timed(command, env, cwd=code)  # ``-m`` puts the working directory first on the path


def delta_rs(table: Path, target: int) -> dict[str, float]:
    return timed([sys.executable, "-c", DELTA_RS, str(table), json.dumps(COLUMNS), str(target)])


def bench_size(work: Path, rows: int, args: argparse.Namespace) -> dict[str, Any]:
    """Every runner on fresh copies of one generated table; medians and quality."""
    from python_ops.delta.state.snapshot import read_snapshot

    kept = Path(args.tables) / f"base-{rows}" if args.tables else None
    base = kept or work / f"base-{rows}"
    if not base.exists():
        generate(work / "generating", rows=rows, files=args.input_files)
        shutil.move(str(work / "generating"), str(base))
    size = sum(f.size_bytes for f in read_snapshot(str(base)).files)
    target = max(1, size // args.zorder_files)
    print(f"{rows:,} rows: {size / 1e6:.0f} MB, target {target}", flush=True)
    in_memory = rows <= args.in_memory_max_rows
    code = Path(args.code) if args.code else ROOT
    runners: dict[str, Any] = {"ours": lambda p: ours(p, target, args.budget, code)}
    if in_memory:
        runners["delta_rs"] = lambda p: delta_rs(p, target)
        if args.before:
            runners["before"] = lambda p: ours(p, target, "", Path(args.before))
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in runners}
    quality: dict[str, Any] = {}
    repeats = args.repeats if in_memory else args.large_repeats
    for i in range(repeats):
        names = list(runners) if i % 2 == 0 else list(runners)[::-1]
        for name in names:
            copy = work / f"{name}-{rows}-{i}"
            shutil.copytree(base, copy)
            runs[name].append(runners[name](copy))
            print(f"  {name} #{i}: {runs[name][-1]}", flush=True)
            if i == 0:
                quality[name] = admitted(copy, lookups(args))
            shutil.rmtree(copy)
    quality["before_optimize"] = admitted(base, lookups(args))
    if kept is None:
        shutil.rmtree(base)
    medians = {
        name: {k: statistics.median(r[k] for r in values) for k in ("rss_mb", "wall_s", "cpu_s")}
        for name, values in runs.items()
    }
    loads = [r["load"] for values in runs.values() for r in values]
    return {
        "rows": rows,
        "mb": size / 1e6,
        "medians": medians,
        "quality": quality,
        "n": repeats,
        "load": [min(loads), max(loads)],
    }


def lookups(args: argparse.Namespace) -> dict[str, list[int]]:
    rng = random.Random(11)
    return {
        "customer_id": [rng.randrange(CUSTOMERS) for _ in range(50)],
        "event_ts": [
            rng.randrange(START_S * 10**6, (START_S + DAYS * 86400) * 10**6) for _ in range(50)
        ],
    }


def render(results: list[dict[str, Any]], args: argparse.Namespace) -> list[str]:
    budget_mb = _budget_mb(args.budget)
    lines = [
        "## Z-order in bounded memory (external sort) vs delta-rs",
        "",
        f"`bench/zorder_memory_bench.py --rows {' '.join(str(r) for r in args.rows)} "
        f"--repeats {args.repeats} --budget {args.budget}`: unpartitioned table (customer_id, "
        "event_ts, amount, country; random rows), Z-order on (customer_id, event_ts) into about "
        f"{args.zorder_files} files; each run a whole process on a fresh copy under "
        "`/usr/bin/time -v` (peak RSS = maximum resident set size). 'before' = the Z-order of "
        f"{args.before_label}. Goal: ours peak RSS <= budget + 300 MB "
        f"({budget_mb + 300:.0f} MB), wall <= 0.8x delta-rs at 16M rows.",
        "",
        "| rows | Parquet MB | runs | ours RSS MB | ours s | before RSS MB | before s | "
        "delta-rs RSS MB | delta-rs s | RSS ours/delta-rs | wall ours/delta-rs | ours CPU s | "
        "before CPU s | delta-rs CPU s | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        m = r["medians"]
        o, b, d = m["ours"], m.get("before"), m.get("delta_rs")

        def cell(x: dict[str, float] | None, k: str, fmt: str) -> str:
            if not x:
                return "not run"
            return format(x[k], fmt) if k in x else "not recorded"

        ratio_rss = f"{o['rss_mb'] / d['rss_mb']:.2f}x" if d else ""
        ratio_wall = f"{o['wall_s'] / d['wall_s']:.2f}x" if d else ""
        lines.append(
            f"| {r['rows']:,} | {r['mb']:.0f} | {r['n']} | {o['rss_mb']:.0f} | "
            f"{o['wall_s']:.1f} | {cell(b, 'rss_mb', '.0f')} | {cell(b, 'wall_s', '.1f')} | "
            f"{cell(d, 'rss_mb', '.0f')} | {cell(d, 'wall_s', '.1f')} | {ratio_rss} | "
            f"{ratio_wall} | {cell(o, 'cpu_s', '.1f')} | {cell(b, 'cpu_s', '.1f')} | "
            f"{cell(d, 'cpu_s', '.1f')} | {_load(r)} |"
        )
    lines += [
        "",
        f"Above {args.in_memory_max_rows:,} rows only ours runs (one repeat, "
        "`--large-repeats`): the in-memory writers hold about 4-5x the table's Parquet size "
        "there, more than this machine has. 'runs' = repeats; 'load' = the 1-minute load "
        "average as the runs ended (lowest-highest); CPU s = user + system seconds of the process; "
        "wall times are of a shared 2-core "
        "machine under other load, so read the ratios of one size (runners alternate order).",
        "",
        "| rows | writer | files F | admitted per customer_id lookup | admitted per event_ts "
        "lookup | 3·√F |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        for name, q in r["quality"].items():
            lines.append(
                f"| {r['rows']:,} | {name} | {q['files']} | {q['customer_id']:.1f} | "
                f"{q['event_ts']:.1f} | {3 * q['files'] ** 0.5:.1f} |"
            )
    return [*lines, ""]


def _load(result: dict[str, Any]) -> str:
    low, high = result.get("load") or (None, None)
    return f"{low:.1f}-{high:.1f}" if low is not None else "not recorded"


def _budget_mb(text: str) -> float:
    from python_ops.maintenance.configuration.config import parse_size

    return parse_size("", "--budget", text) / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--rows",
        type=int,
        nargs="*",
        default=[4_000_000, 16_000_000],
        help="table sizes (none: only render --results)",
    )
    parser.add_argument("--input-files", type=int, default=64)
    parser.add_argument("--zorder-files", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--large-repeats", type=int, default=1)
    parser.add_argument("--budget", default="1GiB")
    parser.add_argument("--in-memory-max-rows", type=int, default=40_000_000)
    parser.add_argument("--before", default=None, help="a checkout of the in-memory code")
    parser.add_argument("--before-label", default="main 6a03820")
    parser.add_argument("--work", default=None, help="where tables are generated (temp dir)")
    parser.add_argument(
        "--tables", default=None, help="keep generated tables here and reuse them (rerun)"
    )
    parser.add_argument("--code", default=None, help="a checkout of ours (default: this one)")
    parser.add_argument(
        "--results", default=None, help="a JSON file of earlier sizes' results, kept up to date"
    )
    args = parser.parse_args()
    compile_package()
    work = Path(tempfile.mkdtemp(prefix="zorder-memory-bench-", dir=args.work))
    saved = Path(args.results) if args.results else None
    try:
        results = json.loads(saved.read_text()) if saved and saved.exists() else []
        for rows in args.rows:
            results = [r for r in results if r["rows"] != rows]
            results.append(bench_size(work, rows, args))
            results.sort(key=lambda r: int(r["rows"]))
            print(json.dumps(results[-1]), flush=True)
            if saved:
                saved.write_text(json.dumps(results))
        args.rows = [r["rows"] for r in results]
        lines = render(results, args)
        write_section("ZORDER-MEMORY", lines, source="bench/zorder_memory_bench.py")
        print("\n".join(lines))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
