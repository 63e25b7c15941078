"""Deletion-vector tables: OPTIMIZE, Z-order and purge in process against the local-Spark path.

Issue 64 item 5 and its "Done when": a deletion-vector OPTIMIZE or purge from the CLI costs at
most 0.1x the wall of the local-Spark path at 1M rows, with memory within the Z-order budget.

A table with deletion vectors enabled is written by classic local Spark with the project's
Delta jars (``--rows`` rows, ``--files`` small files, rows spread over the files at random),
then copied twice and a DELETE soft-deletes 10 % of one copy's rows and 40 % of the other's
(deletion vectors, no rewrite). For each case, each run on a fresh copy of it, ours and the
local-Spark path alternating (which goes first alternates too), medians of ``--repeats`` runs
of ours and ``--local-repeats`` (default: as many) of the local-Spark path:

- ours: ``python -m python_ops optimize <t> --min-small-files 2 --json``,
  ``python -m python_ops optimize <t> --zorder-by id --full --json`` and
  ``python -m python_ops purge <t> --json``; the JSON must name the in-process writer
  (``python_ops compaction + own commit``, ``python_ops z-order + own commit``,
  ``python_ops purge + own commit``);
- the local-Spark path as the CLI ran it before (a child Python process with classic local
  Spark and Delta 4.4, ``python_ops.delta.writing.local_writer``): a whole process that starts that
  writer and runs Delta's own ``OPTIMIZE delta.`<t>```, ``... ZORDER BY (id)`` or
  ``REORG TABLE delta.`<t>` APPLY (PURGE)``.

Whole processes timed from outside: wall seconds, and peak RSS of the process tree (the sum
of the resident sets of the process and its descendants, the JVM included, sampled from
/proc every 50 ms; never below the kernel's ``ru_maxrss`` of the largest one). After every
run Delta (the bench's own Spark session) reads the table: its row count and
``sum(hash(*))`` must equal the values before the run, and no live file may keep a deletion
vector.

    .venv/bin/python bench/dv_rewrite_bench.py --rows 1000000 --repeats 3
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
import threading
import time
from pathlib import Path
from typing import Any

from modern_bench import session, sql_name
from report import compile_package, write_section

ROOT = Path(__file__).resolve().parent.parent

#: op -> (our CLI arguments after the table, Delta's statement on ``{t}``, our writer's name)
OPS: dict[str, tuple[list[str], str, str]] = {
    "compaction": (
        ["optimize", "--min-small-files", "2"],
        "OPTIMIZE {t}",
        "python_ops compaction + own commit",
    ),
    "z-order": (
        ["optimize", "--zorder-by", "id", "--full"],
        "OPTIMIZE {t} ZORDER BY (id)",
        "python_ops z-order + own commit",
    ),
    "purge": (["purge"], "REORG TABLE {t} APPLY (PURGE)", "python_ops purge + own commit"),
}
#: what a process of ours holds beside the Z-order's budget (bench/zorder_memory_bench.py's goal)
BASELINE_MB = 300
#: deleted share (percent) -> the DELETE's predicate
DELETES = {10: "id % 10 = 0", 40: "id % 5 IN (0, 1)"}
LOCAL_SPARK = (
    "import json, sys\n"
    "from python_ops.delta.writing.local_writer import writer\n"
    "w = writer().sql()\n"
    "print(json.dumps(w.execute(sys.argv[1]), default=str))\n"
)


def tree_rss_kb(root: int) -> int:
    """Resident set of ``root`` and all its descendants now (kB, from /proc)."""
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid = int(entry.name)
        parents[pid] = int(fields[1])
        rss[pid] = int(fields[21]) * (os.sysconf("SC_PAGE_SIZE") // 1024)
    total = 0
    for pid, kb in rss.items():
        walk = pid
        while walk > 1 and walk != root:
            walk = parents.get(walk, 0)
        if walk == root:
            total += kb
    return total


def timed(command: list[str]) -> dict[str, Any]:
    """Run one whole process: wall s, peak RSS MB of its tree, its stdout; raise on failure."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        started = time.perf_counter()
        proc = subprocess.Popen(command, stdout=out, stderr=err, cwd=ROOT, text=True)
        peak = [0]
        done = threading.Event()

        def sample() -> None:
            while not done.wait(0.05):
                peak[0] = max(peak[0], tree_rss_kb(proc.pid))

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        done.set()
        sampler.join()
        proc.returncode = code = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if code != 0:
        raise RuntimeError(f"{command[3:]} exited {code}: {stdout[-800:]} {stderr[-1500:]}")
    return {"wall": wall, "rss_mb": max(peak[0], usage.ru_maxrss) / 1024, "out": stdout}


def ours(op: str, table: Path) -> dict[str, Any]:
    args, _, expected = OPS[op]
    run = timed([sys.executable, "-m", "python_ops", args[0], str(table), *args[1:], "--json"])
    result = json.loads(run["out"])
    if result.get("writer") != expected:
        raise RuntimeError(f"ours {op}: writer {result.get('writer')!r}, not {expected!r}")
    return {**run, "writer": result["writer"]}


def local_spark(op: str, table: Path) -> dict[str, Any]:
    statement = OPS[op][1].format(t=sql_name(table))
    run = timed([sys.executable, "-c", LOCAL_SPARK, statement])
    return {**run, "writer": "Delta 4.4, local Spark (child process)"}


def delta_warm(spark: Any, op: str, table: Path) -> dict[str, Any]:
    """Delta's own statement in the bench's session, already up: no process, no JVM start."""
    statement = OPS[op][1].format(t=sql_name(table))
    started = time.perf_counter()
    spark.sql(statement).collect()
    wall = time.perf_counter() - started
    return {"wall": wall, "rss_mb": 0.0, "out": "", "writer": "Delta 4.4, warm session"}


def fingerprint(spark: Any, table: Path) -> tuple[int, int]:
    """Delta's row count and ``sum(hash(*))`` of the table."""
    row = spark.sql(f"SELECT count(*) n, sum(hash(*)) h FROM {sql_name(table)}").first()
    return int(row["n"]), int(row["h"])


def live_files(table: Path) -> tuple[int, int]:
    """Live files and those of them with a deletion vector (from the log)."""
    from python_ops.delta.state.snapshot import read_snapshot

    files = read_snapshot(str(table)).files
    return len(files), sum(1 for f in files if f.deletion_vector is not None)


def build(spark: Any, work: Path, rows: int, files: int, partitioned: bool) -> dict[int, Path]:
    """The base table, and one copy per deleted share with its DELETE applied."""
    base = work / "base"
    partition = "PARTITIONED BY (p) " if partitioned else ""
    spark.sql(
        f"CREATE TABLE {sql_name(base)} USING delta {partition}"
        "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true') AS "
        f"SELECT /*+ REPARTITION({files}) */ id, id * 3 AS v, CAST(id % 4 AS INT) AS p, "
        f"sha2(CAST(id AS STRING), 256) AS pad FROM range(0, {rows}, 1, 4)"
    ).collect()
    cases = {}
    for share, predicate in DELETES.items():
        table = work / f"deleted_{share}"
        shutil.copytree(base, table)
        spark.sql(f"DELETE FROM {sql_name(table)} WHERE {predicate}").collect()
        cases[share] = table
    shutil.rmtree(base)
    return cases


def run_case(
    spark: Any, source: Path, op: str, repeats: tuple[int, int], work: Path
) -> dict[str, list[dict[str, Any]]]:
    """``repeats`` runs of ours and of the local-Spark path, alternating, each checked."""
    before = fingerprint(spark, source)
    files_before, dv_before = live_files(source)
    runs: dict[str, list[dict[str, Any]]] = {"ours": [], "local Spark": [], "Delta warm": []}

    def warm(op: str, table: Path) -> dict[str, Any]:
        return delta_warm(spark, op, table)

    for repeat in range(max(repeats)):
        order = [("ours", ours), ("Delta warm", warm)] if repeat < repeats[0] else []
        order += [("local Spark", local_spark)] if repeat < repeats[1] else []
        for name, runner in order if repeat % 2 == 0 else order[::-1]:
            copy = work / "copy"
            shutil.copytree(source, copy)
            result = runner(op, copy)
            after = fingerprint(spark, copy)
            if after != before:
                raise RuntimeError(f"{name} {op}: Delta reads {after}, before {before}")
            result["files"], result["dv_files"] = live_files(copy)
            if result["dv_files"]:
                raise RuntimeError(f"{name} {op}: {result['dv_files']} files keep a DV")
            result.update(rows=before[0], files_before=files_before, dv_before=dv_before)
            del result["out"]
            runs[name].append(result)
            print(op, name, {k: round(v, 2) for k, v in result.items() if k in ("wall", "rss_mb")})
            shutil.rmtree(copy)
    return runs


def med(runs: list[dict[str, Any]], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def section(
    results: list[tuple[int, int, str, dict[str, list[dict[str, Any]]]]], args: Any
) -> list[str]:
    from python_ops.ops.optimize.sorting.memory_budget import DEFAULT_MEMORY_BUDGET

    budget_mb = DEFAULT_MEMORY_BUDGET / 2**20
    layout = (
        f"partitioned by p (4 values), {args.files} files per partition"
        if (args.partitioned)
        else f"unpartitioned, {args.files} files"
    )
    command = f".venv/bin/python bench/dv_rewrite_bench.py --rows {' '.join(map(str, args.rows))}"
    command += f" --files {args.files} --repeats {args.repeats}"
    command += f" --local-repeats {args.local_repeats}" if args.local_repeats else ""
    command += " --partitioned" if args.partitioned else ""
    lines = [
        f"## Deletion-vector tables ({', '.join(f'{r:,}' for r in args.rows)} rows): "
        "OPTIMIZE, Z-order and purge in process vs the local-Spark path",
        "",
        f"`{command}` on {time.strftime('%Y-%m-%d')} (main {args.head}): a table with "
        "deletion vectors enabled "
        f"written by Delta 4.4 (local Spark; id, v, p, a 64-character pad; {layout}, rows "
        "spread over the files at random), one copy with 10 % and one with 40 % of its rows "
        "soft-deleted by a DELETE (every file then carries a deletion vector). Each run a whole "
        "process on a fresh copy, ours and the local-Spark path alternating; medians of "
        f"{args.repeats} runs of ours and {args.local_repeats or args.repeats} of the "
        "local-Spark path. Ours: `python -m python_ops optimize <t> --min-small-files 2 --json`, "
        "`... optimize <t> --zorder-by id --full --json`, `python -m python_ops purge <t> "
        "--json` (writers `python_ops compaction / z-order / purge + own commit`, no JVM). "
        "Local Spark: the path the CLI took before, a process that starts "
        "`python_ops.delta.writing.local_writer` (classic local Spark with Delta 4.4 in a child "
        "process) and runs Delta's ``OPTIMIZE delta.`<t>` ``, `... ZORDER BY (id)` or "
        "``REORG TABLE delta.`<t>` APPLY (PURGE)``. Peak RSS: the process tree (the JVM "
        "included), sampled every 50 ms. After every run Delta reads the same row count and "
        "`sum(hash(*))` as before, and no live file keeps a deletion vector. Our purge "
        "rewrites each file with a deletion vector alone (its files stay as many); Delta's "
        "REORG ... APPLY (PURGE) also bin-packs them. Delta warm: the same statement in the "
        "bench's own Spark session, already up and warmed by the table's build (no process, no "
        "JVM start: Delta's op alone, the least a user with a running cluster waits), as many "
        "runs as ours, alternating with them.",
        "",
        "| rows | deleted | op | live files before → after (ours / Delta) | ours wall s | "
        "local Spark wall s | wall ours / local Spark | Delta warm session s | "
        "ours / Delta warm | ours peak RSS MB | local Spark peak RSS MB |",
        "|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    worst: dict[int, float] = {}
    warm_worst: dict[int, float] = {}
    peak_ours = 0.0
    for rows, share, op, runs in results:
        a, b, w = runs["ours"], runs["local Spark"], runs["Delta warm"]
        ratio = med(a, "wall") / med(b, "wall")
        warm_ratio = med(a, "wall") / med(w, "wall")
        warm_worst[rows] = max(warm_worst.get(rows, 0.0), warm_ratio)
        worst[rows] = max(worst.get(rows, 0.0), ratio)
        peak_ours = max(peak_ours, max(r["rss_mb"] for r in a))
        lines.append(
            f"| {rows:,} | {share} % | {op} | {a[0]['files_before']} → {a[0]['files']} / "
            f"{b[0]['files']} | {med(a, 'wall'):.2f} | {med(b, 'wall'):.2f} | {ratio:.3f}x | "
            f"{med(w, 'wall'):.2f} | {warm_ratio:.2f}x | "
            f"{med(a, 'rss_mb'):.0f} | {med(b, 'rss_mb'):.0f} |"
        )
    verdicts = ", ".join(
        f"{rows:,} rows: worst {ratio:.3f}x "
        + (f"({'met' if ratio <= 0.1 else 'NOT met'})" if rows == 1_000_000 else "(no goal)")
        for rows, ratio in worst.items()
    )
    process_mb = budget_mb + BASELINE_MB
    warm_words = ", ".join(f"{rows:,} rows: at most {r:.2f}x" for rows, r in warm_worst.items())
    lines += [
        "",
        f"Goal: ours <= 0.1x the local-Spark wall at 1M rows; {verdicts}. Ours (a whole process, "
        f"interpreter start included) / Delta on a warm session (the op alone): {warm_words}. "
        "Memory: the Z-order "
        f"budget is {budget_mb:.0f} MB (`maintenance_memory_budget` / `--memory-budget`, "
        f"default 1 GiB, python_ops/ops/optimize/sorting/memory_budget.py: the sort's rows, keys "
        f"and "
        f"buffers), and a process may hold {BASELINE_MB} MB beside it (the interpreter, Arrow, "
        f"delta-rs: the goal bench/zorder_memory_bench.py holds, {process_mb:.0f} MB); our "
        f"highest peak RSS of any run was {peak_ours:.0f} MB, "
        f"{'within' if peak_ours <= process_mb else 'ABOVE'} it. "
        f"Load average (1 min) at the start and the end: {args.load_start:.1f}, "
        f"{os.getloadavg()[0]:.1f} (2 cores shared with fuzz campaigns and tests: read the "
        "ratios).",
    ]
    return lines


def main() -> None:
    """Run every case and write its section of docs/benchmarks.md."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000])
    parser.add_argument("--files", type=int, default=100, help="files per partition")
    parser.add_argument("--partitioned", action="store_true", help="partition by p (4 values)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--local-repeats", type=int, help="local-Spark runs (default: --repeats)")
    parser.add_argument("--ops", nargs="+", default=list(OPS), choices=list(OPS))
    parser.add_argument("--no-write", action="store_true", help="print, do not write the doc")
    parser.add_argument(
        "--section",
        default="DV-REWRITE",
        help="the docs/benchmarks.md section to write (DV-REWRITE-10M for a 10M-row run)",
    )
    args = parser.parse_args()
    args.load_start = os.getloadavg()[0]
    head = ["git", "rev-parse", "--short", "HEAD"]
    args.head = subprocess.run(head, cwd=ROOT, capture_output=True, text=True).stdout.strip()
    compile_package()  # as an installed package is: no recompiling in timed processes
    spark = session()
    results = []
    with tempfile.TemporaryDirectory(dir=ROOT / "bench") as tmp:
        for rows in args.rows:
            work = Path(tmp) / str(rows)
            work.mkdir()
            cases = build(spark, work, rows, args.files, args.partitioned)
            for share, table in cases.items():
                for op in args.ops:
                    repeats = (args.repeats, args.local_repeats or args.repeats)
                    runs = run_case(spark, table, op, repeats, work)
                    results.append((rows, share, op, runs))
            shutil.rmtree(work)
    lines = section(results, args)
    print("\n".join(lines))
    if not args.no_write:
        write_section(args.section, lines, source="bench/dv_rewrite_bench.py")


if __name__ == "__main__":
    main()
