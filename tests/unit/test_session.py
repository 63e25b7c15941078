"""One maintenance session: its sequence, its setup failures, its warnings, its options.

The session runs on copies of the shared fixture tables with no engine (log cleanup and dry runs
run wholly in this process); its two ports are filled by small front ends that record what they
are told, as the adapter's (``dbt_session``) and the CLI's fill them with dbt's events and
stderr. The same session under dbt: ``tests/e2e/test_maintenance_dbt.py``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from python_ops.delta_sql import DeltaSql
from python_ops.errors import ConfigError, MaintenanceError
from python_ops.invocation import Invocation
from python_ops.maintenance.configuration.config import parse_config
from python_ops.maintenance.records.history import HistoryStore
from python_ops.maintenance.records.outcomes import Status
from python_ops.maintenance.rules.log_bounds import BOUNDS_OP
from python_ops.maintenance.running.history_upkeep import HISTORY_NAME
from python_ops.maintenance.running.session import (
    MaintenanceSession,
    OpsEnvironment,
    SessionEvents,
    failure_warnings,
)
from python_ops.maintenance.runs.run_options import RunOptions
from python_ops.maintenance.selection.targets import ModelTarget
from python_ops.ops.vacuum_modes import VacuumEngine
from tests.helpers.trust import files_on_disk

FixtureTable = Callable[[str], Path]


class Environment:
    """No engine; the history in a temp dir; ``refuse`` makes the history's place a refusal."""

    def __init__(self, history: HistoryStore | None, refuse: str | None = None) -> None:
        self.store = history
        self.refuse = refuse
        self.asked: list[str] = []

    def spark(self) -> Any:
        self.asked.append("spark")
        return None

    def delta_sql(self) -> DeltaSql | None:
        self.asked.append("delta_sql")
        return None

    def vacuum_engine(self) -> VacuumEngine:
        self.asked.append("vacuum_engine")
        return VacuumEngine.AUTO

    def history(self) -> HistoryStore | None:
        self.asked.append("history")
        if self.refuse:
            raise MaintenanceError(self.refuse)
        return self.store

    def advice_for(self) -> None:
        return None  # no model here has ``auto`` clustering


class Events:
    """Records what the session tells its front end, in order."""

    def __init__(self) -> None:
        self.told: list[tuple[str, str, str | None]] = []

    def warn(self, message: str, target: ModelTarget | None) -> None:
        self.told.append(("warn", message, target.name if target else None))

    def history_ready(self) -> None:
        self.told.append(("history_ready", "", None))


def data_files(table: Path) -> dict[str, int]:
    return {k: v for k, v in files_on_disk(table).items() if not k.startswith("_delta_log")}


def target(table: Path, name: str = "fct", **settings: object) -> ModelTarget:
    return ModelTarget(name, str(table), parse_config(name, settings))


def session(env: Environment, events: Events, invocation: str = "inv-1") -> MaintenanceSession:
    return MaintenanceSession(Invocation(invocation), env, events)


def test_the_front_ends_fill_the_ports() -> None:
    env: OpsEnvironment = Environment(None)
    events: SessionEvents = Events()
    assert MaintenanceSession(Invocation("i"), env, events).invocation.id == "i"


def test_a_real_run_records_makes_the_history_ready_keeps_its_upkeep_and_the_rows(
    fixture_table: FixtureTable, tmp_path: Path
) -> None:
    table = fixture_table("simple_table_with_checkpoint")
    data_before = data_files(table)
    history = HistoryStore(str(tmp_path / "history"))
    env = Environment(history)
    dry = RunOptions.checked(ops=["cleanup_logs"], only_due=False, dry_run=True)
    for n in range(8):  # eight one-row commits: the history's compaction is due (8 small files)
        session(env, Events(), f"dry-{n}").maintain([target(table)], dry)
    env.asked.clear()
    events = Events()
    options = RunOptions.checked(ops=["cleanup_logs"], only_due=False, threads="2")
    run = session(env, events).maintain([target(table)], options)
    assert [(o.op, o.status) for o in run.outcomes] == [("cleanup_logs", Status.SUCCEEDED)]
    # the maintainer was built once, from every collaborator the front end supplies
    assert env.asked == ["spark", "delta_sql", "vacuum_engine", "history"]
    assert events.told == [("history_ready", "", None)]  # then the upkeep, which failed nothing
    records = history.records()
    ours = [(r.op, r.dry_run) for r in records if r.invocation_id == "inv-1" and r.model == "fct"]
    # the op's run, and what the decision's snapshot proved of the log (``log_bounds``)
    assert ours == [(BOUNDS_OP, False), ("cleanup_logs", False)]
    # the history's own upkeep ran after the run that wrote to it, under the same invocation
    upkeep = {(r.op, r.status) for r in records if r.model == HISTORY_NAME}
    assert ("optimize", "succeeded") in upkeep
    assert {r.invocation_id for r in records if r.model == HISTORY_NAME} == {"inv-1"}
    assert data_files(table) == data_before  # log cleanup touches the log only


def test_a_dry_run_makes_the_history_ready_but_keeps_no_upkeep(
    fixture_table: FixtureTable, tmp_path: Path
) -> None:
    table = fixture_table("simple_table_with_checkpoint")  # 11 small files: compaction is due
    before = files_on_disk(table)
    history = HistoryStore(str(tmp_path / "history"))
    events = Events()
    options = RunOptions.checked(ops=("optimize",), dry_run=True)
    run = session(Environment(history), events).maintain(
        [target(table, maintenance_min_small_files=2)], options
    )
    assert [(o.op, o.status, o.dry_run) for o in run.outcomes] == [
        ("optimize", Status.SUCCEEDED, True)
    ]
    assert events.told == [("history_ready", "", None)]
    assert {r.model for r in history.records()} == {"fct"}  # no upkeep of the history
    assert files_on_disk(table) == before


def test_failed_ops_of_warn_models_are_warnings_after_the_run(tmp_path: Path) -> None:
    events = Events()
    nowhere = tmp_path / "nowhere"
    run = session(Environment(None), events).maintain(
        [target(nowhere, "a"), target(nowhere, "b", maintenance_on_error="fail")],
        RunOptions.checked(ops=["vacuum"]),
    )
    assert [o.status for o in run.outcomes] == [Status.FAILED, Status.FAILED]
    warned = [(kind, text.split(":")[0], who) for kind, text, who in events.told]
    # b fails the run instead (on_error: fail): no warning for it
    assert warned == [
        ("history_ready", "", None),
        ("warn", "maintenance vacuum of model a failed", None),
    ]
    assert "no Delta table" in events.told[1][1]


def test_the_post_hook_warns_on_its_model_and_says_the_build_stands(tmp_path: Path) -> None:
    events = Events()
    done = session(Environment(None), events).maintain_model(target(tmp_path / "gone", "m"))
    assert len(done.failed) == 4
    assert done.started
    # failed ops ran (and were recorded, had there been a history): ready, then the warnings
    assert [(k, who) for k, _, who in events.told] == [("history_ready", None)] + [
        ("warn", "m")
    ] * 4
    assert events.told[1][1].startswith(
        "maintenance vacuum of model m failed (on_error: warn, so the model itself succeeded): "
    )
    assert done.summary() == ", ".join(
        f"{o.op} failed in {o.duration_s:.1f} s" for o in done.failed
    )


def test_a_setup_failure_is_a_warning_under_warn_and_an_error_under_fail(
    fixture_table: FixtureTable,
) -> None:
    table = fixture_table("simple_table_with_checkpoint")
    before = files_on_disk(table)
    events = Events()
    env = Environment(None, refuse="no place for the history")
    done = session(env, events).maintain_model(target(table, "m"))
    assert not done.started
    assert done.outcomes == ()
    assert done.summary() == "not run: maintenance could not start (see the warning)"
    assert events.told == [
        (
            "warn",
            "maintenance of model m did not run (on_error: warn, so the model itself "
            "succeeded): no place for the history",
            "m",
        )
    ]
    with pytest.raises(MaintenanceError, match="no place for the history"):
        session(env, Events()).maintain_model(target(table, "m", maintenance_on_error="fail"))
    with pytest.raises(MaintenanceError, match="no place for the history"):
        session(env, Events()).maintain([target(table, "m")], RunOptions())
    assert files_on_disk(table) == before


def test_sessions_of_one_command_share_its_memory(fixture_table: FixtureTable) -> None:
    table = fixture_table("simple_table_with_checkpoint")
    logger = logging.getLogger("tests.session")
    off = target(table, maintenance_enabled=False)
    first = session(Environment(None), Events(), "cmd-1")
    first.maintain_model(off)
    assert first.invocation.warn_once(logger, "cause", "t", "first in cmd-1")
    same = MaintenanceSession(first.invocation, Environment(None), Events())  # the next hook
    same.maintain_model(off)
    assert not same.invocation.warn_once(logger, "cause", "t", "again in cmd-1")
    other = session(Environment(None), Events(), "cmd-2")
    other.maintain([off], RunOptions())
    assert other.invocation.warn_once(logger, "cause", "t", "first in cmd-2")


def test_a_table_op_runs_with_the_environment_s_engine(fixture_table: FixtureTable) -> None:
    table = fixture_table("simple_table_with_checkpoint")
    before = files_on_disk(table)
    env = Environment(None)
    result = session(env, Events()).run_table_op(
        "vacuum", str(table), name="fct", options={"dry_run": True}
    )
    assert result.dry_run
    assert result.files_deleted == 0
    assert "vacuum_engine" in env.asked
    with pytest.raises(ConfigError, match="setting 'ops' has bad value 'compact'"):
        session(env, Events()).run_table_op("compact", str(table), name="fct", options={})
    assert files_on_disk(table) == before


@pytest.mark.parametrize(
    ("arguments", "setting"),
    [
        ({"threads": 0}, "threads"),
        ({"threads": 1.5}, "threads"),
        ({"time_budget_s": 0}, "time_budget_s"),
        ({"time_budget_s": -1}, "time_budget_s"),
        ({"retention_hours": float("nan")}, "retention_hours"),
        ({"ops": ["vacuum", "compact"]}, "ops"),
    ],
)
def test_bad_run_arguments_are_refused_once_before_any_model(
    arguments: dict[str, Any], setting: str
) -> None:
    with pytest.raises(ConfigError, match=rf"setting '{setting}' has bad value"):
        RunOptions.checked(**arguments)


def test_run_arguments_as_schedulers_pass_them() -> None:
    options = RunOptions.checked(ops="vacuum", threads=None, time_budget_s="60")
    assert options == RunOptions(ops=("vacuum",), threads=1, time_budget_s=60.0)
    assert RunOptions.checked().ops == ("vacuum", "optimize", "cleanup_logs", "purge", "stats")


def test_only_warn_models_failures_are_warnings(tmp_path: Path) -> None:
    events = Events()
    run = session(Environment(None), events).maintain(
        [target(tmp_path / "x", "x", maintenance_on_error="fail")], RunOptions.checked(ops="purge")
    )
    assert failure_warnings(run.outcomes, after_build=False) == []
    assert failure_warnings(run.outcomes, after_build=True) == []


def test_a_build_that_proves_nothing_due_makes_its_outcomes_only_when_asked(
    tmp_path: Path,
) -> None:
    import pyarrow as pa
    from deltalake import write_deltalake

    from python_ops.maintenance.facts.build_writes import BuildFacts
    from python_ops.maintenance.records.outcomes import Reason
    from python_ops.maintenance.running.run_results import not_due_outcomes
    from python_ops.maintenance.runs.registry import OPS

    table = tmp_path / "fct"
    started = time.time_ns() // 1_000_000 - 60_000  # a minute ago, where nothing existed
    write_deltalake(str(table), pa.table({"id": [1, 2]}))  # the build created the table
    history = HistoryStore(str(tmp_path / "history"))
    env = Environment(history)
    built = target(table, "fct")
    facts = BuildFacts(
        started_at_ms=started, version_before=None, build_s=0.5, location_was_empty=True
    )
    done = session(env, Events()).maintain_model(built, build=facts)
    assert done.started
    assert done.decided == ()
    assert done.build is not None
    assert [d.op for d in done.nothing_due] == list(OPS)
    assert all(d.reason is not Reason.DUE for d in done.nothing_due)
    assert "outcomes" not in vars(done)  # the post-hook's questions made none
    assert done.failed == ()
    assert done.summary() == ""
    assert "outcomes" not in vars(done)
    assert done.outcomes == tuple(not_due_outcomes(built, list(done.nothing_due)))
    assert [(o.model, o.op, o.status) for o in done.outcomes] == [
        ("fct", op, Status.NOT_DUE) for op in OPS
    ]
