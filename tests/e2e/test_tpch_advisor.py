"""The reference workload: a TPC-H-shaped project, its 22 queries as the facts' readers.

``tests/e2e/tpch`` is built by real dbt on the embedded engine from ``tpchgen-cli``'s tables at
scale factor 0.01 (60,175 line items, 15,000 orders). The advisor scores candidate layouts on
each fact's sample; TPC-H practice clusters line items by ship date and orders by order date.
The layout it recommends must admit no more files than that layout on Q6 (a year of ship
dates, small discounts and quantities), Q14 (one month of ship dates) and a one-month order-date
filter, and ``maintenance_zorder_by: auto`` must cluster on it: the reference layouts are
Z-ordered here on copies of the same tables at the same target sizes, and the files admitted are
counted from each table's own ``add.stats``.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from dbt.cli.main import dbtRunner, dbtRunnerResult

from python_ops.advise.bounds import Bounds
from python_ops.advise.layouts import files_admitting
from python_ops.advise.predicates import PredicateKind, Scan, ScanPredicate
from python_ops.advise.project import advise_project
from python_ops.advise.sources import load_manifest
from python_ops.delta.state.snapshot import read_snapshot
from python_ops.maintenance.configuration.config import parse_config
from python_ops.maintenance.records.history import HistoryStore
from python_ops.maintenance.selection.locations import warehouse_locator
from python_ops.ops.optimize import optimize
from tests.helpers.paths import ROOT

pytestmark = pytest.mark.slow

PROJECT = ROOT / "tests" / "e2e" / "tpch"
PROFILES = """
tpch:
  target: embedded
  outputs:
    embedded:
      type: sparkdelta
      method: session
      mode: embedded
      schema: tpch
      warehouse: "{warehouse}"
      engine_port: 0
      threads: 1
"""
TARGETS = {"fct_orders_items": "72KB", "fct_orders": "28KB"}  # about 25 files each
REFERENCE = {"fct_orders_items": "ship_date", "fct_orders": "order_date"}


def _day(text: str) -> dt.date:
    return dt.date.fromisoformat(text)


def _range(column: str, low: object, high: object, *, high_open: bool = True) -> ScanPredicate:
    return ScanPredicate(column, PredicateKind.RANGE, Bounds(low, high, high_open=high_open))


QUERIES = {
    "Q6": Scan(
        "fct_orders_items",
        (
            _range("ship_date", _day("1994-01-01"), _day("1995-01-01")),
            _range("discount", 0.05, 0.07, high_open=False),
            _range("quantity", None, 24),
        ),
    ),
    "Q14": Scan("fct_orders_items", (_range("ship_date", _day("1995-09-01"), _day("1995-10-01")),)),
    "one month of orders": Scan(
        "fct_orders", (_range("order_date", _day("1995-03-01"), _day("1995-04-01")),)
    ),
}


def _dbt(project: Path, *args: str) -> dbtRunnerResult:
    command = [*args, "--project-dir", str(project), "--profiles-dir", str(project)]
    result = dbtRunner().invoke(command)
    assert result.success, result.exception or result.result
    return result


@pytest.fixture
def tpch(tmp_path: Path, fresh_engines: None) -> tuple[Path, Path]:
    """The project, built on tpchgen-cli's tables (scale factor 0.01)."""
    data = tmp_path / "data"
    generator = Path(sys.executable).parent / "tpchgen-cli"
    command = [str(generator), "parquet", "-s", "0.01", f"--output-dir={data}"]
    subprocess.run(command, check=True, capture_output=True, timeout=120)
    project, warehouse = tmp_path / "project", tmp_path / "warehouse"
    shutil.copytree(PROJECT, project)
    (project / "profiles.yml").write_text(PROFILES.format(warehouse=warehouse))
    variables = {
        "tpch_data": str(data),
        "items_target": TARGETS["fct_orders_items"],
        "orders_target": TARGETS["fct_orders"],
    }
    settings = "".join(f"  {k}: {v}\n" for k, v in variables.items())
    text = (project / "dbt_project.yml").read_text()
    (project / "dbt_project.yml").write_text(text.replace("  tpch_data: /tmp/tpch\n", settings))
    _dbt(project, "build")
    return project, warehouse


def _advice(project: Path, warehouse: Path) -> dict[str, object]:
    placed = warehouse_locator(str(warehouse))
    advice = advise_project(
        load_manifest(str(project)),
        str(project),
        locate=lambda n: placed(str(n["schema"]), str(n["alias"]), n.get("config") or {}),
        target_size=lambda n: parse_config(n["name"], n.get("config") or {}).target_file_size_bytes,
        measure_skipping=False,
    )
    return {a.model: a for a in advice}


def test_the_advisor_beats_or_ties_the_tpch_layout_and_auto_clusters_on_it(
    tpch: tuple[Path, Path], tmp_path: Path
):
    project, warehouse = tpch
    advice = _advice(project, warehouse)
    chosen = {m: advice[m].columns for m in TARGETS}
    assert all(chosen.values()), chosen
    for model, target in TARGETS.items():  # the reference layout, on a copy
        copy = tmp_path / "reference" / model
        shutil.copytree(warehouse / "tpch" / model, copy)
        size = parse_config(model, {"maintenance_target_file_size": target})
        optimize(
            str(copy),
            zorder_by=[REFERENCE[model]],
            full=True,
            target_size_bytes=size.target_file_size_bytes,
            audit=False,
        )
    _dbt(
        project,
        "run-operation",
        "maintain_all",
        "--args",
        "{select: [fct_orders_items, fct_orders]}",
    )
    history = HistoryStore(str(warehouse / "tpch" / "maintenance_history"))
    for model in TARGETS:
        runs = [r for r in history.records() if r.model == model and r.op == "optimize"]
        assert runs, model
        assert runs[-1].clustering_columns == ",".join(chosen[model]), (model, runs)
    admitted: dict[str, tuple[int, int, int]] = {}
    for query, scan in QUERIES.items():
        ours = read_snapshot(str(warehouse / "tpch" / scan.model), with_stats=True)
        theirs = read_snapshot(str(tmp_path / "reference" / scan.model), with_stats=True)
        admitted[query] = (
            files_admitting(ours, scan),
            files_admitting(theirs, scan),
            len(ours.files),
        )
    print(json.dumps({"chosen": chosen, "admitted (ours, reference, files)": admitted}))
    for query, (ours_n, reference_n, files) in admitted.items():
        assert files > 10, (query, files)
        assert ours_n <= reference_n, (query, admitted, chosen)
        assert ours_n < files / 2, (query, admitted, chosen)
