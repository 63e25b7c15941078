"""A dbt command's first build start reads every maintained table's version at once
(``build_clock``); each later start records what it would have read itself.

Real dbt on the embedded engine. Model ``b`` reads ``a``; ``a``'s second post-hook (with the var
``poke``) inserts a row into ``b``'s table, after the first start looked at it and before
``b``'s own start: ``b``'s start finds its table moved on (its log directory's stamp changed,
and ``head_still``), reads it again, and the version it records is the insert's, so ``b``'s
post-hook reads only its build's own commit; ``a`` and ``c``'s starts check theirs with one
``lstat`` each (the stamp holds).
Without the insert, every start records the version its table had before its build, and the
checksum of that version the first start read with it. A build that selects one model looks
ahead at that model's table only (dbt's ``selected_resources``), by its listing or by the look
the previous command's end kept of it (``looks_kept``).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from dbt.cli.main import dbtRunner

from dbt.adapters.sparkdelta import build_clock
from dbt.adapters.sparkdelta.build_clock import BuildClock, StartedBuild
from python_ops.delta.commits import commit_actions
from python_ops.maintenance.facts.build_start import head_version
from python_ops.maintenance.facts.kept_looks import KeptLook, LookEntry
from python_ops.maintenance.facts.log_change import RACY_NS
from python_ops.storage import open_storage
from tests.helpers.fleet_project import PROJECT as FLEET_PROJECT
from tests.helpers.fleet_project import write_models

pytestmark = pytest.mark.slow

# the fleet's project, and a second post-hook on ``a`` that writes into ``b`` (with ``poke``)
PROJECT = (
    FLEET_PROJECT
    + """\
    a:
      +post-hook: "{% if var('poke', false) %}insert into fleet.b values (99, 'poked'){% endif %}"
"""
)


def _project(root: Path) -> Path:
    table = "{{ config(materialized='table') }}\n"
    return write_models(
        root,
        {
            "a.sql": table + "select 1 as id, 'a' as name\n",
            "b.sql": table + "select id, 'b' as name from {{ ref('a') }}\n",
            "c.sql": table + "select 3 as id, 'c' as name\n",
        },
        project=PROJECT,
    )


def _in_warehouse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """The project, and the warehouse its builds write to."""
    warehouse = tmp_path / "warehouse"
    monkeypatch.setenv("SPARKDELTA_WAREHOUSE", str(warehouse))
    return _project(tmp_path / "p"), warehouse


def _build(project: Path, *more: str, **variables: Any) -> None:
    args = ["build", *more, "--project-dir", str(project), "--profiles-dir", str(project)]
    if variables:
        args += ["--vars", json.dumps(variables)]
    result = dbtRunner().invoke(args)
    assert result.success, result.exception


@pytest.fixture
def taken(monkeypatch: pytest.MonkeyPatch) -> dict[str, StartedBuild]:
    """What each post-hook takes back from its build's start, by model (the real one runs)."""
    seen: dict[str, StartedBuild] = {}
    take = BuildClock.take

    def recorded(clock: BuildClock, node: Any) -> StartedBuild | None:
        started = take(clock, node)
        if started is not None:
            seen[started.unique_id.rsplit(".", 1)[-1]] = started
        return started

    monkeypatch.setattr(BuildClock, "take", recorded)
    return seen


def test_each_start_records_its_table_as_it_was_when_its_build_began(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    fresh_engines: None,
    taken: dict[str, StartedBuild],
) -> None:
    project, warehouse = _in_warehouse(tmp_path, monkeypatch)
    tables = {name: str(warehouse / "fleet" / name) for name in "abc"}

    _build(project)  # the tables are created where nothing was
    assert {n: (s.version_before, s.location_was_empty) for n, s in taken.items()} == {
        n: (None, True) for n in "abc"
    }
    before = {name: head_version(location) for name, location in tables.items()}
    taken.clear()

    _build(project)  # nothing else writes: the first start's look holds for every table
    assert {n: s.version_before for n, s in taken.items()} == before
    assert not any(s.location_was_empty for s in taken.values())
    # with each table's checksum of that version, read by the same look
    assert {n: _checksum_version(s) for n, s in taken.items()} == before
    before = {name: head_version(location) for name, location in tables.items()}
    taken.clear()

    # every log unchanged for longer than the racy window: the look's stamps are trusted, and
    # a start checks its table with one lstat of the log, names asked only where it changed
    time.sleep(RACY_NS / 1e9)
    checked = _counted(monkeypatch)
    _build(project, poke=True)  # a's post-hook writes into b before b's build starts
    assert {check: sorted(names) for check, names in checked.items()} == {
        "stamp held": ["a", "c"],
        "stamp broken": ["b"],
        "names asked": ["b"],
    }
    poked = taken["b"].version_before
    assert poked == before["b"] + 1
    insert = commit_actions(open_storage(tables["b"]), poked)
    assert any("add" in action for action in insert)  # the insert's commit, not b's build's
    assert taken["a"].version_before == before["a"]
    assert taken["c"].version_before == before["c"]
    assert head_version(tables["b"]) == poked + 1  # b's build committed after the insert
    # b's start looked itself, cold: its checksum is left to the post-hook
    assert taken["b"].checksum_before is None
    assert _checksum_version(taken["a"]) == before["a"]


def _counted(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    """By table: the starts whose log stamp held, broke, and that asked names."""
    checked: dict[str, list[str]] = {"stamp held": [], "stamp broken": [], "names asked": []}
    unchanged, still = build_clock.log_unchanged, build_clock.head_still

    def log_unchanged(stamp: Any) -> bool:
        held = unchanged(stamp)
        checked["stamp held" if held else "stamp broken"].append(Path(stamp.path).parent.name)
        return held

    def head_still(location: str, version: int) -> bool:
        checked["names asked"].append(Path(location).name)
        return still(location, version)

    monkeypatch.setattr(build_clock, "log_unchanged", log_unchanged)
    monkeypatch.setattr(build_clock, "head_still", head_still)
    return checked


def _checksum_version(started: StartedBuild) -> int | None:
    return started.checksum_before.version if started.checksum_before is not None else None


def test_a_selected_build_looks_ahead_at_the_selected_models_tables_only(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    fresh_engines: None,
    taken: dict[str, StartedBuild],
) -> None:
    project, _ = _in_warehouse(tmp_path, monkeypatch)
    _build(project)
    looked: list[str] = []
    look, holding = build_clock.head_version, build_clock.holding_look

    def head_version_counted(location: Any) -> Any:
        looked.append(Path(str(location)).name)
        return look(location)

    def held_counted(entry: LookEntry, **kwargs: Any) -> KeptLook | None:
        held = holding(entry, **kwargs)
        if held is not None:  # the previous command's end kept the table's look: no listing
            looked.append(Path(held.location).name)
        return held

    monkeypatch.setattr(build_clock, "head_version", head_version_counted)
    monkeypatch.setattr(build_clock, "holding_look", held_counted)
    taken.clear()
    _build(project, "--select", "c")  # dbt's selection: c alone is built
    assert looked == ["c"]  # not a and b's tables (each would be a listing and a checksum)
    assert set(taken) == {"c"}
    assert _checksum_version(taken["c"]) == taken["c"].version_before
    looked.clear()
    _build(project)  # the next command selects everything again
    assert sorted(looked) == ["a", "b", "c"]
