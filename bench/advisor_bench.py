"""The maintenance advisor and ``maintenance_zorder_by: auto`` on a generated project.

A 10M-row incremental model (``events``, appended in batches, each batch's files spanning every
key) is read by downstream table models that filter and join it on two columns
(``customer_id``: equality and IN; ``product_id``: equality, BETWEEN and a join through a CTE).
Every step is a whole process (engine start included) on the embedded engine:

1. ``dbt run`` of the batches and ``dbt compile`` (setup, not timed);
2. before: ``python -m python_ops advise --json`` (files admitted per lookup per column) and
   ``dbt run`` of the downstream models, timed (median of ``--repeat``);
3. ``python -m python_ops maintain --ops optimize``: the auto Z-order, timed;
4. after: the same two measurements.

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

from bench.report import compile_package, write_section

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


def downstream_wall(project: Path, repeat: int) -> float:
    """Median wall of ``dbt run`` of the downstream models (a whole process each)."""
    names = " ".join(DOWNSTREAM)
    return statistics.median(
        run(dbt(project, "run", "--select", *names.split()), project) for _ in range(repeat)
    )


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
    try:
        project, warehouse = work / "project", work / "warehouse"
        write_project(project, warehouse, args)
        setup = time.perf_counter()
        run(dbt(project, "run", "--select", "products", "--vars", "{batch: 0}"), project)
        for batch in range(args.batches):
            run(dbt(project, "run", "--select", "events", "--vars", f"{{batch: {batch}}}"), project)
        run(dbt(project, "compile", "--vars", "{batch: 0}"), project)
        setup_s = time.perf_counter() - setup
        before = advise(project)
        wall_before = downstream_wall(project, args.repeat)
        maintain = [sys.executable, "-m", "python_ops", "maintain", "--project-dir", str(project)]
        maintain += ["--profiles-dir", str(project), "--ops", "optimize", "--select", "events"]
        maintain_s = run(maintain, project)
        after = advise(project)
        wall_after = downstream_wall(project, args.repeat)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    lines = [
        "## The advisor and `maintenance_zorder_by: auto` (embedded engine)",
        "",
        f"`bench/advisor_bench.py`: a {args.rows:,}-row incremental model appended in "
        f"{args.batches} batches (setup {setup_s:.0f} s), read by {len(DOWNSTREAM)} downstream "
        "table models that filter on `customer_id` (equality, IN) and `product_id` (equality, "
        "BETWEEN, a join through a CTE). The advisor named exactly those two columns. Whole "
        f"processes; downstream wall is the median of {args.repeat} `dbt run`s of the five "
        f"models (engine start included); target file size {args.target}.",
        "",
        "| | live files | files admitted per lookup: customer_id | product_id | "
        "downstream build wall |",
        "|---|---|---|---|---|",
        f"| before | {before['files']} | {before['customer_id']:g} | {before['product_id']:g} "
        f"| {wall_before:.2f} s |",
        f"| after auto Z-order | {after['files']} | {after['customer_id']:g} | "
        f"{after['product_id']:g} | {wall_after:.2f} s |",
        "",
        f"The maintenance that chose and applied it (`python -m python_ops maintain --ops "
        f"optimize`, one process: the advisor, the Z-order rewrite, the measurements before and "
        f"after): {maintain_s:.1f} s. 3·√F after: {3 * after['files'] ** 0.5:.1f}.",
    ]
    print("\n".join(lines))
    if not args.no_report:
        write_section("ADVISOR_BENCH", lines, source="bench/advisor_bench.py")


if __name__ == "__main__":
    main()
