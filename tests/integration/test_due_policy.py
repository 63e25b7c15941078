"""Retention properties the package records follow the model's config; a user's stay floors.

Real Delta tables written by the embedded engine; the properties are committed by log cleanup
(delta-rs) as the post-hook and ``cleanup_logs_all`` do, or set by hand as a user would.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from deltalake import DeltaTable

from python_ops.delta.state.snapshot import read_snapshot
from python_ops.delta.writing.writer import set_table_properties
from python_ops.errors import RetentionTooShortError
from python_ops.invocation import Invocation
from python_ops.maintenance.configuration.config import parse_config
from python_ops.maintenance.decisions.due import decide
from python_ops.maintenance.records.outcomes import Reason, Status
from python_ops.maintenance.running.runner import Maintainer
from python_ops.maintenance.selection.targets import ModelTarget
from tests.helpers.optimize import events_table

RETENTION = "delta.deletedFileRetentionDuration"
MARKER = "sparkdelta.recorded.deletedFileRetentionDuration"


def _target(path: Path, **config: object) -> ModelTarget:
    return ModelTarget("events", str(path), parse_config("events", config))


def _properties(table: Path) -> dict[str, str]:
    return read_snapshot(str(table)).metadata.configuration


def _run(target: ModelTarget, op: str) -> Status:
    maintainer = Maintainer(spark=None, history=None, invocation=Invocation("t"))
    (outcome,) = maintainer.maintain_model(target, ops=(op,), only_due=False)
    assert outcome.status is Status.SUCCEEDED, outcome.detail
    return outcome.status


def test_a_recorded_retention_follows_the_config_down_and_away(tmp_path: Path, sail_spark) -> None:
    table = tmp_path / "events"
    events_table(sail_spark, table, batches=1)
    _run(_target(table, maintenance_vacuum_retention_hours=336), "cleanup_logs")
    assert _properties(table)[RETENTION] == "interval 336 hours"
    assert _properties(table)[MARKER] == "interval 336 hours"

    lowered = _target(table, maintenance_vacuum_retention_hours=200)
    # the package's 336 h is no floor: VACUUM decides and runs with the config's 200 h
    (vacuum, cleanup) = decide(lowered, read_snapshot(str(table)), ops=("vacuum", "cleanup_logs"))
    assert vacuum.reason is Reason.NOT_DUE
    assert vacuum.detail.endswith("older than the 200 h retention")
    _run(lowered, "vacuum")
    # and log cleanup is due to rewrite it
    assert cleanup.reason is Reason.DUE
    assert cleanup.detail == (
        "recorded retention to follow the config: "
        "delta.deletedFileRetentionDuration interval 336 hours -> interval 200 hours"
    )
    _run(lowered, "cleanup_logs")
    assert _properties(table)[RETENTION] == "interval 200 hours"

    # removed from the config: back to Delta's default (delta-rs cannot unset a property)
    unset = _target(table)
    (cleanup,) = decide(unset, read_snapshot(str(table)), ops=("cleanup_logs",))
    assert cleanup.reason is Reason.DUE
    _run(unset, "cleanup_logs")
    assert _properties(table)[RETENTION] == "interval 168 hours"
    (cleanup,) = decide(unset, read_snapshot(str(table)), ops=("cleanup_logs",))
    assert cleanup.reason is Reason.NOT_DUE  # in line with the config now


def test_a_retention_the_user_set_stays_a_floor(tmp_path: Path, sail_spark) -> None:
    table = tmp_path / "events"
    events_table(sail_spark, table, batches=1)
    set_table_properties(str(table), {RETENTION: "interval 2 weeks"})  # tblproperties, by hand
    lowered = _target(table, maintenance_vacuum_retention_hours=200)
    with pytest.raises(RetentionTooShortError, match=r"minimum for table .* is 336 h "):
        decide(lowered, read_snapshot(str(table)), ops=("vacuum",))
    # log cleanup records a higher model retention elsewhere, never over the user's value
    higher = _target(table, maintenance_vacuum_retention_hours=400)
    _run(higher, "cleanup_logs")
    assert _properties(table)[RETENTION] == "interval 2 weeks"
    assert MARKER not in _properties(table)
    (cleanup,) = decide(higher, read_snapshot(str(table)), ops=("cleanup_logs",))
    assert cleanup.reason is Reason.NOT_DUE


def test_a_short_retention_is_not_recorded_for_other_engines_unless_asked(
    tmp_path: Path, sail_spark
) -> None:
    table = tmp_path / "events"
    events_table(sail_spark, table, batches=1)
    short = _target(
        table,
        maintenance_vacuum_retention_hours=1,
        maintenance_vacuum_allow_short_retention=True,
    )
    maintainer = Maintainer(spark=None, history=None, invocation=Invocation("t"))
    (cleanup,) = maintainer.maintain_model(short, ops=("cleanup_logs",), only_due=False)
    assert cleanup.status is Status.SUCCEEDED, cleanup.detail
    # the 1 h stays the package's own VACUUM's: a plain VACUUM elsewhere keeps Delta's 168 h
    assert _properties(table).get(RETENTION) != "interval 1 hours"
    assert RETENTION not in _properties(table)
    assert RETENTION not in DeltaTable(str(table)).metadata().configuration
    # said once, in the op's output
    assert cleanup.summary.count("not recorded") == 1
    assert cleanup.note == (
        "VACUUM retention 1 h is not recorded as delta.deletedFileRetentionDuration: it is "
        "below Delta's 168 h default, so other engines' VACUUM keeps the table's own retention "
        "(set 'maintenance_vacuum_record_short_retention: true' to record it for them too)"
    )
    # the package's own VACUUM still runs with 1 h
    _run(short, "vacuum")

    # asked for explicitly: recorded, for every engine
    asked = _target(
        table,
        maintenance_vacuum_retention_hours=1,
        maintenance_vacuum_allow_short_retention=True,
        maintenance_vacuum_record_short_retention=True,
    )
    (cleanup,) = maintainer.maintain_model(asked, ops=("cleanup_logs",), only_due=False)
    assert cleanup.note == ""
    assert _properties(table)[RETENTION] == "interval 1 hours"

    # asked no more: the package's 1 h does not stay behind, it goes back to Delta's default
    (cleanup,) = decide(short, read_snapshot(str(table)), ops=("cleanup_logs",))
    assert cleanup.reason is Reason.DUE
    _run(short, "cleanup_logs")
    assert _properties(table)[RETENTION] == "interval 168 hours"
