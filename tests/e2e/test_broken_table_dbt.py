"""One broken table is its own model's problem (issue 36, item 7).

A model's table whose latest commit is truncated: ``dbt run-operation maintain_all`` maintains
every other model, fails the broken one with its name and the fix, exits 1, and the process ends
(on main 6a03820 the schema-wide ``show table extended ... like '*'`` failed in the engine, no
model was maintained, and the process hung 10 min before exiting).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.dbt_runs import CUSTOMERS, PER_BATCH, Dbt

pytestmark = pytest.mark.slow

BROKEN = "fct_orders"
MAINTAINED = ("landing_customers", "landing_orders", "dim_customers", "customer_order_summary")


def _truncate_latest_commit(warehouse: Path, model: str) -> Path:
    log = next(warehouse.glob(f"*/{model}/_delta_log"))
    latest = sorted(log.glob("*.json"))[-1]
    data = latest.read_bytes()
    latest.write_bytes(data[: len(data) // 2])  # a torn write: half a commit
    for crc in log.glob("*.crc"):
        crc.unlink()  # no checksum to tell the reader what the commit should have been
    return latest


def test_a_broken_table_fails_its_model_only_and_the_process_exits(
    built_project: Path, dbt: Dbt, tmp_path: Path
) -> None:
    assert dbt(built_project, "run", batch=1).success  # the incremental model's later commits
    latest = _truncate_latest_commit(tmp_path / "warehouse", BROKEN)

    lines: list[str] = []
    result = dbt(
        built_project,
        "run-operation",
        "maintain_all",
        callbacks=[lambda event: lines.append(event.info.msg)],
    )
    assert not result.success  # a failed op fails the run-operation (exit 1)
    for model in MAINTAINED:  # "maintenance 3/6 dim_customers: <what it did or why not>"
        said = [line for line in lines if f" {model}: " in line and "/" in line]
        assert said, (model, lines[-20:])
        assert not any("failed" in line for line in said), said
    broken = [line for line in lines if f"of model {BROKEN} failed" in line]
    assert broken, lines[-20:]
    assert latest.name in broken[0], broken[0]
    assert "restore" in broken[0], broken[0]  # the fix

    # the same from a shell: exit 1, the broken model named, and the process ends by itself
    variables = {"batch": 1, "orders_per_batch": PER_BATCH, "customers": CUSTOMERS}
    command = [str(Path(sys.executable).parent / "dbt"), "run-operation", "maintain_all"]
    command += ["--project-dir", str(built_project), "--profiles-dir"]
    command += [str(built_project / "profiles_example"), "--vars", json.dumps(variables)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired as err:
        pytest.fail(f"dbt run-operation maintain_all did not exit within 300 s: {err.stdout!r}")
    assert done.returncode == 1, done.stdout[-3000:]
    rows = [line.split() for line in done.stdout.splitlines() if line.split()[:1]]
    statuses = {(row[0], row[1]): row[2] for row in rows if len(row) > 2}
    assert statuses[(BROKEN, "vacuum")] == "failed", done.stdout[-3000:]
    for model in MAINTAINED:
        assert statuses[(model, "vacuum")] in ("not_due", "succeeded"), done.stdout[-3000:]
