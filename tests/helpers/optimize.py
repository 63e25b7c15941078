"""Helpers for OPTIMIZE tests: small-file and event tables, file-skipping counts, a 2nd writer."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from python_ops.delta.state.snapshot import read_snapshot


def events_table(spark: Any, path: Path, *, batches: int = 8, days: int = 2) -> str:
    """Sail writes one small file per insert: random customers and times in ``days`` partitions."""
    name = f"ev_{abs(hash(str(path)))}"
    spark.sql(
        f"create table {name} (customer_id bigint, event_ts timestamp, amount double, "
        f"country string, day string) using delta partitioned by (day) location '{path}'"
    )
    for b in range(batches):
        for d in range(days):
            seed = b * days + d
            spark.sql(
                f"insert into {name} select "
                f"cast(rand({seed}) * 100000 as bigint), "
                f"timestamp_seconds(1704067200 + {d} * 86400 + cast(rand({seed + 100}) * 86399 "
                "as bigint)), "
                f"round(rand({seed + 200}) * 100, 2), "
                f"case when id % 4 = 0 then null else element_at(array('DE', 'FR', 'US'), "
                f"cast(id % 3 as int) + 1) end, '2024-01-0{d + 1}' from range(2000)"
            )
    return name


def admitted_files(path: Path, column: str, values: list[Any]) -> float:
    """Average number of files whose min/max statistics on ``column`` admit each value."""
    files = read_snapshot(str(path), with_stats=True).files
    bounds = []
    for f in files:
        stats = json.loads(f.stats or "{}")
        bounds.append((stats["minValues"][column], stats["maxValues"][column]))
    return sum(sum(1 for lo, hi in bounds if lo <= v <= hi) for v in values) / len(values)


def run_writer(table: Path, code: str) -> None:
    """Commit to ``table`` from another process with delta-rs (``dt`` is the DeltaTable)."""
    script = "from deltalake import DeltaTable, write_deltalake\nimport pyarrow as pa\n"
    script += f"dt = DeltaTable({str(table)!r})\n" + textwrap.dedent(code)
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)


def small_files_table(spark, path: Path, *, batches: int = 6, partitioned: bool = True) -> str:
    """One file per insert: ``batches`` small files in each of 3 partitions (or in the table)."""
    name = f"t_{abs(hash(str(path)))}"
    part = "partitioned by (day)" if partitioned else ""
    spark.sql(
        f"create table {name} (id bigint, amount double, day string) using delta {part} "
        f"location '{path}'"
    )
    for b in range(batches):
        for d in range(3):
            spark.sql(
                f"insert into {name} select id, id * 0.5, '2024-01-0{d + 1}' "
                f"from range({(b * 3 + d) * 100}, {(b * 3 + d + 1) * 100})"
            )
    return name
