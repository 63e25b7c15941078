"""maintain_all on the example project: what is due vs delta-rs maintaining every table blindly.

Prepares the example project once: ``dbt build`` then ``--batches`` load batches of the order
fact with the post-hook off (small files pile up in ``fct_orders``). Each repeat copies that
warehouse twice and, in fresh processes, runs

- ours: ``python -m python_ops maintain --json`` (the work of ``dbt run-operation
  maintain_all``: read config from the manifest, decide what is due from the Delta log and the
  history, run it, record it) on one copy, then again when nothing is due;
- delta-rs: what a scheduler without a notion of "due" does on the other copy: for every
  maintained table a VACUUM dry run at the model's retention and an OPTIMIZE (Z-order on the
  model's columns where it has them, else compaction).

Reported: medians of the maintain run's own duration (``duration_s``, without process start)
and of the whole process, the nothing-due re-run, and one ``dbt run-operation maintain_all``
wall time (dbt start and parse included). Results go to docs/benchmarks.md (MAINTAIN-ALL).

    .venv/bin/python bench/maintain_all_bench.py --repeats 5
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
DBT = str(ROOT / ".venv" / "bin" / "dbt")
PARTS = ("dbt_project.yml", "models", "seeds", "profiles_example")

DELTA_RS = """
import json, sys, time
from deltalake import DeltaTable
started = time.perf_counter()
for target in json.loads(sys.argv[1]):
    table = DeltaTable(target["location"])
    table.vacuum(retention_hours=int(target["retention_hours"]), dry_run=True,
                 enforce_retention_duration=False)
    if target["zorder_by"]:
        table.optimize.z_order(target["zorder_by"])
    else:
        table.optimize.compact()
print(time.perf_counter() - started)
"""


def run(*command: str, env: dict[str, str] | None = None) -> tuple[str, float]:
    """Run a command; return its stdout and wall time."""
    started = time.perf_counter()
    done = subprocess.run(
        command, capture_output=True, text=True, env={**os.environ, **(env or {})}
    )
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command[:3])[:80]} failed:\n{done.stderr[-3000:]}")
    return done.stdout, time.perf_counter() - started


def copy_warehouse(source: Path, target: Path) -> None:
    """Copy a warehouse; its catalog journal records absolute locations, so re-point them."""
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(source, target)
    for name in ("_sparkdelta_catalog.json", "_sparkdelta_catalog.log"):  # snapshot and log
        journal = target / name
        if journal.exists():
            journal.write_text(journal.read_text().replace(str(source), str(target)))


def dbt(project: Path, warehouse: Path, *args: str) -> float:
    command = [DBT, *args, "--project-dir", str(project)]
    command += ["--profiles-dir", str(project / "profiles_example")]
    return run(*command, env={"SPARKDELTA_WAREHOUSE": str(warehouse)})[1]


def ours(project: Path, warehouse: Path) -> tuple[float, float, int]:
    """(maintain duration_s, process wall time, ops that ran) of one CLI maintain run."""
    out, wall = run(
        sys.executable,
        "-m",
        "python_ops",
        "maintain",
        "--project-dir",
        str(project),
        "--warehouse",
        str(warehouse),
        "--json",
    )
    result = json.loads(out)
    ran = sum(1 for o in result["outcomes"] if o["status"] in ("succeeded", "failed"))
    return result["duration_s"], wall, ran


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--batches", type=int, default=12)
    parser.add_argument("--orders-per-batch", type=int, default=20000)
    args = parser.parse_args()
    compile_package()  # as an installed package is: no recompiling in timed processes
    work = Path(tempfile.mkdtemp(prefix="maintain-bench-"))
    project, prepared = work / "project", work / "prepared"
    project.mkdir()
    for part in PARTS:
        src = ROOT / part
        (shutil.copytree if src.is_dir() else shutil.copy)(src, project / part)
    try:
        size = {"orders_per_batch": args.orders_per_batch, "customers": 5000}
        dbt(project, prepared, "build", "--vars", json.dumps({**size, "batch": 0}))
        for batch in range(1, args.batches):
            variables = json.dumps({**size, "batch": batch, "maintenance_post_hook": False})
            selected = ["landing_orders", "stg_orders", "fct_orders"]
            dbt(project, prepared, "run", "--select", *selected, "--vars", variables)
        sys.path.insert(0, str(ROOT))
        from python_ops.maintenance.selection.locations import warehouse_locator
        from python_ops.maintenance.selection.targets import (
            load_manifest,
            manifest_models,
            targets_from_nodes,
        )

        samples: dict[str, list[float]] = {k: [] for k in ("ours", "wall", "idle", "delta_rs")}
        ran = 0
        for _ in range(args.repeats):
            a, b = work / "a", work / "b"
            for copy in (a, b):
                copy_warehouse(prepared, copy)
            duration, wall, ran = ours(project, a)
            samples["ours"].append(duration)
            samples["wall"].append(wall)
            samples["idle"].append(ours(project, a)[0])
            targets, _ = targets_from_nodes(
                manifest_models(load_manifest(str(project))), warehouse_locator(str(b))
            )
            blind = [
                {
                    "location": t.location,
                    "retention_hours": t.config.vacuum_retention_hours or 168,
                    "zorder_by": list(t.config.zorder_by),
                }
                for t in targets
                if t.config.enabled
            ]
            out, _ = run(sys.executable, "-c", DELTA_RS, json.dumps(blind))
            samples["delta_rs"].append(float(out.strip()))
        dbt_wall = dbt(project, a, "run-operation", "maintain_all")
        med = {k: statistics.median(v) for k, v in samples.items()}
        lines = [
            "## maintain_all on the example project (embedded engine)",
            "",
            f"`bench/maintain_all_bench.py --repeats {args.repeats} --batches {args.batches} "
            f"--orders-per-batch {args.orders_per_batch}`: the example project after "
            f"{args.batches} load batches with the post-hook off, "
            f"{len(targets)} table models. Ours: `python -m python_ops maintain` (the work of "
            "`maintain_all`: config from the manifest, what is due from the Delta log and the "
            f"history, run and record it; {ran} op(s) were due). delta-rs: a VACUUM dry run "
            "and an OPTIMIZE (Z-order where configured) on every maintained table, as a "
            "scheduler without a notion of due would. Fresh copies and processes per repeat.",
            "",
            "| run | median (s) |",
            "|---|---|",
            f"| ours, maintain (due ops only) | {med['ours']:.3f} |",
            f"| ours, whole process (incl. Python and engine start) | {med['wall']:.2f} |",
            f"| ours, again with nothing due | {med['idle']:.3f} |",
            f"| delta-rs, vacuum dry run + optimize on every table | {med['delta_rs']:.3f} |",
            f"| `dbt run-operation maintain_all`, nothing due (dbt start + parse incl.) | "
            f"{dbt_wall:.2f} (1 run) |",
            "",
            f"Ratio ours / delta-rs: {med['ours'] / med['delta_rs']:.2f}x for the maintenance "
            f"work; the nothing-due pass costs {med['idle'] * 1000:.0f} ms for all tables.",
            "",
        ]
        write_section("MAINTAIN-ALL", lines, source="bench/maintain_all_bench.py")
        print("\n".join(lines))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
