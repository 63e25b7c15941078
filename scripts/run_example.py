"""The main job: build the example shop project on the embedded engine, maintain it, report.

1. ``dbt build`` of the whole project (seeds, models, tests) for the next load batch; the
   project-wide post-hook runs the maintenance due for each table right after it is built;
2. further load batches of the incremental order fact, each a ``dbt run`` of the order models
   with the post-hook off (``maintenance_post_hook: false``), as a frequent loader that leaves
   maintenance to a scheduled run would: small files, tombstones and a longer Delta log pile up;
3. ``dbt build`` of the marts and tests on the final state;
4. ``dbt run-operation print_table_health``: each model's table health as a table;
5. ``dbt run-operation maintain_all``: what is due, for every model, with a before/after table
   of files, bytes and log files per model.

Running it again continues with the next batches (the fact is merged, not rebuilt).
All dbt invocations run in this process through ``dbtRunner`` and share one engine.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import textwrap
import time
from datetime import timedelta
from pathlib import Path

from dbt.cli.main import dbtRunner

from python_ops.delta.state.snapshot import read_snapshot
from python_ops.delta.table.properties import DELETED_FILE_RETENTION, resolve_retention
from python_ops.maintenance.rules.wording import size_text
from python_ops.maintenance.selection.locations import warehouse_locator
from python_ops.maintenance.selection.targets import (
    load_manifest,
    manifest_models,
    targets_from_nodes,
)
from python_ops.ops.health import table_health
from python_ops.values import retention_text

ROOT = Path(__file__).resolve().parent.parent
PROFILES = "--profiles-dir profiles_example"
HISTORY = "select * from {{ source('maintenance', 'maintenance_history') }}"
WHAT_NEXT = (  # what to try after the demo, each from the project directory
    ("what is due, per model", f".venv/bin/dbt run-operation maintenance_report {PROFILES}"),
    (
        "what VACUUM would delete",
        f".venv/bin/dbt run-operation vacuum_all --args '{{dry_run: true}}' {PROFILES}",
    ),
    ("the same without dbt", f".venv/bin/python -m python_ops maintain --dry-run {PROFILES}"),
    (
        "one table, its model's policy",
        f".venv/bin/python -m python_ops vacuum --model fct_orders --dry-run {PROFILES}",
    ),
    ("the history of every op", f'.venv/bin/dbt show {PROFILES} --inline "{HISTORY}"'),
    (
        "tune a model",
        'maintenance_* in its config() or dbt_project.yml (README, "Turn it on")',
    ),
)
Snapshot = dict[str, tuple[int, int, int, int]]  # model: (files, live bytes, disk bytes, logs)


def snapshot(warehouse: Path) -> Snapshot:
    """Files, live bytes, bytes on disk (data files, referenced or not) and log files per model."""
    models = manifest_models(load_manifest(str(ROOT)))
    targets, _ = targets_from_nodes(models, warehouse_locator(str(warehouse)))
    out = {}
    for target in targets:
        health = table_health(target.location)
        disk = sum(
            (Path(d) / f).stat().st_size
            for d, dirs, files in os.walk(target.location)
            if "_delta_log" not in Path(d).relative_to(target.location).parts
            for f in files
        )
        out[target.name] = (health.num_files, health.total_bytes, disk, health.num_log_files)
    return out


def before_after(before: Snapshot, after: Snapshot) -> str:
    """The per-model before/after table with a labelled totals row; sizes in scaled units."""
    head = f"{'model':<24} {'files':^14} {'live size':^22} {'size on disk':^22} {'log files':^12}"
    lines = [head]
    rows = [(m, before[m], after.get(m, before[m])) for m in before]
    totals = tuple(tuple(sum(r[i][k] for r in rows) for k in range(4)) for i in (1, 2))
    for name, b, a in [*rows, (f"total ({len(rows)} models)", *totals)]:
        lines.append(
            f"{name:<24} {b[0]:>5} -> {a[0]:<5} {size_text(b[1]):>9} -> {size_text(a[1]):<9} "
            f"{size_text(b[2]):>9} -> {size_text(a[2]):<9} {b[3]:>4} -> {a[3]:<4}"
        )
    return "\n".join(lines)


def retentions(warehouse: Path) -> dict[str, float]:
    """Each model's VACUUM retention in hours: its config, else its table's, else Delta's."""
    models = manifest_models(load_manifest(str(ROOT)))
    targets, _ = targets_from_nodes(models, warehouse_locator(str(warehouse)))
    hours = {}
    for target in targets:
        requested = target.config.vacuum_retention_hours
        configuration = read_snapshot(target.location).metadata.configuration
        retention = resolve_retention(
            configuration,
            DELETED_FILE_RETENTION,
            requested=None if requested is None else timedelta(hours=requested),
        )
        hours[target.name] = retention.period / timedelta(hours=1)
    return hours


def disk_note(before: Snapshot, after: Snapshot, retention_hours: dict[str, float]) -> str:
    """Why size on disk grew while the live size fell: what the table above cannot say.

    OPTIMIZE writes new files and only marks the ones it replaced as removed: they stay on
    disk (time travel still reads them) until VACUUM deletes them once they are older than
    the model's retention. Empty when no model's size on disk grew.
    """
    grew = sorted(m for m in before if m in after and after[m][2] > before[m][2])
    if not grew:
        return ""
    waits = sorted({retention_text(retention_hours[m]) for m in grew if m in retention_hours})
    added = sum(after[m][2] - before[m][2] for m in grew)
    return (
        f"size on disk grew by {size_text(added)} ({', '.join(grew)}): OPTIMIZE wrote new "
        "files and marked the ones they replace as removed; those stay on disk, and time travel "
        "still reads them, until they are older than the model's VACUUM retention "
        f"({' / '.join(waits) or 'its setting'}). VACUUM deletes them then; the live size above "
        "is what a query reads now."
    )


def next_batch(warehouse: Path) -> int:
    """The batch after the newest one already loaded into ``fct_orders`` (0 when empty)."""
    table = warehouse / "shop" / "fct_orders"
    if not (table / "_delta_log").is_dir():
        return 0
    from deltalake import DeltaTable

    column = DeltaTable(str(table)).to_pyarrow_table(columns=["load_batch"]).column("load_batch")
    import pyarrow.compute as pc

    latest = pc.max(column).as_py()
    return 0 if latest is None else int(latest) + 1


def dbt(runner: dbtRunner, *args: str) -> float:
    """Run one dbt command in-process; exit on failure; return its wall time in seconds."""
    started = time.perf_counter()
    result = runner.invoke(
        [*args, "--project-dir", str(ROOT), "--profiles-dir", str(ROOT / "profiles_example")]
    )
    if not result.success:
        print(
            f"dbt {' '.join(args)} failed: {result.exception or 'see the log above'}",
            file=sys.stderr,
        )
        sys.exit(1)
    return time.perf_counter() - started


def main() -> None:
    """Parse arguments and run the job."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=12, help="load batches per run (default 12)")
    parser.add_argument("--orders-per-batch", type=int, default=200)
    parser.add_argument("--customers", type=int, default=500)
    args = parser.parse_args()

    os.chdir(ROOT)
    warehouse = Path(os.environ.get("SPARKDELTA_WAREHOUSE", ROOT / "warehouse")).resolve()
    os.environ["SPARKDELTA_WAREHOUSE"] = str(warehouse)
    runner = dbtRunner()
    first = next_batch(warehouse)
    size = {"orders_per_batch": args.orders_per_batch, "customers": args.customers}
    started = time.perf_counter()

    print(f"== dbt build (load batch {first}) into {warehouse}", flush=True)
    build_s = dbt(runner, "build", "--vars", json.dumps({**size, "batch": first}))

    batches = range(first + 1, first + args.batches)
    print(f"== loading batches {batches.start}..{batches.stop - 1} into fct_orders", flush=True)
    batch_started = time.perf_counter()
    for done, batch in enumerate(batches, start=1):
        took = dbt(
            runner,
            "run",
            "--quiet",
            "--select",
            "landing_orders",
            "stg_orders",
            "fct_orders",
            "fct_open_orders",
            "--vars",
            json.dumps({**size, "batch": batch, "maintenance_post_hook": False}),
        )
        # one line per batch: a long load is never silent
        print(f"   batch {batch} loaded ({done}/{len(batches)}, {took:.1f} s)", flush=True)
    batches_s = time.perf_counter() - batch_started

    print("== dbt build of the marts and tests on the final state", flush=True)
    final_s = dbt(
        runner,
        "build",
        "--quiet",
        "--select",
        "fct_orders+",
        "fct_open_orders+",
        "--exclude",
        "fct_orders",
        "fct_open_orders",
        "--vars",
        json.dumps({**size, "batch": batches.stop - 1}),
    )

    print("== table health (from each table's Delta log)", flush=True)
    dbt(runner, "run-operation", "print_table_health", "--quiet")

    print("== dbt run-operation maintain_all (what is due, every model)", flush=True)
    before = snapshot(warehouse)
    maintain_s = dbt(runner, "run-operation", "maintain_all", "--args", "{threads: 2}")
    after = snapshot(warehouse)
    print("\n== before / after maintain_all (files and size of the current version, size of")
    print("   all data files on disk, Delta log files)")
    print(before_after(before, after))
    note = disk_note(before, after, retentions(warehouse))
    if note:
        print("\n" + textwrap.fill(note, width=96))
    total_s = time.perf_counter() - started
    print(
        f"\nfirst dbt build {build_s:.1f} s; {len(batches)} batch loads {batches_s:.1f} s; "
        f"final build {final_s:.1f} s; maintain_all {maintain_s:.1f} s; total {total_s:.1f} s"
    )
    print('\n== what next (from this directory; README, "Run-operations and commands")')
    for what, how in WHAT_NEXT:
        print(f"  {what + ':':<31} {how}")
    print(f"  {'the tables themselves:':<31} {warehouse}/")


if __name__ == "__main__":
    main()
