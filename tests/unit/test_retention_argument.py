"""A run's retention_hours below some table's minimum: one refusal, before any op runs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from python_ops.errors import RetentionTooShortError
from python_ops.invocation import Invocation
from python_ops.maintenance.configuration.config import parse_config
from python_ops.maintenance.records.history import HistoryStore
from python_ops.maintenance.running.runner import Maintainer, check_retention_argument
from python_ops.maintenance.runs.run_options import RunOptions
from python_ops.maintenance.selection.targets import ModelTarget

FixtureTable = Callable[[str], Path]


def target(table: Path, name: str, **settings: object) -> ModelTarget:
    return ModelTarget(name, str(table), parse_config(name, settings))


def test_one_error_names_every_model_and_nothing_runs(
    fixture_table: FixtureTable, tmp_path: Path
) -> None:
    first = fixture_table("simple_table_with_checkpoint")
    targets = [target(first, "orders"), target(first, "customers")]
    history = HistoryStore(str(tmp_path / "history"))
    runner = Maintainer(spark=None, history=history, invocation=Invocation("unit"))
    with pytest.raises(
        RetentionTooShortError,
        match=r"setting 'retention_hours' has bad value 1\. .* of 2 model\(s\): "
        r"orders \(168 h\), customers \(168 h\).*Nothing was run\. Pass retention_hours of at "
        r"least 168, or set 'maintenance_vacuum_allow_short_retention: true'",
    ):
        runner.maintain(targets, RunOptions(ops=("vacuum",), only_due=False, retention_hours=1))
    assert history.records() == []


def test_models_that_allow_it_or_skip_vacuum_are_not_refused(
    fixture_table: FixtureTable,
) -> None:
    table = fixture_table("simple_table_with_checkpoint")
    allowed = target(table, "a", maintenance_vacuum_allow_short_retention=True)
    no_vacuum = target(table, "b", maintenance_vacuum_enabled=False)
    check_retention_argument([allowed, no_vacuum], 1)
    check_retention_argument([target(table, "c")], 168)  # at the minimum
    check_retention_argument([target(table, "d")], None)  # each model's own


def test_the_argument_is_rounded_as_vacuum_rounds_it(tmp_path: Path) -> None:
    """Half up, as Delta and VACUUM round ``RETAIN n HOURS`` (Python's ``round`` gave 0.5 -> 0
    and refused a run VACUUM would have allowed: 0.5 h is 1 h to it)."""
    import pyarrow as pa
    from deltalake import write_deltalake

    table = tmp_path / "t"
    write_deltalake(
        str(table),
        pa.table({"id": [1]}),
        configuration={"delta.deletedFileRetentionDuration": "interval 3 hours"},
    )
    check_retention_argument([target(table, "t")], 2.5)  # VACUUM keeps 3 h: the minimum
    with pytest.raises(RetentionTooShortError, match=r"t \(3 h\)"):
        check_retention_argument([target(table, "t")], 2.4)
