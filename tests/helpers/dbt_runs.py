"""Running dbt in-process on a copy of the example project (the e2e tier's ``dbt`` fixture)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from dbt.cli.main import dbtRunner, dbtRunnerResult

PER_BATCH = 50  # orders per load batch (var orders_per_batch)
CUSTOMERS = 100  # var customers
PROJECT_PARTS = ("dbt_project.yml", "models", "seeds", "profiles_example")

Dbt = Callable[..., dbtRunnerResult]


def run_dbt(
    project: Path,
    *args: str,
    batch: int = 0,
    target: str | None = None,
    extra_vars: dict[str, object] | None = None,
    callbacks: Sequence[Callable[[Any], None]] = (),
) -> dbtRunnerResult:
    """Run ``dbt <args>`` in-process on a copy of the example project.

    Args:
        project: The project copy.
        *args: The dbt command and its arguments.
        batch: Which load batch ``landing_orders`` delivers.
        target: The profile target (None: the profile's default, embedded).
        extra_vars: More ``--vars``.
        callbacks: Called with every event dbt fires (``EventMsg``: ``info.name``,
            ``info.level``, ``info.msg``).

    Returns:
        dbt's result.
    """
    variables = {"batch": batch, "orders_per_batch": PER_BATCH, "customers": CUSTOMERS}
    variables.update(extra_vars or {})
    command = [
        *args,
        "--project-dir",
        str(project),
        "--profiles-dir",
        str(project / "profiles_example"),
    ]
    if args[0] != "debug":  # the same vars on every command keep partial parsing valid
        command += ["--vars", json.dumps(variables)]
    if target:
        command += ["--target", target]
    return dbtRunner(callbacks=list(callbacks)).invoke(command)
