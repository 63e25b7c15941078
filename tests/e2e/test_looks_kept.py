"""Tables' looks kept from one dbt command to the next (``looks_kept``): where a post-hook left
its table stands in for the next command's first reads only while it holds.

Real dbt on the embedded engine. Models ``a`` and ``b`` are tables; ``slow``, a Python model
after both, takes longer than the racy window, so as the command ends the logs of ``a`` and
``b`` are old enough for their stamps to be trusted and both looks are kept: the version each
post-hook left and the table there, which is what Sail's checksum file of that version says.
Between the commands a writer inserts into ``b``: the next build's start finds ``b``'s look
broken (its log changed), reads ``b`` itself and records the insert's version, while ``a``'s
start takes its look with one ``lstat`` and reads neither its log's names nor its checksum.
With the tables gone, no look holds and each start finds nothing there, as in a first build;
a look no command uses is written back while it holds and dropped once its table is gone.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from dbt.cli.main import dbtRunner

from dbt.adapters.sparkdelta import build_clock
from dbt.adapters.sparkdelta.build_clock import BuildClock, StartedBuild
from dbt.adapters.sparkdelta.engines import get_engine
from dbt.adapters.sparkdelta.looks_kept import LOOKS_FILE
from python_ops.delta.version_checksum import read_version_checksum
from python_ops.maintenance.facts.build_start import head_version
from python_ops.maintenance.facts.kept_looks import KeptLook, LookEntry, load_looks, read_look
from python_ops.maintenance.facts.log_change import RACY_NS
from python_ops.storage import open_storage
from tests.helpers.fleet_project import write_models

pytestmark = pytest.mark.slow

SLOW = f"""\
import time


def model(dbt, session):
    dbt.config(materialized="table")
    dbt.ref("a")
    time.sleep({RACY_NS / 1e9 + 0.5})
    return dbt.ref("b")
"""


def _project(root: Path) -> Path:
    return write_models(
        root,
        {
            "a.sql": "{{ config(materialized='table') }}\nselect 1 as id, 'a' as name\n",
            "b.sql": "{{ config(materialized='table') }}\nselect 2 as id, 'b' as name\n",
            "slow.py": SLOW,
        },
    )


def _version(look: KeptLook | None) -> int:
    assert look is not None
    return look.version


def _build(project: Path, *more: str) -> None:
    args = ["build", *more, "--project-dir", str(project), "--profiles-dir", str(project)]
    result = dbtRunner().invoke(args)
    assert result.success, result.exception


@pytest.fixture
def watched(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """By model: what its post-hook took back from its start; the tables whose kept look held
    or broke at a start, and those whose log's names were listed (the real calls run)."""
    seen: dict[str, Any] = {"taken": {}, "held": [], "broken": [], "listed": []}
    take, holding, listing = BuildClock.take, build_clock.holding_look, build_clock.head_version

    def taken(clock: BuildClock, node: Any) -> StartedBuild | None:
        started = take(clock, node)
        if started is not None:
            seen["taken"][started.unique_id.rsplit(".", 1)[-1]] = started
        return started

    def held(entry: LookEntry, **kwargs: Any) -> KeptLook | None:
        found = holding(entry, **kwargs)
        seen["held" if found else "broken"].append(Path(entry["location"]).name)
        return found

    def listed(location: Any) -> Any:
        seen["listed"].append(Path(str(location)).name)
        return listing(location)

    monkeypatch.setattr(BuildClock, "take", taken)
    monkeypatch.setattr(build_clock, "holding_look", held)
    monkeypatch.setattr(build_clock, "head_version", listed)
    return seen


def test_a_kept_look_stands_in_for_the_next_commands_reads_only_while_it_holds(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    fresh_engines: None,
    watched: dict[str, Any],
) -> None:
    warehouse = tmp_path / "warehouse"
    monkeypatch.setenv("SPARKDELTA_WAREHOUSE", str(warehouse))
    project = _project(tmp_path / "p")
    tables = {name: str(warehouse / "fleet" / name) for name in ("a", "b")}

    _build(project)  # created where nothing was: each post-hook replayed its table's state
    entries = load_looks(str(project / "target" / LOOKS_FILE))
    looks = {location: read_look(entry) for location, entry in entries.items()}
    assert set(tables.values()) <= set(looks)  # older than the racy window as the command ended
    for location in tables.values():
        look = looks[location]
        assert look is not None
        assert look.version == head_version(location)
        # the state the post-hook left is what Sail's checksum file of that version says
        assert look.state == read_version_checksum(open_storage(location), look.version)
    kept = {name: _version(looks[location]) for name, location in tables.items()}

    engine = get_engine(mode="embedded", warehouse=str(warehouse), connect_url=None)
    engine.sql("insert into fleet.b values (3, 'written between the commands')")
    inserted = head_version(tables["b"])
    assert inserted == kept["b"] + 1
    for seen in ("held", "broken", "listed"):
        watched[seen].clear()
    watched["taken"].clear()

    _build(project)
    assert sorted(watched["held"]) == ["a"]
    assert "b" in watched["broken"]
    assert "a" not in watched["listed"]  # one lstat of its log, no listing, no checksum read
    assert "b" in watched["listed"]  # its look broke: its start read it itself
    a, b = watched["taken"]["a"], watched["taken"]["b"]
    assert a.version_before == kept["a"]
    kept_a = looks[tables["a"]]
    assert kept_a is not None
    assert a.checksum_before == kept_a.state
    assert b.version_before == inserted  # the writer's commit, not the look's version
    assert b.checksum_before is None or b.checksum_before.version == inserted
    assert head_version(tables["b"]) == inserted + 1  # b's build committed after the insert
    rows = engine.sql("select count(*) from fleet.b").collect()[0][0]
    assert rows == 1  # the table model replaced b's rows: the build wrote what it should
    # a's new look: derived from the kept one and the build's commit, still what Sail wrote
    again = load_looks(str(project / "target" / LOOKS_FILE))
    look_a = read_look(again[tables["a"]])
    assert look_a is not None
    assert look_a.version == head_version(tables["a"]) == kept["a"] + 1
    assert look_a.state == read_version_checksum(open_storage(tables["a"]), look_a.version)

    # the warehouse wiped: no kept look holds, each start finds nothing there, as a first build
    engine.sql("drop table fleet.a")
    engine.sql("drop table fleet.b")
    shutil.rmtree(warehouse / "fleet" / "a", ignore_errors=True)
    shutil.rmtree(warehouse / "fleet" / "b", ignore_errors=True)
    watched["taken"].clear()
    watched["held"].clear()
    _build(project)
    assert watched["held"] == []
    assert {
        n: (watched["taken"][n].version_before, watched["taken"][n].location_was_empty)
        for n in ("a", "b")
    } == {
        "a": (None, True),
        "b": (None, True),
    }

    # a look the next command does not use is written back while it holds, and dropped once
    # its table is gone: a wiped table leaves nothing in the file for every command to read
    file = str(project / "target" / LOOKS_FILE)
    assert tables["b"] in load_looks(file)
    _build(project, "--select", "a")  # b's look not used: written back as read
    assert tables["b"] in load_looks(file)
    engine.sql("drop table fleet.b")
    shutil.rmtree(warehouse / "fleet" / "b", ignore_errors=True)
    _build(project, "--select", "a")
    assert tables["b"] not in load_looks(file)
