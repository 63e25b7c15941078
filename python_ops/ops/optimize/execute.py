"""OPTIMIZE: options -> our plan (``plan``) -> a real Delta writer -> result.

- Written here (``native``): compaction writes each planned bin as one file, Z-order clusters
  each partition (``zorder``: range ids per column, interleaved); each partition's rewrite is
  committed by ``rewrite_commit``: exactly the planned inputs removed, each spelled as the log
  spells its add, and read back before the op reports it.
- On an engine with Delta (a Spark session with delta-spark, or a cluster behind dbt's
  connection; ``DeltaSql.has_delta`` asks it), Delta's own ``OPTIMIZE ... WHERE <our
  partitions> [ZORDER BY (...)]`` runs the plan instead (``delta_run``). The protocol gate asks
  the writer that runs (``Writer.DELTA`` accepts every feature Delta 4.4 writes).
- A liquid-clustered table is optimized by Delta's clustering OPTIMIZE (``clustering``).

Conflicts (SPEC §3.7), as Delta decides them: a concurrent append never conflicts (the commit
moves to the next version); a concurrent commit that removed one of the inputs, or changed the
metadata, fails that partition cleanly (the other partitions are still rewritten and committed)
and the run raises ``OptimizeConflictError``, whose ``result`` lists the partitions committed and
the ones that failed; the files a failed attempt wrote are deleted (any that could not be are
named in ``untracked_files``).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any

from python_ops.delta.log.commits import list_log
from python_ops.delta.state.snapshot import Snapshot, read_snapshot
from python_ops.delta.table.features import Op, Writer
from python_ops.delta_sql import DeltaSql, session_sql
from python_ops.errors import (
    ChangedThenFailedError,
    ConfigError,
    JvmDeferredError,
    OptimizeConflictError,
)
from python_ops.ops.audit import Audit, as_audit
from python_ops.ops.live_files import require_live_files
from python_ops.ops.log_cleanup import remove_stale_staged
from python_ops.ops.optimize.planning.outcome import Outcome
from python_ops.ops.optimize.planning.plan import (
    DEFAULT_MIN_SMALL_FILES,
    OptimizePlan,
    plan_optimize,
    plan_summary,
)
from python_ops.ops.optimize.sorting.external_sort import DEFAULT_MEMORY_BUDGET
from python_ops.ops.optimize.writers.clustering import cluster, is_clustered
from python_ops.ops.optimize.writers.delta_run import optimize_statement as optimize_statement
from python_ops.ops.optimize.writers.delta_run import run_with_delta_sql
from python_ops.ops.optimize.writers.delta_statement import WRITER_DELTA_SQL
from python_ops.ops.optimize.writers.native import rewrite_natively
from python_ops.ops.results import OptimizeResult
from python_ops.ops.writer_choice import (
    delta_writer_for,
    keeps_empty_partition_values,
    writer_gate,
)
from python_ops.storage import Storage, open_storage

WRITER_COMPACT = "python_ops compaction + own commit"
WRITER_ZORDER = "python_ops z-order + own commit"

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class OptimizeOptions:
    """An OPTIMIZE request, as the public ``optimize`` takes it.

    Attributes:
        zorder_by: Z-order columns; empty for compaction.
        where: Predicate on partition columns limiting the scope.
        full: Every selected partition, not only those changed since the last OPTIMIZE; on a
            liquid-clustered table, ``OPTIMIZE ... FULL``.
        target_size_bytes: Target file size (None: table property, else engine default).
        min_small_files: Minimum small files in a partition for compaction to be worth it.
        dry_run: Only plan.
        memory_budget_bytes: Memory our Z-order may hold; a larger partition is sorted in
            runs spilled to disk (``external_sort``).
    """

    zorder_by: tuple[str, ...] = ()
    where: str | None = None
    full: bool = False
    target_size_bytes: int | None = None
    min_small_files: int = DEFAULT_MIN_SMALL_FILES
    dry_run: bool = False
    memory_budget_bytes: int = DEFAULT_MEMORY_BUDGET


def optimize(  # noqa: D417 (the options are documented once, on OptimizeOptions)
    table: str,
    *,
    zorder_by: list[str] | None = None,
    where: str | None = None,
    full: bool = False,
    target_size_bytes: int | None = None,
    min_small_files: int = DEFAULT_MIN_SMALL_FILES,
    dry_run: bool = False,
    spark: Any = None,
    sql: DeltaSql | None = None,
    snapshot: Snapshot | None = None,
    memory_budget_bytes: int = DEFAULT_MEMORY_BUDGET,
    audit: Audit | bool = True,
) -> OptimizeResult:
    """Plan and run OPTIMIZE (compaction, or Z-order when ``zorder_by`` is given).

    Args:
        table: The table location.
        spark: A Spark session; when it has Delta, Delta's OPTIMIZE runs the plan on it.
        sql: Where Delta's SQL would run (e.g. dbt's connection to a cluster); overrides
            ``spark``. When it has Delta, Delta's OPTIMIZE runs the plan there.
        snapshot: The table's latest snapshot if the caller has just read it; None reads it.
        audit: Whether the run is audited, and the caller's labels (``ops.audit.Audit``).
        The others: ``OptimizeOptions``'s fields, documented there.

    Returns:
        The plan and what was committed.

    Raises:
        ConfigError: For bad columns, predicates or sizes.
        UnsupportedFeatureError: When the writer that would run does not support the table.
        EngineError: When the engine cannot say whether it has Delta, or its OPTIMIZE answers
            something unexpected.
        OptimizeConflictError: When a concurrent change removed files being rewritten; its
            ``result`` says what was committed.
    """
    options = OptimizeOptions(
        tuple(zorder_by or ()), where, full, target_size_bytes, min_small_files, dry_run,
        memory_budget_bytes,
    )  # fmt: skip
    started = time.perf_counter()
    storage = open_storage(table)
    sql = session_sql(spark) if sql is None and spark is not None else sql
    try:
        snapshot = read_snapshot(storage) if snapshot is None else snapshot
        _refuse_zorder_when_clustered(snapshot, options)
        if is_clustered(snapshot):  # Delta's clustering OPTIMIZE picks the files
            return cluster(
                storage, snapshot, full=True if full else None,
                target_size_bytes=target_size_bytes, dry_run=dry_run, sql=sql, started=started,
                audit=audit,
            )  # fmt: skip
        plan, sql = _plan(storage, snapshot, options, sql)
    except Exception as err:
        params = {"zorder_by": zorder_by, "error": str(err)}
        as_audit(audit).record("optimize", storage.root, "failed", params)
        raise
    return execute(plan, dry_run=dry_run, sql=sql, started=started,
                   memory_budget_bytes=memory_budget_bytes, audit=audit)  # fmt: skip


def _plan(
    storage: Storage, snapshot: Snapshot, options: OptimizeOptions, sql: DeltaSql | None
) -> tuple[OptimizePlan, DeltaSql | None]:
    """Our plan, gated for the writer that will run it (and where Delta's SQL would run).

    The plan decides first, from the protocol alone (``writer_gate``): where only Delta's
    writer may rewrite the table, which Delta runs it (the engine, asked whether it has Delta
    with a statement; or the local writer, started for it) is asked only when the plan has
    work. Nothing to rewrite asks no engine and starts nothing (issue 65 item 3); a dry run
    where the local writer may not start (a post-hook) is planned, not deferred.

    Raises:
        JvmDeferredError: When the plan has work only the deferred local writer could do.
    """
    op = Op.ZORDER if options.zorder_by else Op.COMPACTION
    gate = writer_gate(snapshot, op, storage.root)
    plan = plan_optimize(
        storage,
        writer=gate,
        zorder_by=list(options.zorder_by) or None,
        where=options.where,
        full=options.full,
        target_size_bytes=options.target_size_bytes,
        min_small_files=options.min_small_files,
        snapshot=snapshot,
    )
    if gate is Writer.DELTA_RS or not plan.work:
        return plan, sql
    try:
        _gate, sql = delta_writer_for(snapshot, op, sql, storage.root)
    except JvmDeferredError:
        if not options.dry_run:  # a dry run starts nothing: planned all the same
            raise
    return plan, sql


def _refuse_zorder_when_clustered(snapshot: Snapshot, options: OptimizeOptions) -> None:
    """A liquid-clustered table is optimized by clustering: Delta refuses ZORDER BY on it."""
    if not is_clustered(snapshot):
        return
    if options.zorder_by:
        raise ConfigError(
            setting="zorder_by",
            value=list(options.zorder_by),
            fix="the table is liquid-clustered: Delta's OPTIMIZE clusters it on its clustering "
            "columns and refuses ZORDER BY. Remove the Z-order columns (compaction then runs "
            "as Delta's clustering OPTIMIZE).",
        )
    if options.where:
        raise ConfigError(
            setting="where",
            value=options.where,
            fix="the table is liquid-clustered and has no partitions: Delta's clustering "
            "OPTIMIZE takes the whole table. Remove the predicate.",
        )


@dataclass
class _Run:
    """What the writer did, as it happened (kept when it fails half-way)."""

    writer: str
    outcomes: list[Outcome] = field(default_factory=list)
    failures: list[dict[str, Any]] = field(default_factory=list)
    untracked: list[str] = field(default_factory=list)
    log_deleted: list[str] = field(default_factory=list)


def execute(
    plan: OptimizePlan,
    *,
    dry_run: bool = False,
    spark: Any = None,
    sql: DeltaSql | None = None,
    started: float | None = None,
    memory_budget_bytes: int = DEFAULT_MEMORY_BUDGET,
    audit: Audit | bool = True,
) -> OptimizeResult:
    """Run a plan made by ``plan_optimize``; commits are conflict-checked from its version.

    Args:
        plan: The plan.
        dry_run: Only report the plan.
        spark: A Spark session; when it has Delta, Delta's OPTIMIZE runs the plan on it.
        sql: Where Delta's SQL would run; overrides ``spark``.
        started: ``time.perf_counter()`` when the op started (for the duration).
        memory_budget_bytes: Memory our Z-order may hold (``external_sort``).
        audit: Whether the run is audited, and the caller's labels (``ops.audit.Audit``).

    Returns:
        What was committed.

    Raises:
        UnsupportedFeatureError: When our writer would run and does not support the table.
        EngineError: When the engine cannot say whether it has Delta, or its OPTIMIZE answers
            something unexpected.
        OptimizeConflictError: When a concurrent change removed files being rewritten.
    """
    started = time.perf_counter() if started is None else started
    params = {"zorder_by": list(plan.zorder_by), "where": plan.where}
    sql = session_sql(spark) if sql is None and spark is not None else sql
    run = _Run(WRITER_ZORDER if plan.zorder_by else WRITER_COMPACT)
    try:
        _write(plan, run, dry_run=dry_run, sql=sql, memory_budget_bytes=memory_budget_bytes)
    except Exception as err:
        as_audit(audit).record("optimize", plan.location, "failed", {**params, "error": str(err)})
        committed = [o.version for o in run.outcomes if o.version is not None]
        if committed and not isinstance(err, ChangedThenFailedError):
            raise ChangedThenFailedError(
                f"OPTIMIZE of {plan.location} committed version(s) "
                f"{', '.join(map(str, committed))}, then failed: {err}",
            ) from err
        raise
    result = _result(plan, run, dry_run=dry_run, started=started)
    if run.failures:
        as_audit(audit).record("optimize", plan.location, "failed", {**params, **result.to_dict()})
        raise OptimizeConflictError(_conflict_message(plan, result, run.failures[0]), result=result)
    as_audit(audit).record("optimize", plan.location, "succeeded", {**params, **result.to_dict()})
    return result


def _write(
    plan: OptimizePlan, run: _Run, *, dry_run: bool, sql: DeltaSql | None, memory_budget_bytes: int
) -> None:
    """Have the plan rewritten by Delta's SQL where the engine has Delta, else natively."""
    location = plan.location
    # asked only when there is work: a no-op never sends a statement
    use_sql = sql is not None and bool(plan.work) and not dry_run and sql.has_delta(location)
    if not dry_run:
        # a killed earlier run may have left a staged commit file; it can never commit now
        now = int(time.time() * 1000)
        remove_stale_staged(open_storage(location), latest_version=plan.version, now_ms=now)
    if not plan.work or dry_run:
        return
    _require_inputs(plan)  # a partition committed before a missing input cannot be taken back
    if use_sql and plan.snapshot is not None:  # Delta would turn '' partition values to null
        op = Op.ZORDER if plan.zorder_by else Op.COMPACTION
        values = [p.partition_values for p in plan.work]
        use_sql = not keeps_empty_partition_values(plan.snapshot, op, values, location)
    if not use_sql or sql is None:
        run.untracked = rewrite_natively(
            plan, failures=run.failures, outcomes=run.outcomes,
            memory_budget_bytes=memory_budget_bytes,
        )  # fmt: skip
        return
    run.writer = f"{WRITER_DELTA_SQL} on {sql.where}"
    storage = open_storage(location)
    before = {f.name for f in list_log(storage)}
    run.outcomes = run_with_delta_sql(sql, plan, run.failures)
    run.log_deleted = sorted(before - {f.name for f in list_log(storage)})
    if run.log_deleted:
        log.warning(
            "OPTIMIZE %s: Delta's commit checkpointed and deleted %d expired log file(s) "
            "(delta.enableExpiredLogCleanup): %s",
            location, len(run.log_deleted), ", ".join(run.log_deleted),
        )  # fmt: skip


def _require_inputs(plan: OptimizePlan) -> None:
    """Refuse the plan before anything is written when one of its inputs is not in storage.

    Raises:
        LiveFilesMissingError: Naming the missing files (exit 2: nothing changed).
    """
    storage = open_storage(plan.location)
    snapshot = plan.snapshot
    if snapshot is None or snapshot.version != plan.version:
        snapshot = read_snapshot(storage, version=plan.version)
    files = {f.identity: f for f in snapshot.files}
    planned = [files[i] for p in plan.work for b in p.bins for i in b.files]
    require_live_files(storage, planned, op="OPTIMIZE")


def _result(plan: OptimizePlan, run: _Run, *, dry_run: bool, started: float) -> OptimizeResult:
    outcomes = run.outcomes
    return OptimizeResult(
        location=plan.location,
        dry_run=dry_run,
        zorder_by=plan.zorder_by,
        plan=plan_summary(plan),
        skipped_reason=None if plan.work else "nothing worth rewriting in scope",
        version_before=plan.version,
        commits=tuple(o.version for o in outcomes if o.version is not None),
        files_added=sum(o.files_added for o in outcomes),
        files_removed=sum(o.files_removed for o in outcomes),
        bytes_added=sum(o.bytes_added for o in outcomes),
        bytes_removed=sum(o.bytes_removed for o in outcomes),
        partitions_optimized=sum(o.partitions for o in outcomes if o.version is not None),
        files_considered=sum(o.considered for o in outcomes),
        files_skipped=sum(o.skipped for o in outcomes),
        duration_s=time.perf_counter() - started,
        writer=run.writer,
        retries=sum(o.retries for o in outcomes),
        failed_partitions=tuple(run.failures),
        untracked_files=tuple(run.untracked),
        log_files_deleted=tuple(run.log_deleted),
    )


def _conflict_message(plan: OptimizePlan, result: OptimizeResult, failed: dict[str, Any]) -> str:
    if "committed_version" in failed:
        return f"OPTIMIZE of {plan.location}: {failed['reason']}."
    left = result.untracked_files
    others = len(result.failed_partitions) - 1
    return (
        f"OPTIMIZE of {plan.location} ({_where_values(failed['partition_values'])}) was not "
        f"committed: {failed['reason']}. "
        + (f"{others} other partition(s) conflicted too. " if others > 0 else "")
        + f"Partitions committed: {result.partitions_optimized} of {len(plan.work)}. "
        + (
            f"{len(left)} file(s) the failed attempt wrote could not be deleted and are not "
            "referenced by the table; VACUUM removes them after the retention period."
            if left
            else "The files the failed attempt wrote were deleted."
        )
    )


def _where_values(values: dict[str, str | None]) -> str:
    return ", ".join(f"{k}={v}" for k, v in values.items()) or "table"
