"""Messages end with the fix for the mode the user is in.

On a table path (``python -m python_ops vacuum PATH``) the fix is a command-line flag; for a dbt
model (the post-hook, the run-operations, ``--model``) it is the model's ``maintenance_*`` key.
In-process ``main()`` and ``vacuum()`` on copies of a real Delta table, VACUUM's selection in
this process (no engine).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from python_ops.errors import RetentionTooShortError
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
        "Request at least 168 hours, or pass --allow-short-retention to override "
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
    with pytest.raises(
        RetentionTooShortError,
        match=r"^model 'fct_orders': setting 'retention_hours' has bad value 1\. .*Request at "
        r"least 168 hours, or set 'maintenance_vacuum_allow_short_retention: true' on the "
        r"model to override\.$",
    ) as refused:
        vacuum(str(table), retention_hours=1, model="fct_orders", engine="in_process")
    assert "--allow-short-retention" not in str(refused.value)
