"""How the runner runs each op for a model: its config in, ``OpCounts`` out.

One function per op, ``(target, ctx) -> OpCounts``, registered with the op in
``registry.REGISTRY``; the op's settings are passed as its parameters, and a parameter it
refuses is named as the ``maintenance_*`` key the user wrote, on the model (``op_keys``); its
audit record names the model too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from python_ops.delta.state.file_paths import FilePaths
from python_ops.delta.state.snapshot import Snapshot, read_snapshot
from python_ops.delta_sql import DeltaSql
from python_ops.errors import EngineError
from python_ops.invocation import Invocation
from python_ops.maintenance.configuration.config import AutoChoice
from python_ops.maintenance.configuration.op_keys import as_model_setting, model_audit, model_words
from python_ops.maintenance.configuration.policy import (
    effective_paths,
    effective_snapshot,
    pending_policy,
    unrecorded_note,
)
from python_ops.maintenance.facts.layout import clustering_columns
from python_ops.maintenance.records.outcomes import OpCounts
from python_ops.maintenance.runs.auto_columns import admitted_per_column, clustering_fields
from python_ops.maintenance.selection.targets import ModelTarget
from python_ops.ops.log_cleanup import cleanup_logs
from python_ops.ops.results import VacuumResult
from python_ops.ops.vacuum import vacuum
from python_ops.ops.vacuum.candidates import ListingEvidence
from python_ops.ops.vacuum_modes import VacuumEngine
from python_ops.storage import open_storage


@dataclass(frozen=True)
class RunContext:
    """What the runner hands an op besides the model.

    Attributes:
        spark: The Spark session (VACUUM selects files with it).
        snapshot: The table's snapshot as read for the decision (None: the op reads it).
        paths: For VACUUM alone, the log's paths as read for the decision instead of a snapshot
            (``read_file_paths``).
        dry_run: Report only.
        retention_hours: A VACUUM retention overriding the model's (still safety-checked).
        sql: Where Delta's own SQL would run (OPTIMIZE goes there when it has Delta); None:
            delta-rs in this process.
        vacuum_engine: Where VACUUM's selection runs (``vacuum``'s ``engine``): ``spark`` when
            the session is a cluster the caller attached to, else ``auto``.
        evidence: The listing VACUUM's due check made, for the run it decided (``reclaim``).
        invocation: The command it runs in (an op's warnings once per command).
    """

    spark: Any
    snapshot: Snapshot | None
    dry_run: bool
    retention_hours: float | None = None
    sql: DeltaSql | None = None
    vacuum_engine: VacuumEngine = VacuumEngine.AUTO
    paths: FilePaths | None = None
    evidence: ListingEvidence | None = None
    invocation: Invocation | None = None


def vacuum_note(result: VacuumResult) -> str:
    """VACUUM's mode and why, and the directories it kept, in words (CLI and run-operations).

    Args:
        result: The VACUUM result.

    Returns:
        E.g. ``LITE (auto: last FULL run 0.5 days ago, next FULL in 6.5 days); kept 1
        directory: p=1 (not empty: holds p=1/part-0.parquet (...))``.
    """
    words = f"{result.mode.upper()} ({result.mode_reason})"
    kept = result.dirs_kept
    if kept:
        words += f"; kept {len(kept)} director{'y' if len(kept) == 1 else 'ies'}: " + ", ".join(
            f"{k.path} ({k.reason})" for k in kept
        )
    return words


def vacuum_parameters(target: ModelTarget, ctx: RunContext) -> dict[str, Any]:
    """VACUUM's settings as the history records them (a failed run records these alone).

    Args:
        target: The model.
        ctx: The run (its own retention overrides the model's).

    Returns:
        ``retention_hours`` and ``allow_short_retention``.
    """
    c = target.config
    # an explicit 0 is a retention (safety-checked like any other), not "unset"
    retention_hours = (
        c.vacuum_retention_hours if ctx.retention_hours is None else ctx.retention_hours
    )
    return {
        "retention_hours": retention_hours,
        "allow_short_retention": c.vacuum_allow_short_retention,
    }


def run_vacuum(target: ModelTarget, ctx: RunContext) -> OpCounts:
    """VACUUM with the model's retention and mode (or the run's own retention)."""
    c = target.config
    params = vacuum_parameters(target, ctx)
    retention_hours = params["retention_hours"]
    # a run-operation's own retention_hours argument keeps its name
    with as_model_setting(c.model, "vacuum" if ctx.retention_hours is None else None):
        v = vacuum(
            target.location,
            spark=ctx.spark,
            retention_hours=retention_hours,
            allow_short_retention=c.vacuum_allow_short_retention,
            dry_run=ctx.dry_run,
            audit=model_audit(c.model),
            # the retention the package recorded follows the config: not a floor (``policy``)
            snapshot=(
                effective_paths(ctx.paths)
                if ctx.paths is not None
                else effective_snapshot(ctx.snapshot or read_snapshot(target.location))
            ),
            engine=ctx.vacuum_engine,
            mode=c.vacuum_mode,
            full_interval_days=c.vacuum_full_interval_days,
            evidence=ctx.evidence,  # the due check's listing, when it made one
            invocation=ctx.invocation,
            words=model_words(c.model),
        )
    params["mode"] = v.mode
    params["mode_reason"] = v.mode_reason
    params["dirs_kept"] = [{"path": k.path, "reason": k.reason} for k in v.dirs_kept]
    return OpCounts(
        files_removed=v.files_found if ctx.dry_run else v.files_deleted,
        bytes_removed=v.bytes_found if ctx.dry_run else v.bytes_deleted,
        version_before=v.table_version,
        version_after=v.table_version,
        parameters=params,
        note=vacuum_note(v),
    )


def load_optimize() -> Callable[..., Any]:
    """The OPTIMIZE op function, imported on first use."""
    from python_ops.ops.optimize.execute import optimize

    return optimize


def optimize_parameters(target: ModelTarget, ctx: RunContext) -> dict[str, Any]:
    """OPTIMIZE's settings as the history records them (a failed run records these alone).

    Args:
        target: The model.
        ctx: The run (unused: OPTIMIZE's settings are the model's).

    Returns:
        ``zorder_by``, ``target_size_bytes``, ``min_small_files``; ``auto_changed`` with
        ``auto`` clustering; ``where`` when it rewrites only the partitions a build wrote.
    """
    c = target.config
    choice = c.auto_choice
    params: dict[str, Any] = {
        "zorder_by": list(c.zorder_by),
        "target_size_bytes": c.target_file_size_bytes,
        "min_small_files": c.min_small_files,
    }
    if choice is not None:
        params["auto_changed"] = choice.changed
    # after a build: the partitions it wrote, only (a changed auto choice rewrites them all)
    where = None if choice is not None and choice.changed else target.build_scope
    if where:
        params["where"] = where
    return params


def run_optimize(target: ModelTarget, ctx: RunContext) -> OpCounts:
    """OPTIMIZE with the model's Z-order columns, target size and small-file threshold.

    With ``auto`` clustering (``auto_columns``): a changed choice rewrites every partition once
    (a liquid-clustered table is first altered with Delta's ``ALTER TABLE ... CLUSTER BY``),
    and files admitted per lookup are measured before and after, for the history.
    """
    optimize = load_optimize()
    c = target.config
    choice = c.auto_choice
    params = optimize_parameters(target, ctx)
    before: dict[str, float] = {}
    if choice is not None:
        before = admitted_per_column(target.location, choice.columns)
        if c.cluster_auto and _cluster_by_due(target.location, choice) and not ctx.dry_run:
            apply_cluster_by(target.location, choice.columns, ctx.sql)
    snapshot = ctx.snapshot if choice is None or not c.cluster_auto else None
    where = params.get("where")
    with as_model_setting(c.model, "optimize"):
        o = optimize(
            target.location,
            zorder_by=list(c.zorder_by),
            full=bool(choice is not None and choice.changed and c.zorder_auto),
            target_size_bytes=c.target_file_size_bytes,
            min_small_files=c.min_small_files,
            memory_budget_bytes=c.memory_budget_bytes,
            dry_run=ctx.dry_run,
            sql=ctx.sql,
            audit=model_audit(c.model),
            snapshot=snapshot,
            where=where,
        )
    params["writer"] = o.writer
    clustering: dict[str, str | None] = {}
    if choice is not None:
        after = before if ctx.dry_run else admitted_per_column(target.location, choice.columns)
        clustering = clustering_fields(choice, before, after)
    if o.log_files_deleted:  # Delta's own post-commit log cleanup ran (see OptimizeResult)
        params["log_files_deleted"] = list(o.log_files_deleted)
    after = max(o.commits) if o.commits else o.version_before
    if ctx.dry_run:
        return OpCounts(
            files_removed=o.plan["files_to_rewrite"],
            bytes_removed=o.plan["bytes_to_rewrite"],
            version_before=o.version_before,
            version_after=after,
            parameters=params,
            clustering=clustering,
        )
    return OpCounts(
        files_removed=o.files_removed,
        bytes_removed=o.bytes_removed,
        files_added=o.files_added,
        bytes_added=o.bytes_added,
        version_before=o.version_before,
        version_after=after,
        parameters=params,
        note=_optimize_note(o.writer, o.log_files_deleted),
        clustering=clustering,
    )


def _cluster_by_due(location: str, choice: AutoChoice) -> bool:
    """``maintenance_cluster_by: auto``: whether the table must be altered to the choice.

    A new choice, or a table its build re-created without it (Delta 4.4's ``CREATE OR
    REPLACE TABLE ... AS SELECT`` without ``CLUSTER BY`` empties the clustering columns).
    """
    if not choice.columns:
        return False
    if choice.changed:
        return True
    storage = open_storage(location)
    head = read_snapshot(storage).version
    return clustering_columns(storage, head) not in (None, choice.columns)


def apply_cluster_by(location: str, columns: tuple[str, ...], sql: DeltaSql | None) -> None:
    """Delta's own ``ALTER TABLE ... CLUSTER BY`` with the advisor's columns.

    Raises:
        EngineError: When no engine with Delta runs the statement (the embedded one cannot).
    """
    if sql is None or not sql.has_delta(location):
        raise EngineError(
            "maintenance_cluster_by: auto needs an engine with Delta (ALTER TABLE ... CLUSTER "
            "BY is Delta's own); the embedded engine cannot cluster. Use maintenance_zorder_by: "
            "auto there."
        )
    names = ", ".join(f"`{c}`" for c in columns)
    sql.execute(f"ALTER TABLE {sql.table(location)} CLUSTER BY ({names})")


def _optimize_note(writer: str, log_files_deleted: tuple[str, ...]) -> str:
    """Said when it matters: Delta's writer ran (not delta-rs), and what its commit deleted."""
    if not writer.startswith("Delta"):
        return ""
    note = f"written by {writer}"
    if log_files_deleted:
        note += (
            f"; Delta's post-commit log cleanup deleted {len(log_files_deleted)} expired log "
            "file(s)"
        )
    return note


def cleanup_logs_parameters(target: ModelTarget, ctx: RunContext) -> dict[str, Any]:
    """Log cleanup's settings as the history records them (a failed run records these alone).

    Args:
        target: The model.
        ctx: The run (unused: the retention is the model's).

    Returns:
        ``retention_days``.
    """
    return {"retention_days": target.config.log_retention_days}


def run_cleanup_logs(target: ModelTarget, ctx: RunContext) -> OpCounts:
    """Log cleanup with the model's log retention, recording the policy that differs."""
    c = target.config
    snapshot = ctx.snapshot or read_snapshot(target.location)
    with as_model_setting(c.model, "cleanup_logs"):
        # only what differs is written: the config's retentions where the table has none or
        # the package's own, Delta's default where the config dropped one (``policy``)
        changes = pending_policy(snapshot, c)
        result = cleanup_logs(
            target.location,
            retention_days=c.log_retention_days,
            dry_run=ctx.dry_run,
            record_policy=changes,
            audit=model_audit(c.model),
            # a dry run decides as the recorded policy will be; a real run reads it again
            snapshot=effective_snapshot(snapshot) if ctx.dry_run else snapshot,
        )
    return OpCounts(
        files_removed=result.files_found if ctx.dry_run else result.files_deleted,
        bytes_removed=result.bytes_found if ctx.dry_run else result.bytes_deleted,
        version_before=result.table_version,
        version_after=result.table_version,
        parameters={
            **cleanup_logs_parameters(target, ctx),
            "oldest_version_kept": result.oldest_version_kept,
        },
        note=unrecorded_note(c),
    )


def load_purge() -> Callable[..., Any]:
    """The purge op function, imported on first use."""
    from python_ops.ops.purge import purge

    return purge


def purge_parameters(target: ModelTarget, ctx: RunContext) -> dict[str, Any]:
    """The purge's settings as the history records them (a failed run records these alone).

    Args:
        target: The model.
        ctx: The run (unused: the ratio is the model's).

    Returns:
        ``deleted_ratio``.
    """
    return {"deleted_ratio": target.config.purge_deleted_ratio}


def run_purge(target: ModelTarget, ctx: RunContext) -> OpCounts:
    """Deletion-vector purge of the partitions above the model's deleted-row ratio."""
    c = target.config
    with as_model_setting(c.model, "purge"):
        p = load_purge()(
            target.location,
            deleted_ratio=c.purge_deleted_ratio,
            dry_run=ctx.dry_run,
            sql=ctx.sql,
            audit=model_audit(c.model),
            snapshot=ctx.snapshot,
        )
    params = {**purge_parameters(target, ctx), "writer": p.writer}
    if ctx.dry_run:
        return OpCounts(
            files_removed=p.files_to_rewrite,
            bytes_removed=p.bytes_to_rewrite,
            version_before=p.version_before,
            version_after=p.version_before,
            parameters=params,
        )
    return OpCounts(
        files_removed=p.files_removed,
        bytes_removed=p.bytes_removed,
        files_added=p.files_added,
        bytes_added=p.bytes_added,
        version_before=p.version_before,
        version_after=p.commit if p.commit is not None else p.version_before,
        parameters=params,
        note=f"written by {p.writer}" if p.writer else "",
    )


def load_stats() -> Callable[..., Any]:
    """The statistics op function, imported on first use."""
    from python_ops.ops.stats.run import compute_stats

    return compute_stats


def stats_parameters(target: ModelTarget, ctx: RunContext) -> dict[str, Any]:
    """Statistics upkeep's settings as the history records them (a failed run: these alone).

    Args:
        target: The model.
        ctx: The run (unused: the columns are the model's).

    Returns:
        ``watched_columns``.
    """
    return {"watched_columns": list(target.config.stats_watched_columns)}


def run_stats(target: ModelTarget, ctx: RunContext) -> OpCounts:
    """Statistics upkeep for the model's watched columns (``maintenance_stats: auto``)."""
    c = target.config
    with as_model_setting(c.model, "stats"):
        s = load_stats()(
            target.location,
            columns=c.stats_watched_columns,
            dry_run=ctx.dry_run,
            audit=model_audit(c.model),
        )
    params = {
        "watched_columns": list(s.watched_columns),
        "files_due": s.files_due,
        "files_updated": s.files_updated,
        "files_read": s.files_read,
        "stats_columns_after": s.stats_columns_after,
    }
    note = f"statistics of {s.files_updated} file(s) filled in ({s.files_read} read)"
    if s.stats_columns_after is not None:
        note += f"; delta.dataSkippingStatsColumns set to {s.stats_columns_after}"
    return OpCounts(
        version_before=s.read_version,
        version_after=s.commit_version if s.commit_version is not None else s.read_version,
        parameters=params,
        note=note if not ctx.dry_run else f"{s.files_due} file(s) lack statistics",
    )
