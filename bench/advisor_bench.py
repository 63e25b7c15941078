"""The maintenance advisor and ``maintenance_zorder_by: auto`` on a generated project.

A 10M-row incremental model (``events``, appended in batches, each batch's files spanning every
key) is read by downstream table models that filter and join it on two columns
(``customer_id``: equality and IN; ``product_id``: equality, BETWEEN and a join through a CTE).
Every step is a whole process (engine start included):

1. ``dbt run`` of the batches and ``dbt compile`` on the embedded engine (setup, not timed);
   a second project with the same models and a ``mode: local`` profile (JVM Spark with Delta
   4.4) registers the embedded-built ``events`` and ``products`` by location
   (``bench/advisor_spark.py``), so both engines read the same Delta files; a copy of
   ``events`` is kept for Delta's own Z-order;
2. before: ``python -m python_ops advise --json`` (files admitted per lookup per column),
   ``dbt run`` of the downstream models on each engine, timed (median of ``--repeat``), and
   Delta's files read (its scan metric ``numFiles``) for each downstream filter;
3. ``python -m python_ops maintain --ops optimize`` (embedded profile: the auto Z-order by
   delta-rs), timed;
4. after: the same measurements;
5. Delta's own ``OPTIMIZE ... ZORDER BY`` on the copy, timed, and its files read.

Results go to docs/benchmarks.md (``--no-report``: print only).

    .venv/bin/python bench/advisor_bench.py [--rows 10000000] [--batches 10] [--repeat 3]
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

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.advisor_spark import LOOKUPS, delta_scan, delta_zorder, write_spark_project
from bench.report import compile_package, write_section
from python_ops.maintenance.configuration.config import parse_size

ROOT = Path(__file__).resolve().parent.parent
PROJECT = """
name: advbench
version: "1.0"
config-version: 2
profile: advbench
models:
  advbench:
    +file_format: delta
    +materialized: table
"""
PROFILES = """
advbench:
  target: embedded
  outputs:
    embedded:
      type: sparkdelta
      method: session
      mode: embedded
      schema: bench
      warehouse: "{warehouse}"
      engine_port: 0
      threads: 1
"""
EVENTS = """
{{{{ config(materialized='incremental', incremental_strategy='append',
           maintenance_zorder_by='auto', maintenance_target_file_size='{target}') }}}}
select
  cast(id as bigint) as event_id,
  cast(pmod(id * 2654435761, {customers}) as bigint) as customer_id,
  cast(pmod(id * 40503, {products}) as bigint) as product_id,
  cast(pmod(id * 13, 1000) as double) / 10 as amount,
  date_add(date'2024-01-01', cast(pmod(id, 365) as int)) as event_date
from range({{{{ var('batch') }}}} * {per_batch}, ({{{{ var('batch') }}}} + 1) * {per_batch}, 1, 4)
"""
PRODUCTS = """
select cast(id as bigint) as product_id, concat('p', id) as name,
       element_at(array('toys', 'books', 'food'), cast(pmod(id, 3) + 1 as int)) as category
from range(0, {products})
"""
DOWNSTREAM = {
    "customer_one": "select * from {{ ref('events') }} where customer_id = 4242",
    "customer_few": (
        "select customer_id, sum(amount) as amount from {{ ref('events') }} "
        "where customer_id in (17, 4242, 90001) group by customer_id"
    ),
    "product_one": "select count(*) as n from {{ ref('events') }} where product_id = 77",
    "product_range": (
        "select product_id, count(*) as n from {{ ref('events') }} "
        "where product_id between 100 and 110 group by product_id"
    ),
    "product_join": (
        "with e as (select product_id as pid, amount from {{ ref('events') }} "
        "where product_id < 20)\n"
        "select p.category, sum(e.amount) as amount from e join {{ ref('products') }} p "
        "on e.pid = p.product_id group by p.category"
    ),
}
COLUMNS = ("customer_id", "product_id")


def write_project(root: Path, warehouse: Path, args: argparse.Namespace) -> None:
    """The generated project."""
    (root / "models").mkdir(parents=True)
    (root / "dbt_project.yml").write_text(PROJECT)
    (root / "profiles.yml").write_text(PROFILES.format(warehouse=warehouse))
    (root / "models" / "events.sql").write_text(
        EVENTS.format(
            target=args.target,
            customers=args.customers,
            products=args.products,
            per_batch=args.rows // args.batches,
        )
    )
    (root / "models" / "products.sql").write_text(PRODUCTS.format(products=args.products))
    for name, sql in DOWNSTREAM.items():
        (root / "models" / f"{name}.sql").write_text(sql + "\n")


def run(command: list[str], cwd: Path) -> float:
    """Run a whole process; its wall seconds."""
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(
            f"{' '.join(command)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        )
    return wall


def dbt(project: Path, *args: str) -> list[str]:
    """A dbt command line on the project."""
    exe = str(Path(sys.executable).parent / "dbt")
    return [exe, *args, "--project-dir", str(project), "--profiles-dir", str(project)]


def advise(project: Path) -> dict[str, float]:
    """Files admitted per lookup on each column, and the live files (``files``)."""
    command = [sys.executable, "-m", "python_ops", "advise", "--project-dir", str(project)]
    command += ["--profiles-dir", str(project), "--select", "events", "--json"]
    out = subprocess.run(command, cwd=project, capture_output=True, text=True, check=True).stdout
    advice = next(a for a in json.loads(out.strip().splitlines()[-1]) if a["model"] == "events")
    assert set(advice["columns"]) == set(COLUMNS), advice["columns"]
    return {"files": advice["files"], **advice["admitted_now"]}


def downstream_wall(project: Path, repeat: int) -> dict[str, float]:
    """Medians over ``repeat`` ``dbt run``s of the downstream models (a whole process each).

    ``wall``: the process; ``models``: the five models' own ``execution_time`` summed, from
    dbt's ``run_results.json`` (the statements, without dbt's and the engine's start).
    """
    walls, models = [], []
    per_model: dict[str, list[float]] = {name: [] for name in DOWNSTREAM}
    for _ in range(repeat):
        walls.append(run(dbt(project, "run", "--select", *DOWNSTREAM), project))
        results = json.loads((project / "target" / "run_results.json").read_text())["results"]
        assert len(results) == len(DOWNSTREAM), results
        models.append(sum(r["execution_time"] for r in results))
        for r in results:
            per_model[r["unique_id"].rsplit(".", 1)[-1]].append(r["execution_time"])
    return {
        "wall": statistics.median(walls),
        "models": statistics.median(models),
        "walls": walls,
        "per_model": {name: statistics.median(s) for name, s in per_model.items()},
    }


def embedded_and_spark(
    project: Path, spark_project: Path, repeat: int, work: Path, label: str
) -> dict:
    """One side (before or after): advice, both engines' downstream wall, Delta's scan."""
    return {
        "advice": advise(project),
        "embedded_s": downstream_wall(project, repeat),
        "spark_s": downstream_wall(spark_project, repeat),
        "scan": delta_scan(project.parent / "warehouse" / "bench" / "events", work),
        "load": os.getloadavg()[0],
        "label": label,
    }


def measure(args: argparse.Namespace, work: Path) -> dict:
    """Set up, measure before, maintain, measure after, run Delta's own Z-order on a copy."""
    project, warehouse = work / "project", work / "warehouse"
    spark_project = work / "project_spark"
    write_project(project, warehouse, args)
    write_spark_project(project, spark_project, work / "spark_warehouse")
    setup = time.perf_counter()
    run(dbt(project, "run", "--select", "products", "--vars", "{batch: 0}"), project)
    for batch in range(args.batches):
        run(dbt(project, "run", "--select", "events", "--vars", f"{{batch: {batch}}}"), project)
    run(dbt(project, "compile", "--vars", "{batch: 0}"), project)
    setup_s = time.perf_counter() - setup
    events = warehouse / "bench" / "events"
    register = ["run-operation", "register_upstream", "--args", f"{{root: '{events.parent}'}}"]
    register_s = run(dbt(spark_project, *register), spark_project)
    copy = work / "delta_copy" / "events"
    shutil.copytree(events, copy)  # the table as it is before, for Delta's own Z-order
    before = embedded_and_spark(project, spark_project, args.repeat, work, "before")
    maintain = [sys.executable, "-m", "python_ops", "maintain", "--project-dir", str(project)]
    maintain += ["--profiles-dir", str(project), "--ops", "optimize", "--select", "events"]
    maintain_s = run(maintain, project)
    after = embedded_and_spark(project, spark_project, args.repeat, work, "after")
    target = parse_size("events", "maintenance_target_file_size", args.target)
    delta = delta_zorder(copy, list(COLUMNS), target, work)
    delta["scan"] = delta_scan(copy, work)
    for side in (after["scan"], delta["scan"]):
        same = (side["rows"], side["checksum"]) == (
            before["scan"]["rows"],
            before["scan"]["checksum"],
        )
        assert same, (before["scan"], side)
    return {
        "setup_s": setup_s,
        "register_s": register_s,
        "maintain_s": maintain_s,
        "before": before,
        "after": after,
        "delta": delta,
    }


def _wall(side: dict[str, float]) -> str:
    return f"{side['wall']:.2f} s ({side['models']:.2f} s)"


def _ratio(after: dict[str, float], before: dict[str, float]) -> str:
    return f"{after['wall'] / before['wall']:.2f} ({after['models'] / before['models']:.2f})"


def report(args: argparse.Namespace, m: dict, uptime: tuple[str, str]) -> list[str]:
    """The report's lines."""
    before, after, delta = m["before"], m["after"], m["delta"]
    b, a = before["advice"], after["advice"]
    lines = [
        "## The advisor and `maintenance_zorder_by: auto` (embedded engine and Spark with Delta)",
        "",
        f"`bench/advisor_bench.py`: a {args.rows:,}-row incremental model appended in "
        f"{args.batches} batches (setup on the embedded engine {m['setup_s']:.0f} s), read by "
        f"{len(DOWNSTREAM)} downstream table models that filter on `customer_id` (equality, IN) "
        "and `product_id` (equality, BETWEEN, a join through a CTE). The advisor named exactly "
        "those two columns. Whole processes (dbt and engine start included); downstream wall is "
        f"the median of {args.repeat} `dbt run`s of the five models; target file size "
        f"{args.target}.",
        "",
        "The embedded engine (Sail) builds `events` and `products`. The Spark side is the same "
        "project with a `mode: local` profile (classic JVM Spark `local[*]` with Delta 4.4.0 "
        "from `jars/`, its own Derby metastore): `dbt run-operation register_upstream` "
        f"({m['register_s']:.1f} s) registers the embedded-built Delta tables by location "
        "(`create table ... using delta location ...`), so both engines read the very same "
        "files before and after the Z-order; the downstream models are built by Delta on Spark.",
        "",
        "| | live files | files admitted per lookup: customer_id | product_id | "
        "downstream build wall: embedded | Spark with Delta |",
        "|---|---|---|---|---|---|",
        f"| before | {b['files']} | {b['customer_id']:g} | {b['product_id']:g} "
        f"| {_wall(before['embedded_s'])} | {_wall(before['spark_s'])} |",
        f"| after auto Z-order | {a['files']} | {a['customer_id']:g} | {a['product_id']:g} "
        f"| {_wall(after['embedded_s'])} | {_wall(after['spark_s'])} |",
        f"| after / before | | | | {_ratio(after['embedded_s'], before['embedded_s'])} | "
        f"{_ratio(after['spark_s'], before['spark_s'])} |",
        "",
        "Each wall is the whole `dbt run` process; in brackets, the five models' own "
        "`execution_time` summed from dbt's `run_results.json` (their statements, without dbt's "
        "and the engine's start: the JVM's on Spark).",
        "",
        "Delta's own scan metrics: each downstream model's filter on `events` run by Delta 4.4 "
        "on Spark (`select count(*), sum(amount) ... where <filter>`, adaptive execution off; "
        "its wall the median of 3 runs in one session), "
        'files read = the file scan\'s SQL metric `numFiles` ("number of files read"), out of '
        "the live files. The last column is the same table Z-ordered by Delta's own `OPTIMIZE "
        "... ZORDER BY (customer_id, product_id)` instead of ours (a copy taken before). "
        "Delta skips by an IN list's smallest and largest value only (`DataSkippingReader`: "
        '"an imprecise range test that covers the entire list"), so `in (17, 4242, 90001)` '
        "admits every file whose range meets 17..90001, whatever the layout.",
        "",
        "| downstream model | filter on events | Delta's files read: before | after our auto "
        "Z-order | after Delta's ZORDER | Delta's filter query s: before / after ours | "
        "the model's build on Spark s (run_results): before / after ours |",
        "|---|---|---|---|---|---|---|",
    ]
    scans = (before["scan"], after["scan"], delta["scan"])
    for name, where in LOOKUPS.items():
        read = " | ".join(f"{s['lookups'][name]['files_read']} of {s['files']}" for s in scans)
        query = " / ".join(f"{s['lookups'][name]['query_s']:.2f}" for s in scans[:2])
        build = " / ".join(f"{s['spark_s']['per_model'][name]:.2f}" for s in (before, after))
        lines.append(f"| {name} | `{where}` | {read} | {query} | {build} |")
    ours_vs = m["maintain_s"] / delta["wall"]
    lines += [
        "",
        f"The maintenance that chose and applied it (`python -m python_ops maintain --ops "
        f"optimize` on the embedded profile, one process: the advisor, the Z-order rewrite by "
        f"delta-rs, files admitted per lookup measured before and after): "
        f"{m['maintain_s']:.1f} s. Delta's own `OPTIMIZE delta.<copy> ZORDER BY (customer_id, "
        f"product_id)` (`optimize.maxFileSize` = {args.target}) on the same table, one process "
        f"with `local[2]` Spark: {delta['wall']:.1f} s whole process (JVM start "
        f"{delta['start_s']:.1f} s, the statement {delta['op_s']:.1f} s; {delta['removed']} "
        f"files in, {delta['added']} out); ours / Delta (whole processes) {ours_vs:.2f}. "
        f"3·√F after ours: {3 * a['files'] ** 0.5:.1f}. Rows and checksum read back by Delta "
        "are the same before, after ours and after Delta's.",
        "",
        f"`uptime` before / after: `{uptime[0]}` / `{uptime[1]}` (2 shared cores: read the "
        "ratios). Command: `.venv/bin/python bench/advisor_bench.py "
        f"--rows {args.rows} --batches {args.batches} --repeat {args.repeat} "
        f"--target {args.target}`.",
    ]
    return lines


def main() -> None:
    """Run the bench and write its section of docs/benchmarks.md."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--batches", type=int, default=10)
    parser.add_argument("--customers", type=int, default=100_000)
    parser.add_argument("--products", type=int, default=1_000)
    parser.add_argument("--target", default="8MB", help="maintenance_target_file_size")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-report", action="store_true")
    args = parser.parse_args()
    compile_package()
    work = Path(tempfile.mkdtemp(prefix="advisor_bench_"))
    os.environ["PYTHONPATH"] = str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")
    uptime = [subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()]
    try:
        measured = measure(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    uptime.append(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    print(json.dumps(measured, default=str), flush=True)
    lines = report(args, measured, (uptime[0], uptime[1]))
    print("\n".join(lines))
    if not args.no_report:
        write_section("ADVISOR_BENCH", lines, source="bench/advisor_bench.py")


if __name__ == "__main__":
    main()
