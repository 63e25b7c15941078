"""Messages end with the fix for the mode the user is in.

On a table path (``python -m python_ops vacuum PATH``) the fix is a command-line flag; for a dbt
model (the post-hook, the run-operations, ``--model``) it is the model's ``maintenance_*`` key.
The op itself names its own parameter; the layer that knows the caller words the fix.
In-process ``main()`` and ``vacuum()`` on copies of a real Delta table, VACUUM's selection in
this process (no engine).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from python_ops.errors import RetentionTooShortError
from python_ops.invocation import Invocation
from python_ops.maintenance.configuration.config import parse_config
from python_ops.maintenance.running.runner import Maintainer
from python_ops.maintenance.runs.registry import op_spec
from python_ops.maintenance.selection.targets import ModelTarget
from python_ops.ops.vacuum import vacuum
from tests.helpers.trust import cli

FixtureTable = Callable[[str], Path]
TABLE = "simple_table_with_checkpoint"


def test_path_mode_refusal_names_the_command_line_flag(fixture_table: FixtureTable) -> None:
    table = fixture_table(TABLE)
    code, out, err = cli(["vacuum", str(table), "--retention-hours", "1"], None)
    assert (code, out) == (2, "")
    assert err.startswith("error: setting 'retention_hours' has bad value 1.0. ")
    assert err.rstrip().endswith(
        "Request at least 168 h, or pass --allow-short-retention to override "
        "(allow_short_retention=True from Python)."
    )
    assert "maintenance_vacuum_allow_short_retention" not in err
    # the flag it names is the one that works
    code, _, err = cli(
        ["vacuum", str(table), "--retention-hours", "1", "--allow-short-retention", "--dry-run"],
        None,
    )
    assert code == 0, err


def test_model_mode_refusal_names_the_model_key(fixture_table: FixtureTable) -> None:
    table = fixture_table(TABLE)
    # a model's direct op (the CLI's --model, the adapter's one-table ops): the registry's call
    with pytest.raises(
        RetentionTooShortError,
        match=r"^model 'fct_orders': setting 'retention_hours' has bad value 1\. .*Request at "
        r"least 168 h, or set 'maintenance_vacuum_allow_short_retention: true' on the "
        r"model to override\.$",
    ) as refused:
        op_spec("vacuum").invoke(
            str(table), spark=None, model="fct_orders", retention_hours=1, engine="in_process"
        )
    assert "--allow-short-retention" not in str(refused.value)
    assert refused.value.override == "allow_short_retention"
    # the runner: the model's own key for the retention too
    target = ModelTarget(
        "fct_orders",
        str(table),
        parse_config("fct_orders", {"maintenance_vacuum_retention_hours": 1}),
    )
    runner = Maintainer(spark=None, history=None, invocation=Invocation("unit"))
    (outcome,) = runner.maintain_model(target, ops=("vacuum",))
    assert outcome.detail.startswith(
        "model 'fct_orders': setting 'maintenance_vacuum_retention_hours' has bad value 1.0. "
    )
    assert outcome.detail.endswith(
        "or set 'maintenance_vacuum_allow_short_retention: true' on the model to override."
    )


def test_the_op_itself_names_its_own_parameter(fixture_table: FixtureTable) -> None:
    """The op knows the table only: neither a model, nor a key, nor the command line's flag."""
    table = fixture_table(TABLE)
    with pytest.raises(
        RetentionTooShortError,
        match=r"^setting 'retention_hours' has bad value 1\. .*Request at least 168 h, or "
        r"pass allow_short_retention=True to override\.$",
    ) as refused:
        vacuum(str(table), retention_hours=1, engine="in_process")
    assert refused.value.model is None
    assert "maintenance_" not in str(refused.value)
    assert "--allow-short-retention" not in str(refused.value)
