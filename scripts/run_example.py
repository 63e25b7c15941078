"""The main job: build the example shop project on the embedded engine and report table health.

1. ``dbt build`` of the whole project (seeds, models, tests) for the next load batch;
2. further load batches of the incremental order fact, each a ``dbt run`` of the order models
   (what leaves small files, tombstones and a long Delta log behind);
3. ``dbt build`` of the marts and tests on the final state;
4. ``dbt run-operation print_table_health``: each model's table health as a table.

Running it again continues with the next batches (the fact is merged, not rebuilt).
All dbt invocations run in this process through ``dbtRunner`` and share one engine.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from dbt.cli.main import dbtRunner

ROOT = Path(__file__).resolve().parent.parent


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
    for batch in batches:
        dbt(
            runner,
            "run",
            "--quiet",
            "--select",
            "landing_orders",
            "stg_orders",
            "fct_orders",
            "--vars",
            json.dumps({**size, "batch": batch}),
        )
    batches_s = time.perf_counter() - batch_started

    print("== dbt build of the marts and tests on the final state", flush=True)
    final_s = dbt(
        runner,
        "build",
        "--quiet",
        "--select",
        "fct_orders+",
        "--exclude",
        "fct_orders",
        "--vars",
        json.dumps({**size, "batch": batches.stop - 1}),
    )

    print("== table health (from each table's Delta log)", flush=True)
    dbt(runner, "run-operation", "print_table_health", "--quiet")
    total_s = time.perf_counter() - started
    print(
        f"\nfirst dbt build {build_s:.1f} s; {len(batches)} batch loads {batches_s:.1f} s; "
        f"final build {final_s:.1f} s; total {total_s:.1f} s"
    )


if __name__ == "__main__":
    main()
