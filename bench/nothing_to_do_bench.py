"""Nothing to rewrite, nothing started (issue 65, item 3): the time to say "nothing to do".

For each engine, in a process of its own (``mode: local`` runs classic Spark in the dbt
process, which cannot share a process with Spark Connect/Sail): a generated project of N
one-row table models (and, on ``mode: local``, one more with deletion vectors and row tracking,
which only Delta's own writer may rewrite), built with the maintenance post-hook off; then, in
the same process with the session up (one untimed ``maintain_all`` first, which also does
whatever was due), ``--repeats`` rounds of

- ``dbt run-operation noop`` (a macro that does nothing: dbt's own cost of a run-operation);
- ``maintain_all`` with nothing due;
- ``optimize_all`` (every model, due or not: one row, nothing to rewrite);
- ``vacuum_all`` (nothing to delete).

Per model: the history rows' ``duration_s`` of the invocation (``optimize_all`` and
``vacuum_all`` record a row per model; a not-due op records none), median, p95, max; and the
run-operation's wall over N, with and without dbt's own floor (``noop``). Then, whole
processes, the CLI ``python -m python_ops optimize <table>`` with nothing to rewrite (on a
plain table, and on the deletion-vector table, which only Delta's own writer could rewrite).

Checked, and printed in the section: no java process ran beside the embedded engine's process
and its local Delta writer never started; the CLI started no local writer on either table; no
op rewrote or deleted a file. Goals: under 50 ms per model on the embedded engine, under 2 s on
``mode: local``. ``--save FILE`` keeps the figures; ``--before FILE`` (a ``--save`` of the same
bench with ``--code`` pointing at another checkout) adds a before column.

    git archive <commit> python_ops dbt macros | tar -x -C /tmp/before  # plus a jars link
    .venv/bin/python bench/nothing_to_do_bench.py --code /tmp/before --save before.json
    .venv/bin/python bench/nothing_to_do_bench.py --before before.json --write
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
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from report import compile_package, write_section  # noqa: E402

GOAL_MS = {"embedded": 50.0, "local": 2000.0}
OPS = ("maintain_all", "optimize_all", "vacuum_all")
DV_MODEL = "t_dv"

PROJECT = """\
name: nothing
version: "0.1.0"
config-version: 2
profile: nothing
model-paths: ["models"]
macro-paths: ["macros"]
models:
  nothing:
    +file_format: delta
    +materialized: table
    +post-hook: "{{ maintain_model() }}"
vars:
  maintenance_post_hook: false
"""

PROFILES = """\
nothing:
  target: {engine}
  outputs:
    embedded:
      type: sparkdelta
      method: session
      mode: embedded
      schema: nothing
      warehouse: "{{{{ env_var('NOTHING_WAREHOUSE') }}}}"
      engine_port: 0
      threads: 4
    local:
      type: sparkdelta
      method: session
      mode: local
      schema: nothing
      warehouse: "{{{{ env_var('NOTHING_WAREHOUSE') }}}}"
      threads: 2
"""

TABLE = "select {i} as id, 'model {i}' as name\n"
# deletion vectors and row tracking: only Delta's own writer may rewrite it (delta-rs does not
# write row tracking), so a rewrite would start the local Delta writer; nothing to rewrite must not
DV_TABLE = (
    "{{ config(tblproperties={'delta.enableDeletionVectors': 'true', "
    "'delta.enableRowTracking': 'true'}) }}\n"
    "select 1 as id, 'deletion vectors' as name\n"
)

DRIVER = r"""
import json, os, statistics, sys, time
from dbt.cli.main import dbtRunner
from dbt_common.invocation import get_invocation_id

project, history_dir, repeats, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
runner = dbtRunner()
base = ["--project-dir", project, "--profiles-dir", project, "--quiet"]


def invoke(*args):
    started = time.perf_counter()
    done = runner.invoke([*args, *base])
    wall = time.perf_counter() - started
    if not done.success:
        raise SystemExit(f"dbt {' '.join(args)} failed: {done.exception}")
    return wall, get_invocation_id()


def java_children():
    found = []
    me = str(os.getpid())
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            stat = open(f"/proc/{pid}/stat").read()
            cmd = open(f"/proc/{pid}/cmdline").read().replace("\0", " ")
        except OSError:
            continue
        if stat.split(") ")[1].split()[1] == me and "java" in cmd.split(" ")[0]:
            found.append(pid)
    return found


figures = {"build_s": invoke("build")[0]}
figures["first maintain_all_s"] = invoke("run-operation", "maintain_all")[0]
from python_ops.maintenance.records.history import HistoryStore

walls = {name: [] for name in ("noop", "maintain_all", "optimize_all", "vacuum_all")}
rows = {name: [] for name in walls}
for _ in range(repeats):
    for name in ("noop", "maintain_all", "optimize_all", "vacuum_all", "noop"):
        wall, invocation = invoke("run-operation", name)
        walls[name].append(wall)
        records = HistoryStore(history_dir).records()
        rows[name] += [] if name == "noop" else [
            {"op": r.op, "model": r.model, "duration_s": r.duration_s, "status": r.status,
             "files": r.files_removed, "reason": r.reason}
            for r in records if r.invocation_id == invocation
        ]
from python_ops import runtime
writer = runtime.LOCAL_WRITER.value
figures.update(
    walls=walls,
    rows=rows,
    java_children=len(java_children()),
    local_writer_started=bool(writer is not None and writer.started),
    classic_spark="pyspark.sql.classic.session" in sys.modules,
)
with open(out, "w") as f:
    json.dump(figures, f)
"""

CLI_CHECK = r"""
import io, contextlib, json, sys
from python_ops.cli.main import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    code = main(["optimize", sys.argv[1], "--json"])
from python_ops import runtime
from python_ops.delta.state.snapshot import read_snapshot
writer = runtime.LOCAL_WRITER.value
result = json.loads(out.getvalue())
print(json.dumps({"code": code, "started": bool(writer is not None and writer.started),
                  "files_removed": result.get("files_removed"),
                  "skipped": result.get("skipped_reason"),
                  "features": read_snapshot(sys.argv[1]).protocol.get("writerFeatures")}))
"""


def write_project(root: Path, *, engine: str, models: int) -> Path:
    """The project of ``models`` one-row tables (plus a deletion-vector one on mode: local).

    Args:
        root: The project directory (created).
        engine: ``embedded`` or ``local`` (the profile's target).
        models: How many one-row table models.

    Returns:
        ``root``.
    """
    (root / "models").mkdir(parents=True)
    (root / "macros").mkdir()
    (root / "dbt_project.yml").write_text(PROJECT)
    (root / "profiles.yml").write_text(PROFILES.format(engine=engine))
    (root / "macros" / "noop.sql").write_text("{% macro noop() %}{% endmacro %}\n")
    for i in range(models):
        (root / "models" / f"t_{i:04d}.sql").write_text(TABLE.format(i=i))
    if engine == "local":
        (root / "models" / f"{DV_MODEL}.sql").write_text(DV_TABLE)
    return root


CODE = [ROOT]  # the code under test (``--code``)


def engine_env(warehouse: Path) -> dict[str, str]:
    """The environment of a process of one engine: no Spark Connect switches, our code first."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("SPARK_CONNECT_MODE_ENABLED", "SPARK_REMOTE", "SPARKDELTA_WAREHOUSE")
    }
    return {**env, "PYTHONPATH": str(CODE[0]), "NOTHING_WAREHOUSE": str(warehouse)}


def run_engine(work: Path, engine: str, models: int, repeats: int) -> dict[str, Any]:
    """Build and time one engine's run-operations in one process of its own; its figures."""
    project = write_project(work / engine, engine=engine, models=models)
    warehouse = work / f"warehouse-{engine}"
    out = work / f"{engine}.json"
    history = warehouse / "nothing" / "maintenance_history"
    command = [sys.executable, "-c", DRIVER, str(project), str(history), str(repeats), str(out)]
    started = time.perf_counter()
    done = subprocess.run(
        command, env=engine_env(warehouse), cwd=project, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"{engine} driver failed:\n{(done.stdout + done.stderr)[-5000:]}")
    figures: dict[str, Any] = json.loads(out.read_text())
    figures["process_s"] = time.perf_counter() - started
    figures["warehouse"] = str(warehouse)
    figures["models"] = models + (1 if engine == "local" else 0)  # the deletion-vector one
    return figures


def cli_runs(table: Path, repeats: int) -> dict[str, Any]:
    """The CLI's OPTIMIZE of a table with nothing to rewrite: whole-process walls, and a check.

    Returns:
        ``walls`` (seconds, ``python -m python_ops optimize``), ``own`` (the op's own
        ``duration_s``) and ``check`` (exit code, whether the local Delta writer started,
        files removed, the skipped reason).
    """
    env = engine_env(table.parent.parent)
    walls, own = [], []
    for _ in range(repeats):
        started = time.perf_counter()
        command = [sys.executable, "-m", "python_ops", "optimize", str(table), "--json"]
        done = subprocess.run(command, env=env, check=True, capture_output=True, text=True)
        walls.append(time.perf_counter() - started)
        own.append(float(json.loads(done.stdout)["duration_s"]))
    done = subprocess.run(
        [sys.executable, "-c", CLI_CHECK, str(table)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return {"walls": walls, "own": own, "check": json.loads(done.stdout.strip().splitlines()[-1])}


def p95(values: list[float]) -> float:
    """The 95th percentile (nearest rank)."""
    ordered = sorted(values)
    return ordered[max(0, -(-95 * len(ordered) // 100) - 1)]


def model_rows(figures: dict[str, Any], op: str) -> list[dict[str, Any]]:
    """The history rows a run-operation wrote for the project's models, for its own op.

    Rows of other ops (the history table's own upkeep, proofs a decision keeps) are left out.
    """
    name = op.removesuffix("_all")
    return [r for r in figures["rows"][op] if r["op"] == name and r["model"].startswith("t_")]


def per_model(figures: dict[str, Any], models: int) -> dict[str, dict[str, float]]:
    """Per run-operation: ms per model from the walls (with and without dbt's floor) and rows.

    Returns:
        ``{op: {"wall": ..., "wall_ms_per_model": ..., "over_floor_ms_per_model": ...,
        "rows": ..., "row_median_ms": ..., "row_p95_ms": ..., "row_max_ms": ...}}``.
    """
    floor = statistics.median(figures["walls"]["noop"])
    models = figures.get("models", models)
    out: dict[str, dict[str, float]] = {}
    for op in OPS:
        wall = statistics.median(figures["walls"][op])
        ms = [r["duration_s"] * 1000 for r in model_rows(figures, op)]
        out[op] = {
            "wall": wall,
            "wall_ms_per_model": wall * 1000 / models,
            "over_floor_ms_per_model": max(0.0, wall - floor) * 1000 / models,
            "rows": len(ms),
            "row_median_ms": statistics.median(ms) if ms else 0.0,
            "row_p95_ms": p95(ms) if ms else 0.0,
            "row_max_ms": max(ms) if ms else 0.0,
        }
    return out


def engine_lines(
    engine: str, figures: dict[str, Any], models: int, before: dict[str, Any] | None
) -> list[str]:
    """The section's table rows of one engine (``before``: the same engine's figures on the
    code before, for its ms/model column)."""
    goal = GOAL_MS[engine]
    floor = statistics.median(figures["walls"]["noop"])
    then = per_model(before, models) if before else {}
    lines = [f"| {engine} | `noop` (dbt's own floor) | {floor:.2f} | | | | | | | | |"]
    for op, f in per_model(figures, models).items():
        rows = (
            f"{f['row_median_ms']:.1f} / {f['row_p95_ms']:.1f} / {f['row_max_ms']:.1f} "
            f"({int(f['rows'])} rows)"
            if f["rows"]
            else "no row (nothing due records none)"
        )
        under = f["wall_ms_per_model"] < goal and f["row_p95_ms"] < goal
        slowest = f["row_max_ms"] / goal
        was = f"{then[op]['wall_ms_per_model']:.1f}" if op in then else ""
        lines.append(
            f"| {engine} | `{op}` | {f['wall']:.2f} | {max(figures['walls'][op]):.2f} | "
            f"{f['wall_ms_per_model']:.1f} | {f['over_floor_ms_per_model']:.1f} | {rows} | "
            f"{was} | {f['wall_ms_per_model'] / goal:.3f} | "
            f"{f'{slowest:.3f}' if f['rows'] else '-'} | "
            f"{'yes' if under else '**no**'} |"
        )
    return lines


def cli_line(name: str, run: dict[str, Any], goal_ms: float) -> str:
    """One row of the CLI table."""
    med, own = statistics.median(run["walls"]), statistics.median(run["own"]) * 1000
    check = run["check"]
    return (
        f"| {name} | {med:.2f} | {p95(run['walls']):.2f} | {own:.1f} | "
        f"{check['files_removed']} | {'started' if check['started'] else 'not started'} | "
        f"{own / goal_ms:.3f} | {', '.join(check.get('features') or []) or '-'} |"
    )


def section(
    figures: dict[str, dict[str, Any]], cli: dict[str, dict[str, Any]], args: Any, loads: Any
) -> list[str]:
    """The BENCHMARKS section (NOTHING-TO-DO)."""
    before = json.loads(args.before.read_text())["engines"] if args.before else {}
    embedded = figures.get("embedded")
    lines = [
        "## Nothing to do: the time to say so, per model (issue 65 item 3)",
        "",
        f"`bench/nothing_to_do_bench.py --models {args.models} --repeats {args.repeats}`: "
        f"{args.models} one-row table models (on `mode: local` one more, `{DV_MODEL}`, with "
        "deletion vectors and row tracking: only Delta's own writer may rewrite it) built "
        "with the post-hook off, each engine in a process of its own; then, in that "
        "process with the session up (one untimed `maintain_all` first), each "
        "run-operation timed by `dbtRunner` (dbt's start and manifest load per invocation "
        "included, the process's start not). Per model: the "
        "wall over N (and over N after `noop`, a run-operation doing nothing, dbt's own "
        "floor); the history rows' `duration_s` of the invocation (median / p95 / max, ms); "
        "the goal: 50 ms embedded, 2 s `mode: local`; under it when the wall/N and the rows' "
        "p95 are (the slowest single row is shown against it too). Load average (1, 5, 15 "
        "min) on the 2 shared cores: before "
        f"{loads[0]}, after {loads[1]}."
        + (f" *before: ms/model*: the same bench on {args.before_label}." if before else ""),
        "",
        "| engine | run-operation | wall median (s) | wall max (s) | ms/model | "
        "ms/model over floor | row duration_s ms median / p95 / max | before: ms/model | "
        "ms/model / goal | slowest row / goal | under goal |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for engine, found in figures.items():
        lines += engine_lines(engine, found, args.models, before.get(engine))
    lines += ["", "| CLI `python -m python_ops optimize <table>` | whole process median (s) | "
              "p95 (s) | the op's own `duration_s` median (ms) | files rewritten | "
              "local Delta writer | own / 50 ms | table's writer features |",
              "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    lines += [cli_line(name, run, GOAL_MS["embedded"]) for name, run in cli.items()]
    lines.append("")
    if embedded is not None:
        writer = "started" if embedded["local_writer_started"] else "never started"
        lines.append(
            f"Embedded engine process: java child processes {embedded['java_children']}, "
            f"local Delta writer {writer}, classic Spark "
            f"{'loaded' if embedded['classic_spark'] else 'not loaded'}."
        )
    if "local" in figures:
        lines.append(
            f"`mode: local` process: local Delta writer "
            f"{'started' if figures['local']['local_writer_started'] else 'never started'} "
            "(its own JVM is the session's)."
        )
    lines.append("")
    return lines


def load_average() -> str:
    """The load average now, as ``1.23 / 2.34 / 3.45``."""
    return " / ".join(f"{x:.2f}" for x in os.getloadavg())


def check(figures: dict[str, dict[str, Any]], cli: dict[str, dict[str, Any]]) -> list[str]:
    """What went against item 3: a JVM or writer started, a file rewritten (none: [])."""
    wrong = []
    embedded = figures.get("embedded")
    if embedded and (embedded["java_children"] or embedded["local_writer_started"]):
        wrong.append("the embedded engine's process started a JVM")
    for name, found in figures.items():
        for op in ("optimize_all", "vacuum_all"):
            moved = [r for r in model_rows(found, op) if r["files"] or r["status"] != "succeeded"]
            if moved:
                wrong.append(f"{name} {op}: {moved[:3]}")
    for name, run in cli.items():
        if run["check"]["started"] or run["check"]["code"] != 0:
            wrong.append(f"CLI {name}: {run['check']}")
    return wrong


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--models", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--engines", nargs="+", default=["embedded", "local"])
    parser.add_argument("--write", action="store_true", help="write docs/benchmarks.md")
    parser.add_argument("--save", type=Path, help="keep the raw figures as JSON")
    parser.add_argument("--code", type=Path, default=ROOT, help="the checkout under test")
    parser.add_argument("--before", type=Path, help="a --save of the code before (a column)")
    parser.add_argument("--before-label", default="", help="what --before ran, in words")
    args = parser.parse_args()
    CODE[0] = args.code.resolve()
    compile_package()  # as an installed package is: no recompiling in timed processes
    work = Path(tempfile.mkdtemp(prefix="nothing-bench-"))
    before = load_average()
    try:
        figures = {}
        for engine in args.engines:
            figures[engine] = run_engine(work, engine, args.models, args.repeats)
            print(f"{engine}: {json.dumps(per_model(figures[engine], args.models))}", flush=True)
        cli = {}
        for engine in args.engines:
            tables = Path(figures[engine]["warehouse"]) / "nothing"
            cli[f"{engine}: plain table"] = cli_runs(tables / "t_0000", args.repeats)
            if engine == "local":
                cli["local: deletion-vector table"] = cli_runs(tables / DV_MODEL, args.repeats)
        if args.save:
            args.save.write_text(json.dumps({"engines": figures, "cli": cli}, indent=1))
        lines = section(figures, cli, args, (before, load_average()))
        wrong = check(figures, cli)
        lines += [f"**Against item 3:** {w}" for w in wrong]
        print("\n".join(lines))
        if args.write:
            write_section("NOTHING-TO-DO", lines, source="bench/nothing_to_do_bench.py")
        if wrong:
            raise SystemExit(1)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
