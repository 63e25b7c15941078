"""Statistics upkeep: options -> plan -> execute -> result, with the run's audit record.

``compute_stats`` is what ``python -m python_ops stats`` and the maintenance runner call. It
refuses (a named error, exit 2 on the command line) before computing or writing anything on a
table feature the protocol gate refuses for ``stats``, a store where no put-if-absent is made
(an S3 endpoint that ignores ``If-None-Match``, other object stores), a statistics column of a
type it cannot compute, or a watched column the table lacks.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from python_ops.delta.writing.log_commit import refuse_without_atomic_commits, write_commit
from python_ops.ops.audit import Audit, as_audit
from python_ops.ops.results import StatsResult
from python_ops.ops.stats.execute import CommitWriter, execute
from python_ops.ops.stats.options import stats_options
from python_ops.ops.stats.plan import plan_stats
from python_ops.storage import Storage, open_storage


def compute_stats(  # noqa: D417 (the options are documented once, on StatsOptions)
    table: str | Storage,
    *,
    columns: Sequence[str] = (),
    dry_run: bool = False,
    set_stats_columns: bool = True,
    audit: Audit | bool = True,
    write: CommitWriter = write_commit,
) -> StatsResult:
    """Fill in missing file statistics, as Delta's ``COMPUTE STATS`` recompute commits them.

    Args:
        table: The table's location or its open ``Storage``.
        audit: Whether the run is audited, and the caller's labels (``ops.audit.Audit``).
        write: Publishes one commit file, False when its version is taken (``write_commit``).
        The others: ``StatsOptions``'s fields, documented there.

    Returns:
        What was done.

    Raises:
        UnsupportedFeatureError: A feature the protocol gate refuses for ``stats``.
        StatsUnsupportedError: A store without put-if-absent here, a column type or a file this
            op cannot handle.
        ConfigError: A watched column the table lacks or cannot index, or an S3 endpoint that
            ignores conditional writes.
        WriterError: Concurrent commits kept taking the version (nothing written).
    """
    started = time.monotonic()
    options = stats_options(columns=columns, dry_run=dry_run, set_stats_columns=set_stats_columns)
    params = {"columns": list(options.columns), "dry_run": options.dry_run}
    storage = table if isinstance(table, Storage) else open_storage(table)
    refuse_without_atomic_commits(storage)
    plan = plan_stats(storage, columns=options.columns, set_stats_columns=options.set_stats_columns)
    try:
        result = execute(plan, storage=storage, options=options, started=started, write=write)
    except Exception as err:
        as_audit(audit).record(
            "stats", plan.snapshot.location, "failed", {**params, "error": str(err)}
        )
        raise
    as_audit(audit).record("stats", result.location, "succeeded", {**params, **result.to_dict()})
    return result
