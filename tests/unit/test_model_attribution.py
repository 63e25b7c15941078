"""Ops speak tables; the maintenance layer names the model (``op_keys``, ``ops.audit``).

An op's ``ConfigError`` names its own parameter and no model; called through the maintenance
layer the same error (its class kept) names the model and the ``maintenance_*`` key. An op's
audit record carries the caller's labels: the runner's and the registry's name the model, a
direct call names none. Real Delta tables (copies of the shared fixtures), VACUUM's selection
and log cleanup in this process.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path

import pytest

from python_ops.errors import ConfigError, ConfigErrors, RetentionTooShortError
from python_ops.invocation import Invocation
from python_ops.maintenance.configuration.config import parse_config
from python_ops.maintenance.configuration.op_keys import as_model_setting
from python_ops.maintenance.running.runner import Maintainer
from python_ops.maintenance.runs.registry import op_spec
from python_ops.maintenance.selection.targets import ModelTarget
from python_ops.ops.audit import Audit
from python_ops.ops.log_cleanup import cleanup_logs
from python_ops.ops.vacuum import vacuum

FixtureTable = Callable[[str], Path]
TABLE = "simple_table_with_checkpoint"
AUDIT_LOGGER = "python_ops.ops.audit"


def _records(caplog: pytest.LogCaptureFixture) -> list[dict[str, object]]:
    return [json.loads(r.getMessage()) for r in caplog.records if r.name == AUDIT_LOGGER]


def test_an_op_error_names_neither_model_nor_key_until_the_layer_does(
    fixture_table: FixtureTable,
) -> None:
    table = str(fixture_table(TABLE))
    with pytest.raises(ConfigError) as direct:
        cleanup_logs(table, retention_days=-1)
    assert str(direct.value).startswith("setting 'retention_days' has bad value -1. ")
    assert direct.value.model is None

    with pytest.raises(ConfigError) as layered, as_model_setting("fct", "cleanup_logs"):
        cleanup_logs(table, retention_days=-1)
    assert type(layered.value) is ConfigError
    assert str(layered.value) == (
        "model 'fct': setting 'maintenance_log_retention_days' has bad value -1. "
        + direct.value.fix
    )
    assert isinstance(layered.value.__cause__, ConfigError)  # the op's own, chained

    # without an op the op's own name stays (an argument given as the op names it)
    own_name = r"^model 'fct': setting 'retention_days' "
    with pytest.raises(ConfigError, match=own_name), as_model_setting("fct"):
        cleanup_logs(table, retention_days=-1)
    # no model: unchanged
    with pytest.raises(ConfigError, match=r"^setting 'retention_days' "), as_model_setting(None):
        cleanup_logs(table, retention_days=-1)


def test_the_error_class_and_its_fields_are_kept() -> None:
    refusal = RetentionTooShortError(
        setting="retention_hours",
        value=1,
        fix="Request at least 168 hours, or",
        override="allow_short_retention",
    )
    assert str(refusal).endswith("or pass allow_short_retention=True to override.")
    with pytest.raises(RetentionTooShortError) as caught, as_model_setting("fct", "vacuum"):
        raise refusal
    assert caught.value.override == "allow_short_retention"
    assert str(caught.value) == (
        "model 'fct': setting 'maintenance_vacuum_retention_hours' has bad value 1. Request at "
        "least 168 hours, or set 'maintenance_vacuum_allow_short_retention: true' on the model "
        "to override."
    )
    several = ConfigErrors(
        [
            ConfigError(setting="zorder_by", value="x", fix="Choose a column."),
            ConfigError(setting="min_small_files", value=1, fix="Use 2 or more."),
        ]
    )
    with pytest.raises(ConfigErrors) as listed, as_model_setting("fct", "optimize"):
        raise several
    assert [e.setting for e in listed.value.errors] == [
        "maintenance_zorder_by",
        "maintenance_min_small_files",
    ]
    assert str(listed.value).startswith("model 'fct' has 2 bad maintenance settings")


def test_audit_records_name_the_model_only_when_the_caller_does(
    fixture_table: FixtureTable, caplog: pytest.LogCaptureFixture
) -> None:
    table = str(fixture_table(TABLE))
    with caplog.at_level(logging.INFO, logger=AUDIT_LOGGER):
        vacuum(table, engine="in_process")
        vacuum(table, engine="in_process", audit=Audit(labels={"run": "nightly"}))
        op_spec("vacuum").invoke(table, spark=None, model="fct", engine="in_process")
        target = ModelTarget("fct", table, parse_config("fct", {}))
        runner = Maintainer(spark=None, history=None, invocation=Invocation("unit"))
        (outcome,) = runner.maintain_model(
            target, ops=("cleanup_logs",), only_due=False, dry_run=True
        )
        assert outcome.ran, outcome.detail
    direct, labelled, registry, maintained = _records(caplog)
    assert "model" not in direct
    assert labelled["run"] == "nightly"
    assert "model" not in labelled
    assert (registry["op"], registry["model"]) == ("vacuum", "fct")
    assert (maintained["op"], maintained["model"]) == ("cleanup_logs", "fct")
    assert registry.keys() - {"model"} == direct.keys()  # the labels add to the op's fields
