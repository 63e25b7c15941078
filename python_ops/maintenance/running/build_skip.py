"""A post-hook that skips a model's maintenance because its build wrote too little.

``session.MaintenanceSession.maintain_model`` decides that from ``build_writes``; this records
it: a history row and an outcome, both saying why.
"""

from __future__ import annotations

import datetime as dt

from python_ops.maintenance.facts.build_writes import BuildWrites
from python_ops.maintenance.records.history import HistoryRecord, parameters_json
from python_ops.maintenance.records.outcomes import Reason, Status
from python_ops.maintenance.running.run_results import OpOutcome
from python_ops.maintenance.running.runner import Maintainer
from python_ops.maintenance.selection.targets import ModelTarget

SKIP_OP = "post_hook"  # the history's op of a post-hook that skipped a model's maintenance


def record_skip(
    maintainer: Maintainer, target: ModelTarget, writes: BuildWrites, reason: str
) -> OpOutcome:
    """Record that the post-hook maintained nothing after a build, and why.

    One history row (op ``post_hook``, status ``skipped``, the build's columns) per skip, so
    the history says why a model built in a run was not maintained.

    Args:
        maintainer: The session's maintainer (its history and invocation).
        target: The model.
        writes: What its build wrote.
        reason: ``BuildWrites.skip_reason``.

    Returns:
        The outcome (status ``skipped``).
    """
    c = target.config
    if maintainer.history is not None:
        record = HistoryRecord(
            invocation_id=maintainer.invocation_id,
            model=c.model,
            table_location=target.location,
            op=SKIP_OP,
            parameters=parameters_json({"min_files_written": c.min_files_written}),
            dry_run=False,
            status=str(Status.SKIPPED),
            error=None,
            started_at=dt.datetime.now(dt.UTC),
            duration_s=0.0,
            reason=f"the build {reason}",
            **writes.history_columns(),
        )
        # written with the next history commit, or when the command ends: not one per skip
        maintainer.history.defer([record])
    return OpOutcome(
        c.model, SKIP_OP, Status.SKIPPED, Reason.NOT_DUE, f"the build {reason}", on_error=c.on_error
    )
