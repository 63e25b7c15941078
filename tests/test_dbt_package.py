"""This project used as a dbt package: another project installs it with ``dbt deps`` (local)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from dbt.cli.main import dbtRunner, dbtRunnerResult
from deltalake import DeltaTable

from python_ops.maintenance.history import HistoryStore
from tests.conftest import ROOT
from tests.vacuum_helpers import content

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
    # the package's macro, qualified by the package name
    +post-hook: "{{ shop_lakehouse.maintain_model() }}"
    +maintenance_min_small_files: 2
  shop_lakehouse:
    +enabled: false   # take the macros, not the example models
seeds:
  shop_lakehouse:
    +enabled: false
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

# many small files per build: one per batch value, appended by the incremental model
EVENTS = """
{{ config(materialized='incremental', incremental_strategy='append',
          maintenance_zorder_by=['event_id']) }}
select id as event_id, id % 7 as kind, {{ var('batch', 0) }} as batch
from range({{ var('batch', 0) }} * 100, {{ var('batch', 0) }} * 100 + 100)
"""


@pytest.fixture
def host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_engines: None) -> Path:
    """A second dbt project that lists this repository as a local package."""
    project = tmp_path / "host"
    (project / "models").mkdir(parents=True)
    (project / "dbt_project.yml").write_text(textwrap.dedent(HOST_PROJECT))
    (project / "profiles.yml").write_text(textwrap.dedent(PROFILES))
    (project / "packages.yml").write_text(f"packages:\n  - local: {ROOT}\n")
    (project / "models" / "events.sql").write_text(textwrap.dedent(EVENTS))
    monkeypatch.setenv("SPARKDELTA_WAREHOUSE", str(tmp_path / "warehouse"))
    return project


def dbt(project: Path, *args: str) -> dbtRunnerResult:
    return dbtRunner().invoke(
        [*args, "--project-dir", str(project), "--profiles-dir", str(project)]
    )


def test_another_project_gets_the_macros_through_dbt_deps(host: Path) -> None:
    warehouse = host.parent / "warehouse"
    assert dbt(host, "deps").success
    assert (host / "dbt_packages" / "shop_lakehouse" / "macros" / "maintenance").is_dir()
    for batch in range(3):
        result = dbt(host, "run", "--vars", f"{{batch: {batch}}}")
        assert result.success, result.exception
    # the example project's models stayed out of the host's build
    assert sorted(p.name for p in (warehouse / "analytics").iterdir()) == [
        "events",
        "maintenance_history",
    ]
    events = warehouse / "analytics" / "events"
    records = HistoryStore(str(warehouse / "analytics" / "maintenance_history")).records()
    # each build left two or more small files: the package's post-hook Z-ordered them into one
    assert [(r.model, r.op, r.status) for r in records] == [("events", "optimize", "succeeded")] * 3
    assert len(DeltaTable(str(events)).file_uris()) == 1
    rows_before, checksum_before = content(events)

    # the package's run-operations, by qualified and plain name
    dry = dbt(host, "run-operation", "shop_lakehouse.vacuum_all", "--args", "{dry_run: true}")
    assert dry.success, dry.exception
    assert dbt(host, "run-operation", "maintain_all").success
    records = HistoryStore(str(warehouse / "analytics" / "maintenance_history")).records()
    assert [(r.op, r.dry_run) for r in records[3:]] == [("vacuum", True)]
    assert content(events) == (rows_before, checksum_before)
    assert rows_before == 300
