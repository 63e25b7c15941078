"""The maintenance history maintains itself: its own schedule, through the same runner.

Every op run appends a row to the history, one small Delta commit each. Left alone the history
would be the project's worst table (after a morning of use: dozens of one-row files, a log with
no checkpoint). So after a run that wrote to it, the package runs on the history what is due
under a fixed policy of its own (``HISTORY_POLICY``): compaction once 8 small files piled up
(at most hourly), VACUUM and log cleanup at most daily with Delta's default retentions. Those
runs are recorded in the history itself under the model name ``maintenance_history``, so the
report and ``source('maintenance', ...)`` show them like any model's.

At most once per invocation and history location (post-hooks run on parallel threads: one of
them does it), and never fatal: a failed upkeep op is a warning, the models' runs stand.

The history is ours, written by delta-rs, so its upkeep runs wholly in this process: never on
the engine's Delta SQL or Spark (issue 65 item 3). On ``mode: local`` Delta's own OPTIMIZE of
its few one-row files took 31 s of a run-operation that had nothing to rewrite in any model;
our compaction takes milliseconds.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import TYPE_CHECKING, Any

from python_ops.maintenance.configuration.config import parse_config
from python_ops.maintenance.selection.locations import HISTORY_NAME, is_delta_table
from python_ops.maintenance.selection.targets import ModelTarget
from python_ops.ops.vacuum_modes import VacuumEngine

if TYPE_CHECKING:
    from python_ops.maintenance.running.run_results import OpOutcome
    from python_ops.maintenance.running.runner import Maintainer

log = logging.getLogger(__name__)

HISTORY_POLICY: dict[str, Any] = {
    "materialized": "incremental",
    "maintenance_min_small_files": 8,
    "maintenance_optimize_interval_hours": 1,
    "maintenance_vacuum_interval_hours": 24,
    "maintenance_cleanup_logs_interval_hours": 24,
    "maintenance_vacuum_retention_hours": 168,
    "maintenance_log_retention_days": 30,
    "maintenance_on_error": "warn",
}


def history_target(location: str) -> ModelTarget:
    """The history table as a maintenance target under ``HISTORY_POLICY``.

    Args:
        location: The history table's location.

    Returns:
        The target.
    """
    return ModelTarget(
        name=HISTORY_NAME, location=location, config=parse_config(HISTORY_NAME, HISTORY_POLICY)
    )


def upkeep_history(maintainer: Maintainer) -> list[OpOutcome]:
    """Run on the history table what is due under its own policy, once per invocation.

    In this process (delta-rs and our own writer), whatever engine the maintainer has.

    Args:
        maintainer: The runner that just recorded its runs in the history (its ``history`` and
            ``invocation`` say which table and which command).

    Returns:
        The outcomes of the upkeep (empty when it was done already, or there is no history).
    """
    store = maintainer.history
    if store is None:
        return []
    if not maintainer.invocation.first_time("history upkeep", store.location):
        return []
    if not is_delta_table(store.location):
        return []
    here = dataclasses.replace(maintainer, spark=None, sql=None, vacuum_engine=VacuumEngine.AUTO)
    outcomes = here.maintain_model(history_target(store.location))
    for o in outcomes:
        if o.ran:
            log.info("maintenance history: %s %s", o.op, o.summary)
    return outcomes
