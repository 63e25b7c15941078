"""One history row per path command run with ``--model``, as every op run of dbt's side has.

``vacuum --model``, ``cleanup-logs --model`` and ``optimize --model`` know the dbt project, so
they record their run in the project's maintenance history table (where ``maintain`` and the
run-operations record theirs: ``default_history_location``). A path command without
``--model`` knows no project, so no history, and says nothing about one.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from python_ops.cli.project import ModelPolicy
from python_ops.errors import MaintenanceError
from python_ops.ops.optimize.planning.plan import OptimizePlan
from python_ops.ops.results import LogCleanupResult, OptimizeResult, VacuumResult

log = logging.getLogger(__name__)


def result_columns(result: Any, *, dry_run: bool) -> dict[str, Any]:
    """The history's count columns of an op's result (a dry run's: what it would remove)."""
    if isinstance(result, (VacuumResult, LogCleanupResult)):
        return {
            "files_removed": result.files_found if dry_run else result.files_deleted,
            "bytes_removed": result.bytes_found if dry_run else result.bytes_deleted,
            "version_before": result.table_version,
            "version_after": result.table_version,
        }
    if isinstance(result, OptimizeResult):
        return {
            "files_removed": result.files_removed,
            "bytes_removed": result.bytes_removed,
            "files_added": result.files_added,
            "bytes_added": result.bytes_added,
            "version_before": result.version_before,
            "version_after": max(result.commits, default=result.version_before),
        }
    if isinstance(result, OptimizePlan):  # the command line's OPTIMIZE dry run
        return {
            "files_removed": result.files_to_rewrite,
            "bytes_removed": result.bytes_to_rewrite,
            "version_before": result.version,
            "version_after": result.version,
        }
    return {}


@dataclass
class RunRecorder:
    """What a recorded run sets: its result (and the parameters worth keeping)."""

    result: Any = None
    parameters: dict[str, Any] = field(default_factory=dict)


@contextmanager
def recorded_run(
    policy: ModelPolicy | None, op: str, *, dry_run: bool, now: Callable[[], float] = time.time
) -> Iterator[RunRecorder]:
    """Record the run inside the ``with`` block as one history row when ``--model`` was given.

    The row is ``succeeded`` with the result's counts when the block sets ``result``, ``failed``
    with the error when it raises (the error is raised on). A history that cannot be written is
    a warning: the op's own outcome stands.

    Args:
        policy: The ``--model`` policy, or None (nothing is recorded).
        op: ``vacuum``, ``optimize`` or ``cleanup_logs``.
        dry_run: The run only reports.
        now: The clock (seconds since the epoch).

    Yields:
        The recorder whose ``result`` the block sets.
    """
    recorder = RunRecorder()
    started = now()
    error: str | None = None
    try:
        yield recorder
    except Exception as err:
        error = str(err) if isinstance(err, MaintenanceError) else f"{type(err).__name__}: {err}"
        raise
    finally:
        if policy is not None and (error is not None or recorder.result is not None):
            _append(policy, op, dry_run, recorder, error, started, now() - started)


def _append(
    policy: ModelPolicy,
    op: str,
    dry_run: bool,
    recorder: RunRecorder,
    error: str | None,
    started: float,
    duration_s: float,
) -> None:
    # imported here: a run without --model records nothing and never loads the history
    from python_ops.maintenance.records.history import HistoryRecord, HistoryStore, parameters_json

    record = HistoryRecord(
        invocation_id=f"cli-{uuid.uuid4()}",
        model=policy.config.model,
        table_location=policy.location,
        op=op,
        parameters=parameters_json(recorder.parameters),
        dry_run=dry_run,
        status="failed" if error else "succeeded",
        error=error,
        started_at=dt.datetime.fromtimestamp(started, tz=dt.UTC),
        duration_s=duration_s,
        **({} if error else result_columns(recorder.result, dry_run=dry_run)),
    )
    try:
        HistoryStore(policy.history_location).append([record])
    except MaintenanceError as err:
        log.warning("model %s: the run was not recorded in the history: %s", record.model, err)
