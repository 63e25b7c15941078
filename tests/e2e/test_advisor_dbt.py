"""The maintenance advisor on a project whose filters are known, and ``auto`` clustering.

Real dbt (``dbtRunner``) builds and compiles ``tests/helpers/advisor_project.py``'s project on
the embedded engine; the advisor reads the manifest and compiled SQL dbt wrote and must name
exactly the columns whose layout would skip most of the readers' files, and report what it
cannot resolve.
``maintenance_zorder_by: auto`` then clusters on those columns in ``maintain_all``: files
admitted per lookup on each drop to at most 3 * sqrt(F), rows and checksum are unchanged, and a
second run does not re-cluster.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from dbt.cli.main import dbtRunner, dbtRunnerResult
from deltalake import DeltaTable

from python_ops.advise.project import advise_project
from python_ops.advise.skipping import files_admitted
from python_ops.advise.sources import load_manifest
from python_ops.delta.state.snapshot import read_snapshot
from python_ops.maintenance.configuration.config import parse_config
from python_ops.maintenance.records.history import HistoryStore
from python_ops.maintenance.selection.locations import warehouse_locator
from tests.helpers.advisor_project import EXPECTED, write_project

pytestmark = pytest.mark.slow


def _dbt(project: Path, *args: str, said: list[str] | None = None) -> dbtRunnerResult:
    command = [*args, "--project-dir", str(project), "--profiles-dir", str(project)]
    callbacks = [lambda event: said.append(event.info.msg)] if said is not None else []
    result = dbtRunner(callbacks=callbacks).invoke(command)
    assert result.success, result.exception
    return result


@pytest.fixture
def compiled(tmp_path: Path, fresh_engines: None) -> tuple[Path, Path]:
    """The project built (``dbt build``) and compiled (``dbt compile``: the analysis too)."""
    warehouse = tmp_path / "warehouse"
    project = write_project(tmp_path / "project", warehouse, rows=100_000)
    _dbt(project, "build")
    _dbt(project, "compile")
    return project, warehouse


def _advice(project: Path, warehouse: Path) -> dict[str, object]:
    placed = warehouse_locator(str(warehouse))
    advice = advise_project(
        load_manifest(str(project)),
        str(project),
        locate=lambda n: placed(str(n["schema"]), str(n["alias"]), n.get("config") or {}),
        target_size=lambda n: parse_config(n["name"], n.get("config") or {}).target_file_size_bytes,
    )
    return {a.model: a for a in advice}


def _rows_and_checksum(location: str) -> tuple[int, int, float]:
    table = DeltaTable(location).to_pyarrow_table(columns=["event_id", "amount"])
    ids = table.column("event_id").to_pylist()
    return table.num_rows, sum(ids), round(sum(table.column("amount").to_pylist()), 6)


def test_advisor_names_exactly_the_filtered_and_joined_columns(compiled: tuple[Path, Path]):
    project, warehouse = compiled
    by_model = _advice(project, warehouse)
    events = by_model["events"]
    assert events.columns == EXPECTED
    assert events.scored
    ranked = [c.column for c in events.candidates]
    assert ranked == ["user_id", "event_date", "region", "event_id"]
    scores = {c.column: c.score for c in events.candidates}
    assert scores["user_id"] > scores["region"] > 0
    assert scores["event_id"] == 0  # keeps 99 % of the rows: near-full
    reads = {r.reader.split(".")[-1]: r for r in events.reads}
    assert reads["by_user"].share_after < reads["by_user"].share_now == 1.0
    assert any("near-full" in why for why in reads["by_event"].ignored)
    uses = {c.column: {(e.node.split(".")[-1], e.kind) for e in c.uses} for c in events.candidates}
    assert uses["user_id"] == {("by_user", "equality"), ("by_user", "join")}  # CTE + alias
    assert uses["event_id"] == {("with_source", "join"), ("by_event", "range")}  # via a view
    assert uses["region"] == {("by_region", "in")}
    assert uses["event_date"] == {("by_day", "range")}  # a subquery renaming it
    unresolved = {(u.node.split(".")[-1], u.reason.split(":")[0]) for u in events.unresolved}
    assert ("user_events", "a Python model") in unresolved
    assert any(n == "with_source" and "flag" in r for n, r in unresolved)
    assert len(events.unresolved) == 2
    users = by_model["users"]
    assert users.columns == ()  # one file per partition: no layout skips a file
    country = next(c for c in users.candidates if c.column == "country")
    assert country.excluded.startswith("a partition column")
    # measured: every one of the table's files admits every value before clustering
    assert events.files
    assert events.admitted_now == {c: events.files for c in EXPECTED}


def test_advise_run_operation_and_command_line(compiled: tuple[Path, Path], capsys):
    project, _warehouse = compiled
    said: list[str] = []
    select = "{select: [events, users]}"
    _dbt(project, "run-operation", "maintenance_advise", "--args", select, said=said)
    assert any("events: recommend user_id, event_date" in m for m in said)
    # the run-operation's own manifest has no compiled SQL: the yml test is read from its
    # folder under target/compiled, the snapshot from its first run's SQL under target/run
    lines = [line.strip() for m in said for line in m.splitlines()]
    assert not [x for x in lines if x.startswith(("unresolved: test.", "unresolved: snapshot."))]
    from python_ops.cli.main import main

    argv = ["advise", "--project-dir", str(project), "--profiles-dir", str(project), "--json"]
    assert main(argv) == 0
    printed = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert next(a for a in printed if a["model"] == "events")["columns"] == list(EXPECTED)
    users = next(a for a in printed if a["model"] == "users")
    assert {r.split(".")[0] for r in users["readers"]} >= {"test", "snapshot"}
    assert not [u for u in users["unresolved"] if u["node"].split(".")[0] != "model"]


def test_auto_clusters_on_the_advised_columns_once(compiled: tuple[Path, Path]):
    project, warehouse = compiled
    location = str(warehouse / "adv" / "events")
    before = _rows_and_checksum(location)
    files_before = float(len(read_snapshot(location).files))
    _dbt(project, "run-operation", "maintain_all")
    snapshot = read_snapshot(location, with_stats=True)
    files = len(snapshot.files)
    assert files > 4
    for column in EXPECTED:
        admitted = files_admitted(snapshot, column).admitted
        assert admitted <= 3 * math.sqrt(files), (column, admitted, files)
    assert _rows_and_checksum(location) == before
    history = HistoryStore(str(warehouse / "adv" / "maintenance_history"))
    clustered = [r for r in history.records() if r.model == "events" and r.op == "optimize"]
    assert [r.clustering_columns for r in clustered][-1] == ",".join(EXPECTED)
    last = clustered[-1]
    assert json.loads(last.parameters)["auto_changed"] is True
    assert set(json.loads(last.clustering_evidence or "{}")) == set(EXPECTED)
    before_admitted = json.loads(last.files_per_lookup_before or "{}")
    assert before_admitted == dict.fromkeys(EXPECTED, files_before)
    after = json.loads(last.files_per_lookup_after or "{}")
    assert set(after) == set(EXPECTED)
    assert all(v <= 3 * math.sqrt(files) for v in after.values())
    version = snapshot.version
    # the same choice again: no re-clustering, neither when due nor when asked for
    _dbt(project, "run-operation", "maintain_all")
    _dbt(project, "run-operation", "optimize_all", "--args", "{select: [events]}")
    assert read_snapshot(location).version == version
    runs = [r for r in history.records() if r.model == "events" and r.op == "optimize"]
    assert json.loads(runs[-1].parameters)["auto_changed"] is False
    assert runs[-1].files_added == 0
    # the figures before -> after the clustering: maintenance_report and dbt docs
    said: list[str] = []
    _dbt(project, "run-operation", "maintenance_report", said=said)
    lines = [line for m in said for line in m.splitlines()]
    line = next(x for x in lines if "files admitted per lookup:" in x)
    assert line.split()[0] == "events"
    assert f"user_id {before_admitted['user_id']} ->" in line
    _dbt(project, "docs", "generate")
    catalog = json.loads((project / "target" / "catalog.json").read_text())
    stat = catalog["nodes"]["model.advised.events"]["stats"]["maintenance_files_per_lookup"]
    assert stat["value"].startswith("user_id ")
