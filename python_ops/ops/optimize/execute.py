"""OPTIMIZE: our plan (``python_ops.ops.optimize.plan``) executed by a real Delta writer.

- Compaction: each planned bin of a partition is read and written here as one file
  (``own_compact.write_bins``); Z-order: our clustering (``zorder``: range ids per column,
  interleaved). Either way the partition's rewrite is committed by ``rewrite_commit``: exactly
  the planned inputs removed, each spelled as the log spells its add, and read back before
  the op reports it (no writer re-plans: delta-rs's ``optimize.compact`` planned from its own
  snapshot and re-encoded the paths it removed).
- On an engine with Delta (a Spark session with delta-spark, or a cluster behind dbt's
  connection; ``DeltaSql.has_delta`` asks it), both go to Delta's own ``OPTIMIZE ... WHERE
  <our partitions> [ZORDER BY (...)]`` instead, with the session settings that make Delta pick
  exactly the planned files (``optimize_settings``) for that statement only; the counts are
  Delta's own OPTIMIZE output row, the commit is found by a marker in its ``userMetadata``.
  The protocol gate asks the writer that runs (``Writer.DELTA`` accepts every feature Delta
  4.4 writes: deletion vectors, column mapping, clustering, ...).

Conflicts (SPEC §3.7), as Delta decides them: a concurrent append never conflicts (the commit
moves to the next version); a concurrent commit that removed one of the inputs, or changed the
metadata, fails that partition cleanly with ``OptimizeConflictError``, whose ``result`` lists the
partitions committed and the one that failed; the files the failed attempt wrote are deleted
(any that could not be are named in ``untracked_files``).
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from dataclasses import dataclass
from typing import Any

from python_ops.delta.actions import AddFile
from python_ops.delta.commits import list_log
from python_ops.delta.log_commit import require_atomic_commits
from python_ops.delta.protocol import (
    Op,
    Writer,
    check_protocol,
)
from python_ops.delta.snapshot import Snapshot, read_snapshot
from python_ops.errors import (
    ChangedThenFailedError,
    ConfigError,
    OptimizeConflictError,
)
from python_ops.ops.audit import Audit, as_audit
from python_ops.ops.log_cleanup import remove_stale_staged
from python_ops.ops.optimize.clustering import cluster, is_clustered
from python_ops.ops.optimize.delta_statement import (
    BATCH_SIZE,
    MARKER_PREFIX,
    MAX_DELETED_ROWS_RATIO,
    MAX_FILE_SIZE,
    MIN_FILE_SIZE,
    USER_METADATA,
    WRITER_DELTA_SQL,
    as_dict,
    literal,
    marked_commit,
    optimize_metrics,
)
from python_ops.ops.optimize.external_sort import DEFAULT_MEMORY_BUDGET
from python_ops.ops.optimize.own_compact import write_bins
from python_ops.ops.optimize.plan import (
    DEFAULT_MIN_SMALL_FILES,
    OptimizePlan,
    PartitionPlan,
    plan_optimize,
    plan_summary,
)
from python_ops.ops.optimize.plan import stats_columns as indexed_columns
from python_ops.ops.optimize.rewrite_commit import RewriteCommit, RewriteConflict, commit_rewrite
from python_ops.ops.optimize.zorder import (
    WrittenFile,
    check_supported,
    write_clustered,
)
from python_ops.ops.results import OptimizeResult
from python_ops.ops.writer_choice import delta_writer_for
from python_ops.spark_sessions import DeltaSql, session_sql
from python_ops.storage import Storage, open_storage

WRITER_COMPACT = "python_ops compaction + own commit"
WRITER_ZORDER = "python_ops z-order + own commit"

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Outcome:
    version: int | None
    files_added: int
    files_removed: int
    bytes_added: int
    bytes_removed: int
    considered: int
    skipped: int
    partitions: int
    retries: int = 0


def _rewrite_outcome(
    partition: PartitionPlan,
    inputs: list[AddFile],
    written: list[WrittenFile],
    version: int,
    retried: int,
) -> _Outcome:
    """What one committed rewrite did, counted from its inputs and the files it wrote."""
    return _Outcome(
        version=version,
        files_added=len(written),
        files_removed=len(inputs),
        bytes_added=sum(f.size_bytes for f in written),
        bytes_removed=sum(f.size_bytes for f in inputs),
        # as Delta counts them: the partition's candidates, and those no bin took
        considered=partition.candidates,
        skipped=partition.candidates - len(inputs),
        partitions=1,
        retries=retried,
    )


def _parameters(plan: OptimizePlan) -> dict[str, str]:
    """``operationParameters`` as Delta's OPTIMIZE records them."""
    parameters = {
        "predicate": json.dumps([plan.where] if plan.where else []),
        "targetSize": str(plan.target_size_bytes),
    }
    if plan.zorder_by:
        parameters["zOrderBy"] = json.dumps(list(plan.zorder_by))
    return parameters


def _logical_names(plan: OptimizePlan) -> dict[str, str]:
    """Physical to logical column names of a column-mapping table (empty without mapping).

    The log keys partition values by physical name (``col-<uuid>`` under column mapping);
    Delta's SQL takes logical names (``DELTA_NON_PARTITION_COLUMN_REFERENCE`` otherwise).
    """
    if plan.snapshot is None:
        return {}
    fields = json.loads(plan.snapshot.metadata.schema_string).get("fields", [])
    names = {}
    for field in fields:
        metadata = field.get("metadata") or {}
        physical = metadata.get("delta.columnMapping.physicalName")
        if isinstance(physical, str):
            names[physical] = str(field["name"])
    return names


def _partition_predicate(plan: OptimizePlan) -> str | None:
    """The plan's partitions with work as a predicate on partition columns (None: all of them)."""
    work = plan.work
    if not work or not work[0].partition_values:
        return None
    if plan.where is None and len(work) == len(plan.partitions):
        return None
    names = _logical_names(plan)
    terms = []
    for partition in work:
        parts = []
        for key, value in partition.partition_values.items():
            column = "`" + names.get(key, key).replace("`", "``") + "`"
            parts.append(
                f"{column} = {literal(value)}" if value is not None else f"{column} IS NULL"
            )
        terms.append("(" + " AND ".join(parts) + ")")
    return " OR ".join(terms)


def optimize_statement(plan: OptimizePlan, table: str) -> str:
    """Delta's own OPTIMIZE for our plan: its partitions with work, its Z-order columns.

    Args:
        plan: The plan (``plan_optimize``).
        table: How the engine names the table (``delta.`<location>``` or its catalog name).

    Returns:
        The statement (run it with ``optimize_settings``).
    """
    statement = f"OPTIMIZE {table}"
    predicate = _partition_predicate(plan)
    if predicate:
        statement += f" WHERE {predicate}"
    if plan.zorder_by:
        statement += " ZORDER BY (" + ", ".join(f"`{c}`" for c in plan.zorder_by) + ")"
    return statement


def optimize_settings(plan: OptimizePlan, marker: str) -> dict[str, str | None]:
    """Session settings under which Delta's OPTIMIZE rewrites exactly the planned files.

    Delta takes every file of the ``WHERE`` partitions smaller than ``minFileSize`` (all of
    them for Z-order), sorts each partition's files by size, fills bins up to ``maxFileSize``
    and drops single-file bins: our plan's rule with our target as both sizes. Its other
    candidate rule (files whose deletion vectors delete more than ``maxDeletedRowsRatio`` of
    their rows) is not part of our plan, so the ratio is set to 1 (no file exceeds it).
    ``batchSize`` unset: one batch, so one commit for the statement. ``userMetadata`` carries a
    marker unique to this run, so the commit it made is found without guessing.

    Args:
        plan: The plan.
        marker: This run's marker for the commit's ``userMetadata``.

    Returns:
        Setting name to value (None: unset while the statement runs).
    """
    return {
        MIN_FILE_SIZE: str(plan.target_size_bytes),
        MAX_FILE_SIZE: str(plan.target_size_bytes),
        MAX_DELETED_ROWS_RATIO: "1.0",
        BATCH_SIZE: None,
        USER_METADATA: marker,
    }


def _marked_commit(plan: OptimizePlan, marker: str) -> tuple[int, set[str]] | None:
    return marked_commit(plan.location, plan.version, marker)


def _run_with_delta_sql(
    sql: DeltaSql, plan: OptimizePlan, failures: list[dict[str, Any]]
) -> list[_Outcome]:
    """Hand the plan to Delta's own OPTIMIZE; what it did is its own output row.

    The statement comes from ``optimize_statement`` and runs under ``optimize_settings``
    (restored afterwards) on a session of its own (``StatementSession``); the counts are the
    metrics of the row Delta's OPTIMIZE returns for this very statement, the commit version the
    one marked with this run's marker. A commit that removed a file outside the plan is a
    failure in ``failures`` (the op then fails, exit 1), never a warning only.
    """
    table = sql.table(plan.location)
    marker = MARKER_PREFIX + uuid.uuid4().hex
    rows = sql.run_with_settings(optimize_statement(plan, table), optimize_settings(plan, marker))
    m = optimize_metrics(rows, table, sql.where)
    added = int(m.get("numFilesAdded") or 0)
    removed = int(m.get("numFilesRemoved") or 0)
    version: int | None = None
    if added or removed:
        found = _marked_commit(plan, marker)
        if found is None:
            raise ChangedThenFailedError(
                f"Delta's OPTIMIZE of {table} on {sql.where} rewrote {removed} file(s), but no "
                f"commit after version {plan.version} carries its marker {marker!r} "
                f"({USER_METADATA}); its history cannot be attributed"
            )
        version, paths = found
        planned = {f for p in plan.work for b in p.bins for f in b.files}
        if paths - planned:  # Delta widened the plan (e.g. files appended since planning)
            outside = sorted(paths - planned)
            failures.append(
                {
                    "partition_values": {},
                    "reason": f"Delta's OPTIMIZE committed version {version} removing "
                    f"{len(outside)} file(s) outside the plan ({', '.join(outside[:5])}"
                    f"{', ...' if len(outside) > 5 else ''}); the table's rows are unchanged "
                    "(OPTIMIZE rewrites with dataChange=false), but the op did more than it "
                    "planned",
                    "committed_version": version,
                    "inputs_still_live": False,
                    "attempts": 1,
                }
            )
    return [
        _Outcome(
            version=version,
            files_added=added,
            files_removed=removed,
            bytes_added=int(as_dict(m.get("filesAdded")).get("totalSize") or 0),
            bytes_removed=int(as_dict(m.get("filesRemoved")).get("totalSize") or 0),
            considered=int(m.get("totalConsideredFiles") or 0),
            skipped=int(m.get("totalFilesSkipped") or 0),
            partitions=int(m.get("partitionsOptimized") or 0),
        )
    ]


def _write_partition(
    storage: Storage,
    plan: OptimizePlan,
    partition: PartitionPlan,
    files: dict[str, AddFile],
    columns: list[str],
    memory_budget_bytes: int,
) -> list[WrittenFile]:
    """Write one partition's rewrite (Z-order, or one file per compaction bin); no commit."""
    if plan.zorder_by:
        inputs = [files[i] for b in partition.bins for i in b.files]
        return write_clustered(
            storage,
            inputs,
            columns=list(plan.zorder_by),
            target_size_bytes=plan.target_size_bytes,
            stats_columns=columns,
            memory_budget_bytes=memory_budget_bytes,
        )
    return write_bins(storage, partition, files, columns)


def _discard(storage: Storage, written: list[WrittenFile]) -> list[str]:
    """Delete files a rewrite wrote and never committed; returns those still there."""
    paths = [w.path for w in written]
    if not paths:
        return []
    try:
        left = storage.delete_files(paths)
    except OSError as err:
        log.warning("could not delete the uncommitted files %s: %s", paths, err)
        return paths
    return list(left)


def _execute(
    plan: OptimizePlan,
    *,
    failures: list[dict[str, Any]],
    outcomes: list[_Outcome],
    memory_budget_bytes: int = DEFAULT_MEMORY_BUDGET,
) -> list[str]:
    """Rewrite and commit the plan partition by partition; stop at the first conflict.

    Each commit's outcome is appended to ``outcomes`` as it is made, so a caller that meets an
    error later still knows what was committed. A partition whose commit conflicts (a
    concurrent commit removed one of its inputs, or changed the metadata) is not committed:
    the files it wrote are deleted and it is recorded in ``failures``.

    Returns:
        Files written and not committed that could not be deleted (named, for VACUUM).
    """
    storage = open_storage(plan.location)
    snapshot = plan.snapshot
    if snapshot is None or snapshot.version != plan.version:
        snapshot = read_snapshot(storage, version=plan.version)
    check_protocol(
        snapshot.protocol,
        Op.ZORDER if plan.zorder_by else Op.COMPACTION,
        location=plan.location,
        writer=Writer.DELTA_RS,
    )
    require_atomic_commits(storage)
    files = {f.identity: f for f in snapshot.files}
    if plan.zorder_by:
        check_supported(snapshot.metadata.configuration, list(snapshot.files))
    columns = indexed_columns(snapshot)
    for partition in plan.work:
        inputs = [files[i] for b in partition.bins for i in b.files]
        written: list[WrittenFile] = []
        try:
            written = _write_partition(
                storage, plan, partition, files, columns, memory_budget_bytes
            )
            rewrite = RewriteCommit(tuple(inputs), tuple(written), _parameters(plan))
            version, retried = commit_rewrite(storage, rewrite, read_version=plan.version)
        except RewriteConflict as err:
            failures.append(
                {
                    "partition_values": partition.partition_values,
                    "reason": str(err),
                    "inputs_still_live": False,
                    "attempts": 1,
                }
            )
            return _discard(storage, written)
        except ChangedThenFailedError:
            raise  # the commit is in the log: its files are the table's now
        except BaseException:
            left = _discard(storage, written)
            if left:
                log.warning("OPTIMIZE %s: uncommitted files left: %s", plan.location, left)
            raise
        outcomes.append(_rewrite_outcome(partition, inputs, written, version, retried))
    return []


def optimize(
    table: str,
    *,
    zorder_by: list[str] | None = None,
    where: str | None = None,
    full: bool = False,
    target_size_bytes: int | None = None,
    min_small_files: int = DEFAULT_MIN_SMALL_FILES,
    dry_run: bool = False,
    max_retries: int = 1,
    max_concurrent_tasks: int | None = None,
    spark: Any = None,
    sql: DeltaSql | None = None,
    snapshot: Snapshot | None = None,
    memory_budget_bytes: int = DEFAULT_MEMORY_BUDGET,
    audit: Audit | bool = True,
) -> OptimizeResult:
    """Plan and run OPTIMIZE (compaction, or Z-order when ``zorder_by`` is given).

    Args:
        table: The table location.
        zorder_by: Z-order columns; None or empty for compaction.
        where: Predicate on partition columns limiting the scope.
        full: Every selected partition, not only those changed since the last OPTIMIZE; on a
            liquid-clustered table, ``OPTIMIZE ... FULL`` (default: only after its clustering
            columns changed).
        target_size_bytes: Target file size (None: table property, else engine default).
        min_small_files: Minimum small files in a partition for compaction to be worth it.
        dry_run: Only plan.
        max_retries: Kept for callers; a commit that only lost its version to concurrent
            appends moves to the next one (up to ``log_commit.MAX_ATTEMPTS``), as Delta's own
            OPTIMIZE does, and a lost input is never retried.
        max_concurrent_tasks: delta-rs writer parallelism (None: number of CPUs).
        spark: A Spark session; when it has Delta, Delta's OPTIMIZE runs the plan on it.
        sql: Where Delta's SQL would run (e.g. dbt's connection to a cluster); overrides
            ``spark``. When it has Delta, Delta's OPTIMIZE runs the plan there.
        snapshot: The table's latest snapshot if the caller has just read it; None reads it.
        memory_budget_bytes: Memory our Z-order may hold; a larger partition is sorted in
            runs spilled to disk (``external_sort``).
        audit: Whether the run is audited, and the caller's labels (``ops.audit.Audit``).

    Returns:
        The plan and what was committed.

    Raises:
        ConfigError: For bad columns, predicates or sizes.
        UnsupportedFeatureError: When the writer that would run does not support the table.
        EngineError: When the engine cannot say whether it has Delta, or its OPTIMIZE answers
            something unexpected.
        OptimizeConflictError: When a concurrent change removed files being rewritten; its
            ``result`` says what was committed and which untracked files were left.
    """
    started = time.perf_counter()
    storage = open_storage(table)
    location = storage.root
    if sql is None and spark is not None:
        sql = session_sql(spark)
    try:
        snapshot = read_snapshot(storage) if snapshot is None else snapshot
        _refuse_zorder_when_clustered(snapshot, zorder_by)
        clustered = is_clustered(snapshot)
        if clustered and where:
            raise ConfigError(
                setting="where",
                value=where,
                fix="the table is liquid-clustered and has no partitions: Delta's clustering "
                "OPTIMIZE takes the whole table. Remove the predicate.",
            )
        if not clustered:
            gate, sql = delta_writer_for(
                snapshot, Op.ZORDER if zorder_by else Op.COMPACTION, sql, location
            )
            plan = plan_optimize(
                storage,
                writer=gate,
                zorder_by=zorder_by,
                where=where,
                full=full,
                target_size_bytes=target_size_bytes,
                min_small_files=min_small_files,
                snapshot=snapshot,
            )
    except Exception as err:
        as_audit(audit).record(
            "optimize", location, "failed", {"zorder_by": zorder_by, "error": str(err)}
        )
        raise
    if clustered:  # Delta's clustering OPTIMIZE picks the files: our plan does not apply
        return cluster(
            storage,
            snapshot,
            full=True if full else None,
            target_size_bytes=target_size_bytes,
            dry_run=dry_run,
            sql=sql,
            started=started,
            audit=audit,
        )
    return execute(
        plan,
        dry_run=dry_run,
        max_retries=max_retries,
        max_concurrent_tasks=max_concurrent_tasks,
        spark=spark,
        sql=sql,
        started=started,
        memory_budget_bytes=memory_budget_bytes,
        audit=audit,
    )


def _refuse_zorder_when_clustered(snapshot: Snapshot, zorder_by: list[str] | None) -> None:
    """A liquid-clustered table is optimized by clustering: Delta refuses ZORDER BY on it."""
    if not zorder_by:
        return
    if is_clustered(snapshot):
        raise ConfigError(
            setting="zorder_by",
            value=list(zorder_by),
            fix="the table is liquid-clustered: Delta's OPTIMIZE clusters it on its clustering "
            "columns and refuses ZORDER BY. Remove the Z-order columns (compaction then runs "
            "as Delta's clustering OPTIMIZE).",
        )


def execute(
    plan: OptimizePlan,
    *,
    dry_run: bool = False,
    max_retries: int = 1,
    max_concurrent_tasks: int | None = None,
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
        max_retries: Kept for callers; a commit that only lost its version to concurrent
            appends moves to the next one (up to ``log_commit.MAX_ATTEMPTS``), as Delta's own
            OPTIMIZE does, and a lost input is never retried.
        max_concurrent_tasks: delta-rs writer parallelism (None: number of CPUs).
        spark: A Spark session; when it has Delta, Delta's OPTIMIZE runs the plan on it.
        sql: Where Delta's SQL would run; overrides ``spark``.
        started: ``time.perf_counter()`` when the op started (for the duration).
        memory_budget_bytes: Memory our Z-order may hold (``external_sort``).
        audit: Whether the run is audited, and the caller's labels (``ops.audit.Audit``).

    Returns:
        What was committed.

    Raises:
        UnsupportedFeatureError: When delta-rs would run and does not support the table.
        EngineError: When the engine cannot say whether it has Delta, or its OPTIMIZE answers
            something unexpected.
        OptimizeConflictError: When a concurrent change removed files being rewritten.
    """
    started = time.perf_counter() if started is None else started
    location = plan.location
    params = {"zorder_by": list(plan.zorder_by), "where": plan.where}
    failures: list[dict[str, Any]] = []
    untracked: list[str] = []
    if sql is None and spark is not None:
        sql = session_sql(spark)
    writer = WRITER_ZORDER if plan.zorder_by else WRITER_COMPACT
    outcomes: list[_Outcome] = []
    log_deleted: list[str] = []
    try:
        # asked only when there is work: a no-op never sends a statement
        use_sql = sql is not None and bool(plan.work) and not dry_run and sql.has_delta(location)
        if use_sql and sql is not None:
            writer = f"{WRITER_DELTA_SQL} on {sql.where}"
        if not dry_run:
            # a killed earlier run may have left a staged commit file; it can never commit now
            remove_stale_staged(
                open_storage(location), latest_version=plan.version, now_ms=int(time.time() * 1000)
            )
        if plan.work and not dry_run:
            if use_sql and sql is not None:
                log_storage = open_storage(location)
                log_before = {f.name for f in list_log(log_storage)}
                outcomes = _run_with_delta_sql(sql, plan, failures)
                log_deleted = sorted(log_before - {f.name for f in list_log(log_storage)})
                if log_deleted:
                    log.warning(
                        "OPTIMIZE %s: Delta's commit checkpointed and deleted %d expired log "
                        "file(s) (delta.enableExpiredLogCleanup): %s",
                        location,
                        len(log_deleted),
                        ", ".join(log_deleted),
                    )
            else:
                untracked = _execute(
                    plan,
                    failures=failures,
                    outcomes=outcomes,
                    memory_budget_bytes=memory_budget_bytes,
                )
    except Exception as err:
        as_audit(audit).record("optimize", location, "failed", {**params, "error": str(err)})
        committed = [o.version for o in outcomes if o.version is not None]
        if committed and not isinstance(err, ChangedThenFailedError):
            raise ChangedThenFailedError(
                f"OPTIMIZE of {location} committed version(s) "
                f"{', '.join(map(str, committed))}, then failed: {err}",
            ) from err
        raise
    result = OptimizeResult(
        location=location,
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
        writer=writer,
        retries=sum(o.retries for o in outcomes),
        failed_partitions=tuple(failures),
        untracked_files=tuple(untracked),
        log_files_deleted=tuple(log_deleted),
    )
    if failures:
        failed = failures[0]
        as_audit(audit).record("optimize", location, "failed", {**params, **result.to_dict()})
        if "committed_version" in failed:
            raise OptimizeConflictError(
                f"OPTIMIZE of {location}: {failed['reason']}.", result=result
            )
        raise OptimizeConflictError(
            f"OPTIMIZE of {location} ({_where_values(failed['partition_values'])}) was not "
            f"committed: {failed['reason']}. Partitions committed before it: "
            f"{result.partitions_optimized}. {len(result.untracked_files)} file(s) the failed "
            "attempt wrote are not referenced by the table; VACUUM removes them after the "
            "retention period.",
            result=result,
        )
    as_audit(audit).record("optimize", location, "succeeded", {**params, **result.to_dict()})
    return result


def _where_values(values: dict[str, str | None]) -> str:
    return ", ".join(f"{k}={v}" for k, v in values.items()) or "table"
