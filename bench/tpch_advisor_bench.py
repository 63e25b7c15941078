"""The advisor on the TPC-H project: its choice, its time, and the files each query admits.

``tests/e2e/tpch`` is built on the embedded engine from ``tpchgen-cli``'s tables (``--scale``),
then compiled. The advisor runs three times in this process (wall and CPU seconds, choosing
layouts as ``auto`` does: no files-per-lookup measurement). Each fact table is then Z-ordered by
our OPTIMIZE on two copies at the model's target size: ``--before`` (default: the layouts
main's advisor chose before issue 66's scoring) and the advisor's choice now; for every read of
a fact by a query (its constant conjuncts, as the advisor reads them), the files whose
``add.stats`` admit it are counted on each copy. Prints a markdown table (docs/advisor.md's).

    .venv/bin/python bench/tpch_advisor_bench.py [--scale 0.01] [--work DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from python_ops.advise.compiled import CompiledSql
from python_ops.advise.layouts import files_admitting
from python_ops.advise.predicates import QueryReader, Scan
from python_ops.advise.project import advise_project, project_relations
from python_ops.advise.sources import is_maintained, load_manifest, readers_of
from python_ops.delta.state.snapshot import read_snapshot
from python_ops.maintenance.configuration.config import parse_config
from python_ops.maintenance.selection.locations import warehouse_locator
from python_ops.ops.optimize import optimize

ROOT = Path(__file__).resolve().parent.parent
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
BEFORE = {  # main's advisor before the scoring (6d23bb4^), on this project at SF 0.01
    "fct_orders_items": "ship_date,supplier_key,part_key",
    "fct_orders": "customer_key,order_key,order_date",
}


def build(work: Path, scale: str) -> tuple[Path, Path]:
    """Data, project and warehouse under ``work``; the project built and compiled."""
    data, project, warehouse = work / "data", work / "project", work / "warehouse"
    generator = Path(sys.executable).parent / "tpchgen-cli"
    command = [str(generator), "parquet", "-s", scale, f"--output-dir={data}"]
    subprocess.run(command, check=True, capture_output=True)
    shutil.copytree(ROOT / "tests" / "e2e" / "tpch", project)
    (project / "profiles.yml").write_text(PROFILES.format(warehouse=warehouse))
    text = (project / "dbt_project.yml").read_text()
    (project / "dbt_project.yml").write_text(text.replace("/tmp/tpch", str(data)))
    dbt = str(Path(sys.executable).parent / "dbt")
    for step in ("build", "compile"):
        args = [dbt, step, "--project-dir", str(project), "--profiles-dir", str(project)]
        done = subprocess.run(args, capture_output=True, text=True, check=False)
        if done.returncode:
            raise SystemExit(f"dbt {step} failed:\n{done.stdout[-3000:]}")
    return project, warehouse


def _locate(warehouse: Path) -> object:
    placed = warehouse_locator(str(warehouse))
    return lambda n: placed(str(n["schema"]), str(n["alias"]), n.get("config") or {})


def _target(node: dict) -> int | None:
    return parse_config(node["name"], node.get("config") or {}).target_file_size_bytes


def advise(project: Path, warehouse: Path) -> tuple[dict[str, tuple[str, ...]], list[float]]:
    """The advisor's choice per fact, and (wall, CPU) seconds of each of three runs."""
    times: list[float] = []
    for _ in range(3):
        wall, cpu = time.perf_counter(), time.process_time()
        advice = advise_project(
            load_manifest(str(project)),
            str(project),
            locate=_locate(warehouse),  # type: ignore[arg-type]
            measure_skipping=False,
            target_size=_target,
        )
        times += [round(time.perf_counter() - wall, 2), round(time.process_time() - cpu, 2)]
    return {a.model: a.columns for a in advice if a.model in BEFORE}, times


def reads(project: Path, warehouse: Path) -> list[tuple[str, str, Scan]]:
    """Every read of a fact with constants: (fact, reader, scan), as the advisor reads them."""
    manifest = load_manifest(str(project))
    nodes = manifest["nodes"]
    maintained = {u: n for u, n in nodes.items() if is_maintained(n)}
    schemas = {}
    for uid, node in maintained.items():
        location = _locate(warehouse)(node)  # type: ignore[operator]
        schemas[uid] = tuple(f["name"] for f in read_snapshot(location).metadata.schema_fields())
    compiled = CompiledSql.of(manifest, str(project), "target")
    relations = project_relations(nodes, {}, schemas, lambda n: compiled.resolve(n).sql)
    reader = QueryReader(relations)
    out = []
    for uid, models in sorted(readers_of(nodes, maintained).items()):
        sql = compiled.resolve(nodes[uid]).sql
        if sql is None:
            continue
        for scan in reader.read(sql).scans:
            fact = nodes[scan.model]["name"]
            if fact in BEFORE and scan.model in models:
                out.append((fact, nodes[uid]["name"], scan))
    return out


def layouts(project: Path, warehouse: Path, work: Path, chosen: dict) -> dict:
    """Each fact Z-ordered on copies at its target size: before (``BEFORE``) and the choice now."""
    nodes = load_manifest(str(project))["nodes"].values()
    targets = {n["name"]: _target(n) for n in nodes if n["name"] in BEFORE}
    snapshots = {}
    for fact, before in BEFORE.items():
        for name, columns in (("before", before.split(",")), ("after", list(chosen[fact]))):
            copy = work / name / fact
            shutil.copytree(warehouse / "tpch" / fact, copy)
            optimize(
                str(copy),
                zorder_by=columns,
                full=True,
                target_size_bytes=targets[fact],
                audit=False,
            )
            snapshots[(name, fact)] = read_snapshot(str(copy), with_stats=True)
    return snapshots


def main() -> None:
    """Build, advise, lay out, count; print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scale", default="0.01")
    parser.add_argument("--work", default=None)
    args = parser.parse_args()
    work = Path(args.work or tempfile.mkdtemp(prefix="tpch-advisor-"))
    project, warehouse = build(work, args.scale)
    chosen, times = advise(project, warehouse)
    print(json.dumps({"chosen": chosen, "before": BEFORE, "wall, cpu per run": times}))
    snapshots = layouts(project, warehouse, work, chosen)
    print("| fact | query | predicates | before | after |\n|---|---|---|---|---|")
    for fact, query, scan in reads(project, warehouse):
        said = "; ".join(f"{p.column} {p.bounds.describe()}" for p in scan.predicates)
        counts = []
        for name in ("before", "after"):
            snapshot = snapshots[(name, fact)]
            counts.append(f"{files_admitting(snapshot, scan)} of {len(snapshot.files)}")
        print(f"| {fact} | {query} | {said} | {counts[0]} | {counts[1]} |")


if __name__ == "__main__":
    main()
