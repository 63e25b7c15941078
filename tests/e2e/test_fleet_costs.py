"""Flat cost per model (issue 38, item 1): call counts, not times, from 10 to 60 models.

Generated projects (``tests/helpers/fleet_project.py``) of 10 and 60 tiny table models plus 2
incremental merges, each built twice with the maintenance post-hook (real dbt, the embedded
engine), then a run-operation selecting one model in a fresh engine. Counted:

- scans of dbt's relation cache (``RelationsCache.get_relations``: every cached relation of a
  schema per call): on main 6a03820 each model's materialization and post-hook made them, so
  finding the tables was quadratic;
- catalog statements the engine ran (``EmbeddedEngine.statements``): a table's own ``SHOW TABLE
  EXTENDED ... LIKE`` (on main one per CREATE, to learn the location the statement had given);
  listings of the whole schema; tables registered from the journal;
- the catalog journal's appended records and whole rewrites (on main every CREATE re-read and
  rewrote the whole journal);
- VACUUM's due checks in a first build: every table was built where nothing existed, so each is
  bounded from its build's start and none is listed (``untracked_bound``); the history keeps
  that one fact per table (``empty_origin``), and no other proof row;
- the adapter's debug lines of the post-hooks' own times: one per dbt command, every hook in it
  (one event per model cost each hook's thread as much as a hook with nothing due), with the
  history rows the hooks kept for the command's end counted when they are written;
- the version before each build (``build_clock``): one ``head_version`` by each start with the
  post-hook on (a table not there yet: its log directory's size, then one ``lstat`` of its
  location); none with it off (``maintenance_post_hook: false``), so a build without
  maintenance pays only for the config check; and the post-hooks' questions whether the table's
  log exists: none for a table whose start listed a commit;
- whether the run-operation with nothing due started the embedded Sail server: it does not (the
  journal, the Delta logs and the history answer it; the history's catalog entry is in the
  journal already);
- the models' table snapshots the post-hooks and the run-operation reconstructed: none, since
  nothing is due and the builds' commits (or the log's head), Sail's checksums and the
  history's bounds prove it (``build_decisions``); each read costs a listing of the log and
  its checkpoint;
- the checksum files read: none by a created table's post-hook (its build's commits are its
  whole log, replayed), one by a rebuilt table's (the version its build made).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from dbt.adapters.cache import RelationsCache
from dbt.cli.main import dbtRunner

from dbt.adapters.sparkdelta.bridge import locator
from dbt.adapters.sparkdelta.common import runtime as adapter_runtime
from dbt.adapters.sparkdelta.engines import get_engine, shutdown_engines
from dbt.adapters.sparkdelta.operations import build_clock
from python_ops import runtime
from python_ops.maintenance.records import history
from python_ops.maintenance.records.history import HistoryStore
from python_ops.maintenance.rules import known_table
from python_ops.maintenance.rules.empty_origin import ORIGIN_OP
from python_ops.maintenance.rules.log_bounds import PROOF_OPS
from python_ops.storage.local import LocalStorage
from tests.helpers.fleet_project import write_fleet_project

pytestmark = pytest.mark.slow

SIZES = (10, 60)
INCREMENTAL = 2


@pytest.fixture
def log_listings(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Counts the build clock's listings of a log at a build's start, the checksum files the
    starts and the post-hooks read, and the hooks' questions whether a table's log exists (the
    real ones still run)."""
    counted: Counter[str] = Counter()
    listing: Callable[..., Any] = build_clock.head_version
    asking: Callable[..., Any] = locator.is_delta_table
    reading: Callable[..., Any] = known_table.read_version_checksum
    fetching: Callable[..., Any] = LocalStorage.read_bytes
    probing: Callable[..., Any] = LocalStorage.exists

    def head_version(location: Any) -> Any:
        counted["head_version"] += 1
        return listing(location)

    def is_delta_table(location: Any) -> Any:
        counted["is_delta_table"] += 1
        return asking(location)

    def read_version_checksum(storage: Any, version: int) -> Any:
        counted["checksum files read"] += 1
        return reading(storage, version)

    def read_bytes(storage: LocalStorage, rel: str) -> bytes:
        if rel.endswith(".json") and not storage.root.endswith("maintenance_history"):
            counted["commit files read"] += 1  # or tried, and not there
        return fetching(storage, rel)

    def exists(storage: LocalStorage, rel: str) -> bool:
        if rel.endswith(".json") and not storage.root.endswith("maintenance_history"):
            counted["commit names asked for"] += 1
        return bool(probing(storage, rel))

    monkeypatch.setattr(build_clock, "head_version", head_version)
    monkeypatch.setattr(known_table, "read_version_checksum", read_version_checksum)
    monkeypatch.setattr(LocalStorage, "read_bytes", read_bytes)
    monkeypatch.setattr(LocalStorage, "exists", exists)
    monkeypatch.setattr(locator, "is_delta_table", is_delta_table)
    reading_history: Callable[..., Any] = history.read_table
    summarizing: Callable[..., Any] = history.read_summary

    def read_table(location: str, *args: Any, **kwargs: Any) -> Any:
        counted["history tables read"] += 1
        return reading_history(location, *args, **kwargs)

    def read_summary(location: str, head: Any) -> Any:
        found = summarizing(location, head)
        counted["history summaries used" if found is not None else "history summaries not"] += 1
        return found

    monkeypatch.setattr(history, "read_table", read_table)
    monkeypatch.setattr(history, "read_summary", read_summary)
    return counted


@pytest.fixture
def scans(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Counts calls of dbt's ``RelationsCache.get_relations`` (the real method still runs)."""
    counted: Counter[str] = Counter()
    original: Callable[..., Any] = RelationsCache.get_relations

    def get_relations(self: RelationsCache, database: Any, schema: Any) -> Any:
        counted["get_relations"] += 1
        return original(self, database, schema)

    monkeypatch.setattr(RelationsCache, "get_relations", get_relations)
    return counted


def _dbt(project: Path, *args: str) -> None:
    command = [*args, "--project-dir", str(project), "--profiles-dir", str(project)]
    result = dbtRunner().invoke(command)
    assert result.success, result.exception


def _hook_time_lines(project: Path) -> tuple[int, int, int]:
    """The adapter's lines of post-hook times in dbt.log (then cleared), the hooks named, and
    the lines counting the history rows the hooks kept for the command's end."""
    log = project / "logs" / "dbt.log"
    lines = [line for line in log.read_text().splitlines() if "maintenance post-hook" in line]
    log.write_text("")
    named = sum(len(re.findall(r"\w+ [0-9.]+/[0-9.]+", line)) for line in lines)
    flushed = sum(
        int(found.group(1)) > 0
        for line in lines
        if (found := re.search(r"at the command's end the (\d+) history row\(s\) written", line))
    )
    return len(lines), named, flushed


def _proofs(warehouse: Path) -> Counter[str]:
    """The history's proof rows by op (a created table's origin, a listing's bound)."""
    history = HistoryStore(str(warehouse / "fleet" / "maintenance_history"))
    return Counter(r.op for r in history.records() if r.op in PROOF_OPS)


def _measure(
    root: Path,
    tables: int,
    scans: Counter[str],
    listings: Counter[str],
    monkeypatch: pytest.MonkeyPatch,
) -> dict[str, Counter[str]]:
    """Counts of each step on a fresh project of ``tables`` table models."""
    warehouse = root / f"warehouse-{tables}"
    monkeypatch.setenv("SPARKDELTA_WAREHOUSE", str(warehouse))
    project = write_fleet_project(root / f"p{tables}", tables=tables, incremental=INCREMENTAL)
    shutdown_engines()
    out: dict[str, Counter[str]] = {}
    hook_off = ("--vars", json.dumps({"maintenance_post_hook": False}))
    for step, args in (("first build", ()), ("repeat build", ()), ("build, hook off", hook_off)):
        scans.clear()
        listings.clear()
        engine = get_engine(mode="embedded", warehouse=str(warehouse), connect_url=None)
        before = Counter(engine.statements)  # type: ignore[attr-defined]
        appends, rewrites = engine.journal.appends, engine.journal.compactions  # type: ignore[attr-defined]
        reads = Counter(runtime.SNAPSHOT_READS.value)
        with (
            adapter_runtime.HISTORY_STORES.lock
        ):  # each command's history as a new process finds it
            adapter_runtime.HISTORY_STORES.value.clear()
        _dbt(project, "build", *args)
        counts = Counter(engine.statements) - before  # type: ignore[attr-defined]
        read = Counter(runtime.SNAPSHOT_READS.value) - reads
        counts["table snapshots read"] = sum(
            n for root, n in read.items() if not root.endswith("maintenance_history")
        )
        counts["journal appends"] = engine.journal.appends - appends  # type: ignore[attr-defined]
        counts["journal rewrites"] = engine.journal.compactions - rewrites  # type: ignore[attr-defined]
        counts["cache scans"] = scans["get_relations"]
        counts["log listings at build start"] = listings["head_version"]
        counts["hooks asking for a log"] = listings["is_delta_table"]
        counts["checksum files read"] = listings["checksum files read"]
        counts["commit files read"] = listings["commit files read"]
        counts["commit names asked for"] = listings["commit names asked for"]
        counts["history tables read"] = listings["history tables read"]
        counts["history summaries used"] = listings["history summaries used"]
        lines, timed, flushed = _hook_time_lines(project)
        counts["hook time lines"], counts["hooks timed"] = lines, timed
        counts["hook lines with the history's rows"] = flushed
        if step == "first build":  # every table built where nothing was: bounded, not listed
            proofs = _proofs(warehouse)
            counts["tables kept as created where nothing existed"] = proofs[ORIGIN_OP]
            counts["other proof rows"] = sum(proofs.values()) - proofs[ORIGIN_OP]
        out[step] = counts
    args = json.dumps({"select": "t_0003"})
    shutdown_engines()  # a process that registers the history the hooks wrote, in the journal
    _dbt(project, "run-operation", "maintain_all", "--args", args)
    shutdown_engines()  # the next process: its engine starts from the journal
    scans.clear()
    engine = get_engine(mode="embedded", warehouse=str(warehouse), connect_url=None)
    reads = Counter(runtime.SNAPSHOT_READS.value)
    _dbt(project, "run-operation", "maintain_all", "--args", args)
    counts = Counter(engine.statements)  # type: ignore[attr-defined]
    counts["cache scans"] = scans["get_relations"]
    read = Counter(runtime.SNAPSHOT_READS.value) - reads
    counts["table snapshots read"] = sum(
        n for root, n in read.items() if not root.endswith("maintenance_history")
    )
    counts["engine started"] = int(engine.started)  # type: ignore[attr-defined]
    out["run-operation, 1 model selected"] = counts
    # a query of another table registers that table then, from the journal
    assert engine.sql("select id from fleet.t_0007").collect()[0][0] == 7
    out["then a query of t_0007"] = Counter(engine.statements) - counts  # type: ignore[attr-defined]
    shutdown_engines()
    return out


def test_catalog_work_per_model_stays_flat_from_10_to_60_models(
    tmp_path: Path,
    scans: Counter[str],
    log_listings: Counter[str],
    monkeypatch: pytest.MonkeyPatch,
    fresh_engines: None,
) -> None:
    small, large = (_measure(tmp_path, n, scans, log_listings, monkeypatch) for n in SIZES)
    grown = SIZES[1] - SIZES[0]
    print(json.dumps({"small": small, "large": large}, indent=1, default=dict))
    for step in small:
        # no scan of the cached relations, whatever the size (main: 2 per model, each O(N))
        assert large[step]["cache scans"] == small[step]["cache scans"], step
        # locations come from the statements that created the tables, never asked again
        assert large[step]["show_table"] == small[step]["show_table"] == 0, step
        # the schema is listed as a whole at most once per dbt command
        assert large[step]["list_schema"] <= 1, step
        assert large[step]["journal rewrites"] == 0, step
    first, repeat = "first build", "repeat build"
    for size, counts in zip(SIZES, (small, large), strict=True):
        # one row per table: the fact both bounds follow from; no listing's, no log bounds
        assert counts[first]["tables kept as created where nothing existed"] == size + INCREMENTAL
        assert counts[first]["other proof rows"] == 0
        # those rows are written as the command ends: the hooks' cost, in their time line
        assert counts[first]["hook lines with the history's rows"] == 1
    for step in (first, repeat):  # every hook timed, in one dbt event per command
        for size, counts in zip(SIZES, (small, large), strict=True):
            assert counts[step]["table snapshots read"] == 0, (step, size)
            assert counts[step]["hook time lines"] == 1, (step, size)
            assert counts[step]["hooks timed"] == size + INCREMENTAL, (step, size)
            # each start asks its own table's version once (a first build's: not there)
            listed = counts[step]["log listings at build start"]
            assert listed == size + INCREMENTAL, (step, size)
    for size, counts in zip(SIZES, (small, large), strict=True):
        # a created table's state is replayed from its build's commits (its whole log); a
        # rebuilt one's hook reads the checksum file of the version its build made
        assert counts[first]["checksum files read"] == 0, size
        assert counts[repeat]["checksum files read"] == size + INCREMENTAL, size
        # each hook reads its build's commit once and asks for the next one by name (not
        # there): a plain answer, no read tried and failed
        for step in (first, repeat):
            assert counts[step]["commit files read"] == size + INCREMENTAL, (step, size)
            assert counts[step]["commit names asked for"] == size + INCREMENTAL, (step, size)
    for size, counts in zip(SIZES, (small, large), strict=True):
        # no hook asks whether its table's log exists: a rebuilt table's start listed a commit
        # in it, and a created one's hook reads the build's first commit (which the build's
        # writes then take from the same shared commits)
        assert counts[first]["hooks asking for a log"] == 0, size
        assert counts[repeat]["hooks asking for a log"] == 0, size
    for size, counts in zip(SIZES, (small, large), strict=True):
        # the history is read once per command: the first build finds none; its flush made
        # version 0 from nothing, so it wrote the last runs beside it, and the repeat build's
        # first hook takes them from there (``history_summary``) without reading the table
        assert counts[first]["history tables read"] == 1, size
        assert counts[first]["history summaries used"] == 0, size
        assert counts[repeat]["history tables read"] == 0, size
        assert counts[repeat]["history summaries used"] == 1, size
    for size, counts in zip(SIZES, (small, large), strict=True):  # the hook off: nothing
        assert counts["build, hook off"]["log listings at build start"] == 0, size
        assert counts["build, hook off"]["hooks timed"] == 0, size
    assert large[first]["create_table"] - small[first]["create_table"] == grown
    # one journal record per new table; a rebuild at the same location records nothing
    assert large[first]["journal appends"] - small[first]["journal appends"] == grown
    assert large[repeat]["journal appends"] == small[repeat]["journal appends"] == 0
    # a run-operation on 1 model registers what it touches, not every table of the journal
    selected = "run-operation, 1 model selected"
    assert large[selected]["replay_table"] == small[selected]["replay_table"] == 0
    # nothing was due, proved by the table's checksum, the history's bounds and a listing
    assert large[selected]["table snapshots read"] == 0
    # and it started no Sail server: the journal, the logs and the history answered
    assert large[selected]["engine started"] == small[selected]["engine started"] == 0
    assert large[selected] == small[selected]
    queried = "then a query of t_0007"
    assert large[queried]["replay_table"] == small[queried]["replay_table"] == 1
