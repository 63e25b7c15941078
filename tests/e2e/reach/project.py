"""The reach tests' dbt project: Delta tables built by the engine itself, on every engine.

One small project (``write_project``) and one scenario (``run_scenario``) for every way dbt
reaches Spark: Sail embedded, a classic local Spark with Delta in the dbt process, the classic
session of a ``spark-submit`` process, a Spark Thrift Server and a Spark Connect server (the
last three with Delta's jars). The scenario builds the project, rebuilds it incrementally in a
*new* process (the catalog must remember the tables: the incremental model MERGEs), plants an
old untracked file in each Delta table, then runs ``maintain_all`` and ``maintenance_report``.
The ``check_*`` functions assert on what each step really did: the tables' Delta logs, their
rows, the files on disk, the maintenance history and the printed report.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dbt.cli.main import dbtRunner
from deltalake import DeltaTable

from python_ops.maintenance.records.history import HistoryRecord, HistoryStore
from tests.helpers.classic import classic_env
from tests.helpers.paths import ROOT

SCHEMA = "reach"
DELTA_MODELS = ("orders", "customers")
CLUSTERED = "events"  # maintenance_cluster_by: clustered where the engine has Delta
PER_BATCH = 100  # new orders per batch; each batch also changes the previous batch's last half

PROJECT = """
name: {name}
version: "1.0.0"
config-version: 2
profile: {name}
flags:
  send_anonymous_usage_stats: false
vars:
  maintenance_history_location: "{lake}/maintenance_history"
  batch: 0
models:
  {name}:
    +materialized: table
    +file_format: delta
    +post-hook: "{{{{ maintain_model() }}}}"
    +maintenance_min_small_files: 2
    +maintenance_vacuum_interval_hours: 0
    +maintenance_optimize_interval_hours: 0
    # FULL lists the table's files (LITE reads only the log and never finds untracked files);
    # below the 168 h minimum: VACUUM removes the two-hour-old leftovers
    +maintenance_vacuum_mode: full
    +maintenance_vacuum_retention_hours: 1
    +maintenance_vacuum_allow_short_retention: true
    orders:
      +maintenance_zorder_by: [customer_id]
"""

MODELS = {
    # batch n: orders n*100 .. n*100+99, plus a new version of orders n*100-50 .. n*100-1
    "orders": """
{{ config(materialized='incremental', incremental_strategy='merge', unique_key='order_id',
          partition_by=['day']) }}
{%- set batch = var('batch') | int %}
select
    id as order_id,
    cast(id * 7919 % 101 as bigint) as customer_id,
    concat('2024-01-0', cast(1 + id % 3 as string)) as day,
    {{ batch }} as batch
from range({{ [batch * 100 - 50, 0] | max }}, {{ (batch + 1) * 100 }})
""",
    "customers": "select id as customer_id, concat('customer ', cast(id as string)) as name "
    "from range(0, 101)",
    # liquid clustering: created CLUSTER BY (kind), altered to (kind, n) by the rebuild
    CLUSTERED: """
{%- set batch = var('batch') | int %}
{{ config(materialized='incremental', incremental_strategy='append',
          maintenance_cluster_by=(['kind'] if batch == 0 else ['kind', 'n'])) }}
select id as n, concat('k', cast(id % 5 as string)) as kind, {{ batch }} as batch
from range({{ batch * 100 }}, {{ (batch + 1) * 100 }})
""",
    # not Delta: the post-hook and the run-operations say why they leave it alone
    "plain_parquet": "{{ config(file_format='parquet') }} select 1 as id",
}

PROFILE_HEAD = """
{name}:
  target: reach
  outputs:
    reach:
      type: sparkdelta
      schema: {schema}
"""

#: The target settings of each engine (``{lake}``, ``{port}`` filled in by ``profile``).
TARGETS = {
    "sail": """
      method: session
      mode: embedded
      warehouse: "{lake}"
      threads: 2
""",
    "local": """
      method: session
      mode: local
      warehouse: "{lake}"
      threads: 2
""",
    "spark-submit": """
      method: session
      mode: attach
      warehouse: "{lake}"
      threads: 2
""",
    "thrift": """
      method: thrift
      host: 127.0.0.1
      port: {port}
      user: dbt
      location_root: "{lake}"
      connect_retries: 0
      poll_interval: 1
      threads: 2
""",
    "connect": """
      method: session
      mode: attach
      connect_url: sc://127.0.0.1:{port}
      location_root: "{lake}"
      threads: 2
""",
}


def profile(engine: str, name: str, lake: Path, port: int | None = None) -> str:
    """``profiles.yml`` text for ``engine`` (a key of ``TARGETS``)."""
    head = PROFILE_HEAD.format(name=name, schema=SCHEMA)
    return textwrap.dedent(head) + textwrap.indent(
        textwrap.dedent(TARGETS[engine]).format(lake=lake, port=port), " " * 6
    )


def write_project(root: Path, engine: str, port: int | None = None) -> tuple[Path, Path]:
    """The project (with ``profiles.yml`` for ``engine``) and its lake directory under ``root``.

    Every table lives at ``<lake>/reach/<model>``: the lake is the warehouse of the in-process
    engines and the ``location_root`` of the servers.
    """
    name = "reach_" + engine.replace("-", "_")
    lake = root / "lake"
    project = root / "project"
    (project / "models").mkdir(parents=True)
    lake.mkdir()
    (project / "dbt_project.yml").write_text(textwrap.dedent(PROJECT.format(name=name, lake=lake)))
    (project / "profiles.yml").write_text(profile(engine, name, lake, port))
    for model, sql in MODELS.items():
        (project / "models" / f"{model}.sql").write_text(sql.strip() + "\n")
    return project, lake


# --- running dbt ---------------------------------------------------------------------------


@dataclass
class Step:
    """One dbt command's outcome: success, wall time, the messages dbt logged and printed."""

    args: list[str]
    success: bool
    seconds: float
    messages: list[str]
    exception: str | None
    errors: list[str]

    def text(self) -> str:
        """The messages as one text."""
        return "\n".join(self.messages)

    def failure(self) -> str:
        """Why the command failed: its exception and the messages logged as errors."""
        return "\n".join([f"dbt {' '.join(self.args[:2])}: {self.exception}", *self.errors])


#: Runs dbt commands one after another in one process; stops at the first failure.
Runner = Callable[[Sequence[list[str]]], list[Step]]


def dbt_args(project: Path, *args: str, batch: int | None = None) -> list[str]:
    """A dbt command line on ``project`` (its own ``profiles.yml``), with ``var batch``."""
    command = [*args, "--project-dir", str(project), "--profiles-dir", str(project)]
    if batch is not None:
        command += ["--vars", json.dumps({"batch": batch})]
    return command


#: Not a dbt command: ``[PLANT, lake]`` plants a leftover in each Delta model's table and
#: answers, as its one message, JSON of the leftovers and the tables' rows (``plant``).
PLANT = "plant-leftovers"


def plant(lake: Path) -> Step:
    """The ``PLANT`` step: an old untracked file in each Delta table; the rows before it."""
    started = time.perf_counter()
    leftovers = {m: str(leave_untracked_file(lake / SCHEMA / m)) for m in DELTA_MODELS}
    before = {m: {"rows": rows(lake / SCHEMA / m)} for m in DELTA_MODELS}
    answer = json.dumps({"leftovers": leftovers, "before": before})
    return Step([PLANT, str(lake)], True, time.perf_counter() - started, [answer], None, [])


def run_commands(commands: Sequence[list[str]]) -> list[Step]:
    """Run dbt commands in this process (``dbtRunner``), stopping at the first failure."""
    steps = []
    for args in commands:
        if args[0] == PLANT:
            steps.append(plant(Path(args[1])))
            continue
        messages: list[str] = []
        errors: list[str] = []

        def collect(event: Any, messages: list[str] = messages, errors: list[str] = errors) -> None:
            messages.append(str(event.info.msg))
            if event.info.level == "error":
                errors.append(str(event.info.msg))

        started = time.perf_counter()
        result = dbtRunner(callbacks=[collect]).invoke(args)
        steps.append(
            Step(
                list(args),
                bool(result.success),
                time.perf_counter() - started,
                messages,
                None if result.exception is None else str(result.exception),
                errors,
            )
        )
        if not result.success:
            break
    return steps


def in_process(commands: Sequence[list[str]]) -> list[Step]:
    """The ``Runner`` of this process."""
    return run_commands(commands)


def new_process(launcher: Sequence[str] = (), env: dict[str, str] | None = None) -> Runner:
    """A ``Runner`` that starts a fresh process per call (``launcher`` + ``dbt_main.py``).

    Args:
        launcher: What runs the script: nothing (this Python), or e.g. ``spark-submit`` and
            its arguments.
        env: More environment for the process (on top of ``classic_env()``).
    """

    def run(commands: Sequence[list[str]]) -> list[Step]:
        out = Path(os.environ.get("TMPDIR", "/tmp")) / f"reach-steps-{os.getpid()}-{time.time()}"
        script = str(Path(__file__).with_name("dbt_main.py"))
        command = [*launcher, script] if launcher else [sys.executable, script]
        environment = {**classic_env(), **(env or {})}
        environment["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(ROOT), environment.get("PYTHONPATH", "")) if p
        )
        proc = subprocess.run(
            [*command, json.dumps([list(c) for c in commands]), str(out)],
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
            cwd=ROOT,
            env=environment,
        )
        if not out.exists():
            raise AssertionError(
                f"{command[0]} exited {proc.returncode} before running dbt:\n"
                f"{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
            )
        steps = [Step(**s) for s in json.loads(out.read_text())]
        out.unlink()
        return steps

    return run


# --- the scenario --------------------------------------------------------------------------


@dataclass
class Scenario:
    """What each step of ``run_scenario`` did."""

    engine: str
    project: Path
    lake: Path
    build: Step
    rebuild: Step
    maintain: Step
    report: Step | None
    after_build: dict[str, Any]
    before_maintenance: dict[str, Any]
    leftovers: dict[str, Path]

    @property
    def build_and_maintain_s(self) -> float:
        """Wall time of the first build plus ``maintain_all``."""
        return self.build.seconds + self.maintain.seconds

    def location(self, model: str) -> Path:
        """Where ``model``'s table is."""
        return self.lake / SCHEMA / model


def run_scenario(
    engine: str,
    project: Path,
    lake: Path,
    *,
    first: Runner,
    later: Runner,
    maintain_in_later: bool = False,
) -> Scenario:
    """Build (``first``), rebuild incrementally in a new process (``later``), maintain.

    Before ``maintain_all`` the runner plants an old untracked file in each Delta table
    (``PLANT``) and reads the rows maintenance must keep.

    Args:
        engine: The engine's name, for messages.
        project: The project.
        lake: Its lake.
        first: Runs the first build, then (unless ``maintain_in_later``) ``maintain_all`` and
            ``maintenance_report``.
        later: Runs the incremental rebuild; must start a new process.
        maintain_in_later: Maintain in the rebuild's process: one process fewer when ``first``
            starts one too. Not for Sail embedded: its catalog journal keeps only the Delta
            tables, so the non-Delta model is unknown to a new process.

    Returns:
        Every step's outcome (a failed step ends the scenario: its followers are failed steps).
    """
    failed = Step([], False, 0.0, [], "an earlier step failed", [])
    (build,) = first([dbt_args(project, "build", batch=0)])
    after_build: dict[str, Any] = {}
    steps: list[Step] = []
    maintenance = [
        [PLANT, str(lake)],
        dbt_args(project, "run-operation", "maintain_all"),
        dbt_args(project, "run-operation", "maintenance_report"),
    ]
    if build.success:
        for model in DELTA_MODELS:
            location = lake / SCHEMA / model
            after_build[model] = {"rows": rows(location), "operations": delta_operations(location)}
        # The Delta models only: dbt-spark rebuilds a non-Delta table by DROP + CTAS, and a table
        # at a location (location_root, a warehouse path) is external, so Spark keeps its files
        # and the CTAS refuses the non-empty location (Sail: "listing table path already
        # exists"; Sail's catalog journal also re-registers only Delta tables).
        rebuild = [dbt_args(project, "run", "--select", *DELTA_MODELS, CLUSTERED, batch=1)]
        if maintain_in_later:
            steps = later([*rebuild, *maintenance])
        else:
            steps = later(rebuild)
            if steps[0].success:
                steps += first(maintenance)
    steps += [failed] * (3 - len(steps))
    rebuild_step, planted, maintain = steps[:3]
    report = steps[3] if len(steps) > 3 else None
    leftovers: dict[str, Path] = {}
    before: dict[str, Any] = {}
    if planted.success:
        answer = json.loads(planted.messages[0])
        leftovers = {m: Path(p) for m, p in answer["leftovers"].items()}
        before = answer["before"]
    return Scenario(
        engine, project, lake, build, rebuild_step, maintain, report, after_build, before, leftovers
    )


# --- what the tables hold ------------------------------------------------------------------


def leave_untracked_file(location: Path, age_s: float = 7200) -> Path:
    """An old Parquet file the table does not reference (a failed job's leftover)."""
    leftover = location / "part-00000-leftover-of-a-failed-job.parquet"
    leftover.write_bytes(b"x" * 100)
    then = time.time() - age_s
    os.utime(leftover, (then, then))
    return leftover


def delta_operations(location: Path) -> list[str]:
    """The operation of every commit in the table's Delta log (``commitInfo``), oldest first."""
    operations = []
    for commit in sorted((location / "_delta_log").glob("*.json")):
        for line in commit.read_text().splitlines():
            action = json.loads(line) if line.strip() else {}
            if "commitInfo" in action:
                operations.append(str(action["commitInfo"].get("operation")))
    return operations


def rows(location: Path) -> list[dict[str, Any]]:
    """The table's rows (delta-rs), in a fixed order."""
    table = DeltaTable(str(location)).to_pyarrow_table()
    return sorted(table.to_pylist(), key=lambda r: json.dumps(r, sort_keys=True, default=str))


def history(lake: Path) -> list[HistoryRecord]:
    """The maintenance history the project records."""
    return HistoryStore(str(lake / "maintenance_history")).records()


# --- what every engine must do -------------------------------------------------------------


def check_build(s: Scenario) -> None:
    """The first build made Delta tables, and the post-hook ran on each model."""
    assert s.build.success, s.build.failure()
    for model in DELTA_MODELS:
        operations = s.after_build[model]["operations"]
        assert operations, f"{model}: no Delta commits"
        assert any("CREATE" in op or op == "WRITE" for op in operations), operations
    assert len(s.after_build["orders"]["rows"]) == PER_BATCH
    assert len(s.after_build["customers"]["rows"]) == 101
    # the post-hook ran on every model (on the Delta ones nothing is due yet, and it says nothing)
    text = s.build.text()
    assert "maintenance plain_parquet: skipped: not a Delta table" in text, text


def check_incremental_merge(s: Scenario) -> None:
    """The rebuild in a new process found the table and MERGEd batch 1 into it."""
    assert s.rebuild.success, s.rebuild.failure()
    operations = delta_operations(s.location("orders"))
    assert "MERGE" in operations, operations
    # the rows as the rebuild left them (read in its process, before maintain_all)
    table = s.before_maintenance["orders"]["rows"]
    # 200 distinct orders; 50 of batch 0 updated, 100 new: 150 carry batch 1 (an append: 250)
    assert len(table) == 2 * PER_BATCH, len(table)
    assert len({r["order_id"] for r in table}) == 2 * PER_BATCH
    assert sum(1 for r in table if r["batch"] == 1) == PER_BATCH + PER_BATCH // 2
    # the post-hook found small files after the build or the rebuild and compacted them
    hooks = "\n".join(m for step in (s.build, s.rebuild) for m in step.messages if "maint" in m)
    assert "maintenance orders: optimize rewrote " in hooks, hooks


def commit_infos(location: Path) -> list[dict[str, Any]]:
    """Every commit's ``commitInfo`` in the table's Delta log, oldest first."""
    infos = []
    for commit in sorted((location / "_delta_log").glob("*.json")):
        for line in commit.read_text().splitlines():
            action = json.loads(line) if line.strip() else {}
            if "commitInfo" in action:
                infos.append(action["commitInfo"])
    return infos


def check_clustering(s: Scenario, *, clustered: bool) -> None:
    """The clustered model: CLUSTER BY at creation, ALTER on change, then OPTIMIZE FULL.

    Args:
        s: The scenario.
        clustered: Whether the engine has Delta (else the build warned and nothing clusters).
    """
    assert s.rebuild.success, s.rebuild.failure()
    location = s.location(CLUSTERED)
    infos = commit_infos(location)
    assert len(DeltaTable(str(location)).to_pyarrow_table()) == 200
    if not clustered:
        assert "model 'events': maintenance_cluster_by is not applied" in s.build.text()
        assert all("clusterBy" not in str(i.get("operationParameters")) for i in infos), infos
        return
    params = [(i["operation"], i.get("operationParameters") or {}) for i in infos]
    assert json.loads(params[0][1]["clusterBy"]) == ["kind"], params[0]
    changes = [p for op, p in params if op == "CLUSTER BY"]
    assert changes == [{"oldClusteringColumns": "kind", "newClusteringColumns": "kind,n"}], params
    fulls = [p for op, p in params if op == "OPTIMIZE" and str(p.get("isFull")).lower() == "true"]
    assert fulls, params  # the rebuild's post-hook re-clustered every file, once
    assert json.loads(fulls[-1]["clusterBy"]) == ["kind", "n"]
    hooks = "\n".join(s.rebuild.messages)
    assert "maintenance events: optimize rewrote" in hooks, hooks


def check_maintain_all(s: Scenario, *, delta_sql: str | None) -> None:
    """``maintain_all`` vacuumed the leftovers and compacted, with the rows unchanged.

    Args:
        s: The scenario.
        delta_sql: Where Delta's own OPTIMIZE must have run (a substring of the writer, e.g.
            ``Delta OPTIMIZE (SQL)``), or None when OPTIMIZE goes to delta-rs.
    """
    assert s.maintain.success, s.maintain.failure()
    records = history(s.lake)
    for model in DELTA_MODELS:
        assert not s.leftovers[model].exists(), f"{model}: VACUUM left {s.leftovers[model]}"
        assert rows(s.location(model)) == s.before_maintenance[model]["rows"], model
        vacuums = [r for r in records if r.model == model and r.op == "vacuum" and not r.dry_run]
        assert vacuums, f"{model}: no VACUUM recorded"
        assert vacuums[-1].status == "succeeded", vacuums[-1].error
        assert vacuums[-1].files_removed >= 1, vacuums[-1]
    optimized = [
        r
        for r in records
        if r.model == "orders" and r.op == "optimize" and not r.dry_run and r.files_removed
    ]
    assert optimized, [(r.model, r.op, r.status, r.files_removed) for r in records]
    for record in optimized:
        assert record.status == "succeeded", record.error
        assert record.files_removed > record.files_added > 0, record
        writer = str(json.loads(record.parameters)["writer"])
        if delta_sql is not None:
            assert delta_sql in writer, writer
        else:
            assert writer.startswith(("delta-rs", "python_ops z-order")), writer
    if delta_sql is not None:
        assert "OPTIMIZE" in delta_operations(s.location("orders"))
    text = s.maintain.text()
    for model in (*DELTA_MODELS, "plain_parquet"):
        assert model in text, text


def check_report(s: Scenario) -> None:
    """``maintenance_report`` printed a row per model, no errors."""
    assert s.report is not None, "maintain_all failed: no report"
    assert s.report.success, s.report.failure()
    text = s.report.text()
    for model in DELTA_MODELS:
        assert f"\n{model} " in text, text
    assert "not maintained: not a Delta table" in text, text
    assert "error:" not in text, text
