"""Any dbt project on ``type: sparkdelta`` has the maintenance macros: they ship with the adapter.

The host project below is a separate project in a temporary directory, with its own
``dbt_project.yml`` and profile; it installs no package (no ``packages.yml``, no ``dbt deps``)
and defines no macro of its own, yet its post-hook and run-operations maintain its tables.
"""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest
from dbt.cli.main import dbtRunner, dbtRunnerResult
from deltalake import DeltaTable

from python_ops.maintenance.records.history import HistoryRecord, HistoryStore
from python_ops.maintenance.rules.log_bounds import PROOF_OPS
from python_ops.maintenance.rules.untracked_bound import CHECK_OP
from python_ops.maintenance.selection.locations import HISTORY_NAME
from tests.helpers.paths import ROOT
from tests.helpers.vacuum import content, untracked

pytestmark = pytest.mark.slow

HOST_PROJECT = """
name: host_project
version: "1.0.0"
config-version: 2
profile: host
models:
  host_project:
    +file_format: delta
    +materialized: table
    # the adapter's macro, unqualified: nothing installed
    +post-hook: "{{ maintain_model() }}"
    +maintenance_min_small_files: 2
"""

PROFILES = """
host:
  target: embedded
  outputs:
    embedded:
      type: sparkdelta
      method: session
      mode: embedded
      schema: analytics
      warehouse: "{{ env_var('SPARKDELTA_WAREHOUSE') }}"
      threads: 1
"""

# many small files per build: one per batch value, appended by the incremental model; Z-ordered
# after every build (interval 0; the default with Z-order columns is once a day)
EVENTS = """
{{ config(materialized='incremental', incremental_strategy='append',
          maintenance_zorder_by=['event_id'], maintenance_optimize_interval_hours=0) }}
select id as event_id, id % 7 as kind, {{ var('batch', 0) }} as batch
from range({{ var('batch', 0) }} * 100, {{ var('batch', 0) }} * 100 + 100)
"""


def readme_history_source() -> str:
    """The ``sources:`` snippet the docs tell users to copy for the history as a source."""
    page = (ROOT / "docs" / "run-operations.md").read_text()
    section = page.split("## The maintenance history as a dbt source", 1)[1]
    match = re.search(r"```yaml\n(.*?)```", section, re.DOTALL)
    assert match, (
        "docs/run-operations.md: no yaml block under 'The maintenance history as a source'"
    )
    return match.group(1)


@pytest.fixture
def host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_engines: None) -> Path:
    """A second dbt project, unrelated to the example project, on the sparkdelta adapter."""
    project = tmp_path / "host"
    (project / "models").mkdir(parents=True)
    (project / "dbt_project.yml").write_text(textwrap.dedent(HOST_PROJECT))
    (project / "profiles.yml").write_text(textwrap.dedent(PROFILES))
    (project / "models" / "events.sql").write_text(textwrap.dedent(EVENTS))
    monkeypatch.setenv("SPARKDELTA_WAREHOUSE", str(tmp_path / "warehouse"))
    return project


def dbt(project: Path, *args: str, variables: dict[str, object] | None = None) -> dbtRunnerResult:
    command = [*args, "--project-dir", str(project), "--profiles-dir", str(project)]
    if variables:
        command += ["--vars", json.dumps(variables)]
    return dbtRunner().invoke(command)


def history(warehouse: Path) -> list[HistoryRecord]:
    """The models' op runs: what the due checks proved (ops ``vacuum_check``, ``log_bounds``)
    and the history's own upkeep (its compaction once small files pile up, model
    ``maintenance_history``) left out.
    """
    records = HistoryStore(str(warehouse / "analytics" / "maintenance_history")).records()
    return [r for r in records if r.op not in PROOF_OPS and r.model != HISTORY_NAME]


def test_a_second_project_gets_the_macros_from_the_adapter(
    host: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    warehouse = host.parent / "warehouse"
    events = warehouse / "analytics" / "events"
    (host / "models" / "_history.yml").write_text(readme_history_source())
    for batch in range(3):
        result = dbt(host, "run", variables={"batch": batch})
        assert result.success, result.exception
    # nothing was installed: the macros come from the adapter's include package
    assert not (host / "dbt_packages").exists()
    assert not (host / "packages.yml").exists()
    macros = json.loads((host / "target" / "manifest.json").read_text())["macros"]
    for name in ("maintain_model", "sparkdelta__maintain_model", "vacuum_all", "maintain_all"):
        assert f"macro.dbt_sparkdelta.{name}" in macros
    assert not any(m["package_name"] == "host_project" for m in macros.values())
    assert sorted(p.name for p in (warehouse / "analytics").iterdir()) == [
        "events",
        "maintenance_history",
    ]
    # the first build wrote one file (nothing to gain from a Z-order); each later build added
    # one: the post-hook Z-ordered the two into one
    assert [(r.model, r.op, r.status) for r in history(warehouse)] == [
        ("events", "optimize", "succeeded")
    ] * 2
    assert len(DeltaTable(str(events)).file_uris()) == 1
    rows_before, checksum_before = content(events)
    assert rows_before == 300

    # vacuum_all: a dry run reports a failed job's leftover and keeps it, a real run deletes it
    leftover = untracked(events, "part-failed-job.parquet", days=30)
    dry = dbt(host, "run-operation", "vacuum_all", "--args", "{dry_run: true}")
    assert dry.success, dry.exception
    new = history(warehouse)[2:]
    assert [(r.op, r.dry_run, r.status, r.files_removed) for r in new] == [
        ("vacuum", True, "succeeded", 1)
    ]
    assert leftover.exists()
    done = dbt(host, "run-operation", "vacuum_all")
    assert done.success, done.exception
    new = history(warehouse)[3:]
    assert [(r.op, r.dry_run, r.status, r.files_removed) for r in new] == [
        ("vacuum", False, "succeeded", 1)
    ]
    assert not leftover.exists()
    assert content(events) == (rows_before, checksum_before)
    refused = dbt(host, "run-operation", "vacuum_all", "--args", "{dry_run: 'false'}")
    assert not refused.success
    assert len(history(warehouse)) == 4

    # maintain_all does what is due: small files from builds with the post-hook off
    for batch in (3, 4):
        result = dbt(host, "run", variables={"batch": batch, "maintenance_post_hook": False})
        assert result.success, result.exception
    assert len(history(warehouse)) == 4
    assert len(DeltaTable(str(events)).file_uris()) > 1
    rows_before, checksum_before = content(events)
    assert rows_before == 500
    assert dbt(host, "run-operation", "maintain_all").success
    new = history(warehouse)[4:]
    # VACUUM ran within its 24 h interval and no log has expired: only the Z-order is due
    assert [(r.model, r.op, r.dry_run, r.status) for r in new] == [
        ("events", "optimize", False, "succeeded")
    ]
    assert len(DeltaTable(str(events)).file_uris()) == 1
    assert content(events) == (rows_before, checksum_before)

    capfd.readouterr()
    assert dbt(host, "run-operation", "maintenance_report").success
    assert "events" in capfd.readouterr().out

    # the README's snippet makes the history a dbt source of this project too
    shown = dbt(
        host,
        "show",
        "--inline",
        "select op, count(*) as runs from {{ source('maintenance', 'maintenance_history') }} "
        "group by op order by op",
    )
    assert shown.success, shown.exception
    runs = {row[0]: row[1] for row in shown.result.results[0].agate_table.rows}
    every = HistoryStore(str(warehouse / "analytics" / "maintenance_history")).records()
    assert runs == {op: sum(1 for r in every if r.op == op) for op in runs}  # the whole history
    assert runs["vacuum"] == 2
    assert runs[CHECK_OP] >= 1  # the due checks' listing bounds are rows an analyst sees too


def test_a_project_overrides_a_dispatched_macro(
    host: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    (host / "macros").mkdir()
    (host / "macros" / "report.sql").write_text(
        "{% macro sparkdelta__maintenance_report(select, exclude) %}"
        "{% do print('host report for ' ~ select) %}{% endmacro %}\n"
    )
    capfd.readouterr()
    result = dbt(host, "run-operation", "maintenance_report", "--args", "{select: [events]}")
    assert result.success, result.exception
    assert "host report for ['events']" in capfd.readouterr().out
