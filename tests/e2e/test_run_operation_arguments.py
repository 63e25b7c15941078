"""A misspelt run-operation argument, through real dbt (issue 65 item 10).

Before: ``Compilation Error: macro 'dbt_macro__maintain_all' takes no keyword argument
'selct'``. Now the run-operation names the argument, the nearest valid one and what it takes,
before it reads or maintains anything (the project need not be built).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers.dbt_runs import Dbt

pytestmark = pytest.mark.slow


def _errors(project: Path, dbt: Dbt, operation: str, args: str) -> str:
    seen: list[str] = []

    def keep(event: Any) -> None:
        seen.append(event.info.msg)

    run = dbt(project, "run-operation", operation, "--args", args, callbacks=[keep])
    assert not run.success
    return "\n".join(seen)


def test_a_misspelt_argument_names_the_nearest_valid_one(project: Path, dbt: Dbt) -> None:
    said = _errors(project, dbt, "maintain_all", "{selct: fct_orders}")
    assert (
        "maintain_all: unknown argument 'selct' (did you mean 'select'?). maintain_all takes: "
        "select, exclude, dry_run, retention_hours, threads, time_budget_s, ops, selector, "
        "state." in said
    ), said
    assert "takes no keyword argument" not in said
    said = _errors(project, dbt, "vacuum_table", "{model: fct_orders, retention_hour: 5}")
    assert (
        "vacuum_table: unknown argument 'retention_hour' (did you mean 'retention_hours'?). "
        "vacuum_table takes: model, retention_hours, dry_run, partition_filter." in said
    ), said
