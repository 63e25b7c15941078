"""What one command remembers: one warning per cause and table (``python_ops.invocation``).

The short-retention override is met by VACUUM's due check, the report's dry run and the run
itself; before, one command logged it two to four times. Real Delta tables (copies of the shared
fixtures), VACUUM's selection in this process, the runner and the report as dbt calls them.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from python_ops.invocation import Invocation, Invocations
from python_ops.maintenance.configuration.config import parse_config
from python_ops.maintenance.running.report import report_rows
from python_ops.maintenance.running.runner import Maintainer
from python_ops.maintenance.runs.registry import op_spec
from python_ops.maintenance.selection.targets import ModelTarget
from python_ops.ops.vacuum import vacuum
from tests.helpers.trust import cli
from tests.helpers.vacuum import age_everything, untracked

FixtureTable = Callable[[str], Path]
TABLE = "simple_table_with_checkpoint"
VACUUM_LOGGER = "python_ops.ops.vacuum"


def _short_retention_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.WARNING and "below the table's minimum" in r.getMessage()
    ]


def test_one_command_warns_once_per_table(
    fixture_table: FixtureTable, caplog: pytest.LogCaptureFixture
) -> None:
    table = fixture_table(TABLE)
    other = fixture_table("table-without-dv-small")
    age_everything(table, days=30)
    untracked(table, "leftover.parquet", days=30)
    settings = {
        "maintenance_vacuum_retention_hours": 1,
        "maintenance_vacuum_allow_short_retention": True,
    }
    target = ModelTarget("fct", str(table), parse_config("fct", settings))
    command = Invocation("invocation-1")
    with caplog.at_level(logging.DEBUG, logger=VACUUM_LOGGER):
        # the report's dry run, the due check's estimate and the run: three checks, one warning
        report_rows([target], spark=None, history=None, invocation=command)
        (outcome,) = Maintainer(spark=None, history=None, invocation=command).maintain_model(
            target, ops=("vacuum",)
        )
        assert outcome.ran, outcome.detail
        op_spec("vacuum").invoke(
            str(other), spark=None, model="dim", invocation=command, retention_hours=1,
            allow_short_retention=True,
        )  # fmt: skip
    assert _short_retention_warnings(caplog) == [
        "vacuum fct: retention 1 h is below the table's minimum 168 h; allowed by "
        "maintenance_vacuum_allow_short_retention",
        # another table is another warning
        "vacuum dim: retention 1 h is below the table's minimum 168 h; allowed by "
        "maintenance_vacuum_allow_short_retention",
    ]
    repeats = [r for r in caplog.records if r.levelno == logging.DEBUG and "below" in r.message]
    assert len(repeats) >= 2  # the repeats stay in the debug log

    # a front end's registry: the same id again is the same command; a new one warns again
    caplog.clear()
    commands = Invocations()
    first = commands.get("invocation-1")
    first.warn_once(logging.getLogger(VACUUM_LOGGER), "warning: x", "t", "unrelated")
    assert commands.get("invocation-1") is first
    for command_id, expected in (("invocation-1", 1), ("invocation-1", 0), ("invocation-2", 1)):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger=VACUUM_LOGGER):
            vacuum(
                str(table), retention_hours=1, allow_short_retention=True,
                invocation=commands.get(command_id),
            )  # fmt: skip
        assert len(_short_retention_warnings(caplog)) == expected, command_id
    # a single call from Python, in no command, warns every time
    for _ in range(2):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger=VACUUM_LOGGER):
            vacuum(str(table), retention_hours=1, allow_short_retention=True)
        # the op alone names the table by its location and the override by its parameter
        assert _short_retention_warnings(caplog) == [
            f"vacuum {table}: retention 1 h is below the table's minimum 168 h; allowed by "
            "allow_short_retention"
        ]


def test_each_command_line_run_warns_once_naming_the_flag(fixture_table: FixtureTable) -> None:
    table = fixture_table(TABLE)
    argv = ["vacuum", str(table), "--retention-hours", "1", "--allow-short-retention", "--dry-run"]
    for _ in range(2):  # two commands: each says it, once, as a warning line of its own
        code, _, err = cli(argv, None)
        assert code == 0, err
        warnings = [line for line in err.splitlines() if line.startswith("warning: ")]
        assert warnings == [
            f"warning: vacuum {table}: retention 1 h is below the table's minimum 168 h; "
            "allowed by --allow-short-retention"
        ]


def test_warn_once_keys_by_cause_and_table(caplog: pytest.LogCaptureFixture) -> None:
    log = logging.getLogger("python_ops.test_invocation")
    command = Invocation("c")
    with caplog.at_level(logging.DEBUG, logger=log.name):
        assert command.warn_once(log, "cause a", "t1", "a on %s", "t1")
        assert not command.warn_once(log, "cause a", "t1", "a on %s", "t1")
        assert command.warn_once(log, "cause b", "t1", "b on %s", "t1")
        assert command.warn_once(log, "cause a", "t2", "a on %s", "t2")
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        ("WARNING", "a on t1"),
        ("DEBUG", "a on t1"),
        ("WARNING", "b on t1"),
        ("WARNING", "a on t2"),
    ]
    assert Invocation("other").warn_once(log, "cause a", "t1", "a on %s", "t1")  # a new command


def test_once_per_command_steps_and_memos_are_the_command_s() -> None:
    commands = Invocations()
    build = commands.get("build-1")
    assert build.first_time("history upkeep", "/h")
    assert not build.first_time("history upkeep", "/h")
    assert build.first_time("history upkeep", "/other")
    build.memo("schema locations")["s"] = "/w/s"
    assert commands.get("build-1").memo("schema locations") == {"s": "/w/s"}
    again = commands.get("build-2")  # dbt's next invocation in the same process
    assert again.first_time("history upkeep", "/h")
    assert again.memo("schema locations") == {}
    assert commands.get("") is not commands.get("")  # no id: a new command each call
    assert Invocation().id.startswith("cli-")
    assert Invocation().id != Invocation().id


@settings(max_examples=30, deadline=None)
@given(
    asks=st.lists(st.sampled_from(["fleet", "sparkdelta", "other"]), min_size=1, max_size=24),
    threads=st.integers(min_value=2, max_value=8),
)
def test_once_computes_each_value_once_while_threads_ask_together(
    asks: list[str], threads: int
) -> None:
    """The history macro's answer per dbt package: the first hooks of a build end together, and
    each compiling the macro's template again cost a hook ~15 ms; one computes, the rest wait."""
    invocation = Invocation("build")
    computed: list[str] = []
    start = threading.Barrier(threads)

    def compute(key: str) -> dict[str, str]:
        computed.append(key)
        time.sleep(0.002)  # long enough for every other thread to ask meanwhile
        return {"package": key}

    def ask(i: int) -> list[dict[str, str]]:
        start.wait()
        return [invocation.once("history nodes", k, lambda k=k: compute(k)) for k in asks[i:]]

    with ThreadPoolExecutor(threads) as pool:
        answers = [a for got in pool.map(ask, range(threads)) for a in got]
    assert sorted(computed) == sorted(set(asks))  # each key once, whoever asked
    assert all(a == {"package": a["package"]} for a in answers)
    firsts = {a["package"]: a for a in answers}
    assert all(a is firsts[a["package"]] for a in answers)  # the same object to everyone


def test_once_keeps_no_failure_and_may_be_asked_again_inside() -> None:
    invocation = Invocation("build")
    with pytest.raises(ZeroDivisionError):
        invocation.once("v", "k", lambda: 1 // 0)
    assert invocation.once("v", "k", lambda: invocation.once("w", "k", lambda: 7) + 1) == 8
    assert invocation.once("v", "k", lambda: 0) == 8
