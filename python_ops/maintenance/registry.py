"""The op registry: each maintenance op declared once.

An ``OpSpec`` says which settings belong to the op (``settings``, from ``config``), how it
decides it is due from the table's snapshot (``due``), how the runner runs it for a model
(``run``) and how its result maps to the counts that history and reports keep (``OpCounts``),
and how a direct call with explicit options runs it (``invoke``: the CLI and the adapter). The
runner, ``due``, the CLI, the adapter and the report iterate over ``REGISTRY``; nothing else
lists the ops.
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from python_ops.delta.log_files import LogFileKind
from python_ops.delta.snapshot import Snapshot, read_snapshot
from python_ops.errors import ConfigError
from python_ops.maintenance.config import SETTINGS, Setting
from python_ops.maintenance.policy import (
    describe_changes,
    effective_snapshot,
    pending_policy,
    stale_policy,
    unrecorded_note,
)
from python_ops.maintenance.reclaim import vacuum_due
from python_ops.maintenance.targets import ModelTarget
from python_ops.ops.log_cleanup import (
    cleanup_logs,
    expiry_cutoff_ms,
    resolve_log_retention,
)
from python_ops.ops.results import VacuumResult
from python_ops.ops.vacuum import vacuum
from python_ops.spark_sessions import DeltaSql


class Status(StrEnum):
    """What happened to one op of one model."""

    SUCCEEDED = "succeeded"
    FAILED = "failed"
    NOT_DUE = "not_due"  # not run: see the reason
    SKIPPED = "skipped"  # not started: the run's time budget was used up


class Reason(StrEnum):
    """Why an op ran or did not; the outcome's ``detail`` says it in words."""

    DUE = "due"  # the table needs it
    REQUESTED = "requested"  # asked for by a run-operation or the CLI, due or not
    NOT_DUE = "not_due"  # the table does not need it
    DISABLED = "disabled"  # switched off by the model's config
    TOO_SOON = "too_soon"  # its minimum interval since the last run has not passed
    TIME_BUDGET = "time_budget"  # the run's time budget was used up
    ERROR = "error"  # deciding or running it failed


@dataclass(frozen=True)
class OpCounts:
    """What an op did, in the vocabulary of history and reports.

    Attributes:
        files_removed: Files deleted or removed from the table (or that would be, dry run).
        bytes_removed: Their bytes.
        files_added: Files written.
        bytes_added: Their bytes.
        version_before: The table version the op started from.
        version_after: The table version after it (None when it did not read one).
        parameters: The settings it ran with, for the history.
        note: How it ran, when that matters to people (VACUUM's mode and why, directories it
            kept); shown after what it did.
    """

    files_removed: int = 0
    bytes_removed: int = 0
    files_added: int = 0
    bytes_added: int = 0
    version_before: int | None = None
    version_after: int | None = None
    parameters: dict[str, Any] = field(default_factory=dict)
    note: str = ""


@dataclass(frozen=True)
class RunContext:
    """What the runner hands an op besides the model.

    Attributes:
        spark: The Spark session (VACUUM selects files with it).
        snapshot: The table's snapshot as read for the decision (None: the op reads it).
        dry_run: Report only.
        retention_hours: A VACUUM retention overriding the model's (still safety-checked).
        sql: Where Delta's own SQL would run (OPTIMIZE goes there when it has Delta); None:
            delta-rs in this process.
        vacuum_engine: Where VACUUM's selection runs (``vacuum``'s ``engine``): ``spark`` when
            the session is a cluster the caller attached to, else ``auto``.
    """

    spark: Any
    snapshot: Snapshot | None
    dry_run: bool
    retention_hours: float | None = None
    sql: DeltaSql | None = None
    vacuum_engine: str = "auto"


DueCheck = Callable[[ModelTarget, Snapshot, int], tuple[bool, str]]
Runner = Callable[[ModelTarget, RunContext], OpCounts]


@dataclass(frozen=True)
class OpSpec:
    """One maintenance op, declared once.

    Attributes:
        name: The op's name (settings ``maintenance_<name>_*``, history, ``--ops``).
        title: How people call it.
        due: (model, snapshot, now in ms) to (due, why).
        run: Runs it for a model with its config.
        load: Returns the op function, for direct calls (``invoke``); imported on first use so
            that a command needing one op does not load the others.
        needs_spark: The op takes a ``spark`` session.
        takes_sql: The op can hand its work to Delta's own SQL (``sql``).
    """

    name: str
    title: str
    due: DueCheck
    run: Runner
    load: Callable[[], Callable[..., Any]]
    needs_spark: bool = False
    takes_sql: bool = False

    @property
    def settings(self) -> tuple[Setting, ...]:
        """The model settings that belong to this op."""
        return tuple(s for s in SETTINGS if s.op == self.name)

    def invoke(
        self,
        location: str,
        *,
        spark: Any,
        model: str | None,
        sql: DeltaSql | None = None,
        **options: Any,
    ) -> Any:
        """Call the op directly with explicit options (the CLI's and the adapter's calls).

        Args:
            location: The table.
            spark: A Spark session (used by ops that need one).
            model: The dbt model, for messages.
            sql: Where Delta's own SQL would run (used by ops that can hand work to it).
            **options: The op's keyword arguments.

        Returns:
            The op's result.

        Raises:
            ConfigError: For an option the op does not take.
        """
        function = self.load()
        accepted = [
            p.name
            for p in inspect.signature(function).parameters.values()
            if p.kind is inspect.Parameter.KEYWORD_ONLY and p.name not in ("spark", "model", "sql")
        ]
        for key in options:
            if key not in accepted:
                raise ConfigError(
                    setting=key,
                    value=options[key],
                    fix=f"{self.name} takes: {', '.join(accepted)}.",
                    model=model,
                )
        if self.needs_spark:
            options["spark"] = spark
        if self.takes_sql:
            options["sql"] = sql
        return function(location, model=model, **options)


# The op parameter each model setting is passed as, to the ``maintenance_*`` key the user wrote.
_VACUUM_KEYS = {"retention_hours": "maintenance_vacuum_retention_hours"}
_OPTIMIZE_KEYS = {
    "zorder_by": "maintenance_zorder_by",
    "target_size_bytes": "maintenance_target_file_size",
    "min_small_files": "maintenance_min_small_files",
}
_CLEANUP_LOGS_KEYS = {"retention_days": "maintenance_log_retention_days"}


@contextmanager
def _named_as_configured(keys: Mapping[str, str]) -> Iterator[None]:
    """Re-raise an op's ``ConfigError`` about a parameter under the config key it came from.

    An op names its own parameter (``zorder_by``); a dbt user wrote ``maintenance_zorder_by``.
    """
    try:
        yield
    except ConfigError as err:
        key = keys.get(err.setting)
        if key is None:
            raise
        raise type(err)(setting=key, value=err.value, fix=err.fix, model=err.model) from err


# for the report's VACUUM dry run: its errors name the keys the user wrote, as the ops' do
named_as_configured = _named_as_configured
VACUUM_KEYS = _VACUUM_KEYS


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


def _vacuum_due(target: ModelTarget, snapshot: Snapshot, now_ms: int) -> tuple[bool, str]:
    # removed or untracked files older than the retention (``reclaim``: cost-bounded)
    with _named_as_configured(_VACUUM_KEYS):
        return vacuum_due(target, snapshot, now_ms)


def _run_vacuum(target: ModelTarget, ctx: RunContext) -> OpCounts:
    c = target.config
    # an explicit 0 is a retention (safety-checked like any other), not "unset"
    retention_hours = (
        c.vacuum_retention_hours if ctx.retention_hours is None else ctx.retention_hours
    )
    # a run-operation's own retention_hours argument keeps its name
    with _named_as_configured(_VACUUM_KEYS if ctx.retention_hours is None else {}):
        v = vacuum(
            target.location,
            spark=ctx.spark,
            retention_hours=retention_hours,
            allow_short_retention=c.vacuum_allow_short_retention,
            dry_run=ctx.dry_run,
            model=c.model,
            # the retention the package recorded follows the config: not a floor (``policy``)
            snapshot=effective_snapshot(ctx.snapshot or read_snapshot(target.location)),
            engine=ctx.vacuum_engine,
            mode=c.vacuum_mode,
            full_interval_days=c.vacuum_full_interval_days,
            listing_handoff="take",  # the due check's listing, when it made one
        )
    params = {
        "retention_hours": retention_hours,
        "allow_short_retention": c.vacuum_allow_short_retention,
        "mode": v.mode,
        "mode_reason": v.mode_reason,
        "dirs_kept": [{"path": k.path, "reason": k.reason} for k in v.dirs_kept],
    }
    return OpCounts(
        files_removed=v.files_found if ctx.dry_run else v.files_deleted,
        bytes_removed=v.bytes_found if ctx.dry_run else v.bytes_deleted,
        version_before=v.table_version,
        version_after=v.table_version,
        parameters=params,
        note=vacuum_note(v),
    )


def _clustering_due(target: ModelTarget, snapshot: Snapshot) -> tuple[bool, str]:
    """A clustered table: due after a clustering-column change, or when enough was written.

    Enough: ``maintenance_min_small_files`` files, or the target file size in bytes, written
    since the last clustering (files without ``clusteringProvider`` in the log).
    """
    from python_ops.ops.optimize.clustering import clustering_state
    from python_ops.ops.optimize.plan import ENGINE_DEFAULT_TARGET_BYTES
    from python_ops.storage import open_storage

    c = target.config
    state = clustering_state(open_storage(target.location), snapshot)
    if state.full:
        return True, (
            f"clustering: the clustering columns changed at version {state.columns_changed_at}; "
            "OPTIMIZE FULL re-clusters every file, once"
        )
    threshold = c.target_file_size_bytes or ENGINE_DEFAULT_TARGET_BYTES
    if state.unclustered_files >= c.min_small_files or (
        state.unclustered_files and state.unclustered_bytes >= threshold
    ):
        return True, (
            f"clustering: {state.unclustered_files} file(s), {state.unclustered_bytes} bytes "
            "written since the last clustering"
        )
    return False, (
        f"clustering: {state.unclustered_files} file(s) written since the last clustering "
        f"(min_small_files={c.min_small_files})"
    )


def _optimize_due(target: ModelTarget, snapshot: Snapshot, now_ms: int) -> tuple[bool, str]:
    from python_ops.delta.protocol import Writer
    from python_ops.ops.optimize.clustering import is_clustered
    from python_ops.ops.optimize.plan import plan_optimize

    c = target.config
    if is_clustered(snapshot):
        return _clustering_due(target, snapshot)
    with _named_as_configured(_OPTIMIZE_KEYS):
        plan = plan_optimize(
            target.location,
            snapshot=snapshot,
            # due = worth rewriting; the gate of the writer that runs (delta-rs or Delta's
            # SQL on the engine) is asked when the op runs
            writer=Writer.DELTA,
            zorder_by=list(c.zorder_by),
            target_size_bytes=c.target_file_size_bytes,
            min_small_files=c.min_small_files,
            model=c.model,
        )
    # Z-ordering a partition's only file (not above the target) changes no file's statistics
    work = [
        p
        for p in plan.work
        if not plan.zorder_by
        or len(p.bins) > 1
        or len(p.bins[0].files) > 1
        or p.bins[0].bytes > plan.target_size_bytes
    ]
    if work:
        kind = "Z-order" if plan.zorder_by else "compaction"
        files = sum(len(b.files) for p in work for b in p.bins)
        return True, f"{kind}: {files} file(s) in {len(work)} partition(s) worth rewriting"
    return False, f"nothing worth rewriting (min_small_files={c.min_small_files})"


def _load_optimize() -> Callable[..., Any]:
    from python_ops.ops.optimize.execute import optimize

    return optimize


def _run_optimize(target: ModelTarget, ctx: RunContext) -> OpCounts:
    optimize = _load_optimize()
    c = target.config
    params: dict[str, Any] = {
        "zorder_by": list(c.zorder_by),
        "target_size_bytes": c.target_file_size_bytes,
        "min_small_files": c.min_small_files,
    }
    with _named_as_configured(_OPTIMIZE_KEYS):
        o = optimize(
            target.location,
            zorder_by=list(c.zorder_by),
            target_size_bytes=c.target_file_size_bytes,
            min_small_files=c.min_small_files,
            dry_run=ctx.dry_run,
            sql=ctx.sql,
            model=c.model,
            snapshot=ctx.snapshot,
        )
    params["writer"] = o.writer
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
    )


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


def _cleanup_logs_due(target: ModelTarget, snapshot: Snapshot, now_ms: int) -> tuple[bool, str]:
    with _named_as_configured(_CLEANUP_LOGS_KEYS):
        changes = stale_policy(snapshot, target.config)
        retention = resolve_log_retention(
            effective_snapshot(snapshot).metadata.configuration, target.config.log_retention_days
        )
    if changes:  # log cleanup records the policy: the package's properties follow the config
        return (
            True,
            f"recorded retention to follow the config: {describe_changes(snapshot, changes)}",
        )
    if snapshot.checkpoint_version is None:
        return False, "no checkpoint yet (commits before one are never expired)"
    cutoff = expiry_cutoff_ms(now_ms, retention)
    expired = sum(
        1
        for f in snapshot.log_files
        if f.kind is LogFileKind.COMMIT
        and f.version is not None
        and f.version < snapshot.checkpoint_version
        and f.modification_time_ms <= cutoff
    )
    days = f"{retention.days:g} days"
    if expired:
        return True, f"{expired} commit file(s) older than {days} before a checkpoint"
    return False, f"no commit file older than {days} before a checkpoint"


def _run_cleanup_logs(target: ModelTarget, ctx: RunContext) -> OpCounts:
    c = target.config
    snapshot = ctx.snapshot or read_snapshot(target.location)
    with _named_as_configured(_CLEANUP_LOGS_KEYS):
        # only what differs is written: the config's retentions where the table has none or
        # the package's own, Delta's default where the config dropped one (``policy``)
        changes = pending_policy(snapshot, c)
        result = cleanup_logs(
            target.location,
            retention_days=c.log_retention_days,
            dry_run=ctx.dry_run,
            record_policy=changes,
            model=c.model,
            # a dry run decides as the recorded policy will be; a real run reads it again
            snapshot=effective_snapshot(snapshot) if ctx.dry_run else snapshot,
        )
    return OpCounts(
        files_removed=result.files_found if ctx.dry_run else result.files_deleted,
        bytes_removed=result.bytes_found if ctx.dry_run else result.bytes_deleted,
        version_before=result.table_version,
        version_after=result.table_version,
        parameters={
            "retention_days": c.log_retention_days,
            "oldest_version_kept": result.oldest_version_kept,
        },
        note=unrecorded_note(c),
    )


_PURGE_KEYS = {"deleted_ratio": "maintenance_purge_deleted_ratio"}


def _purge_due(target: ModelTarget, snapshot: Snapshot, now_ms: int) -> tuple[bool, str]:
    from python_ops.delta.deletes import deleted_rows

    if not any(f.deletion_vector for f in snapshot.files):
        return False, "no deletion vectors"
    if not any(f.stats for f in snapshot.files):
        snapshot = read_snapshot(target.location, version=snapshot.version, with_stats=True)
    ratio = target.config.purge_deleted_ratio
    partitions = deleted_rows(snapshot)
    due = [p for p in partitions if p.deleted_rows and p.deleted_share > ratio]
    if due:
        worst = max(p.deleted_share for p in due)
        return True, (
            f"{len(due)} partition(s) with more than {ratio:g} of their rows deleted (up to "
            f"{worst:.1%}); about {sum(p.reclaimable_bytes for p in due)} bytes to reclaim"
        )
    worst = max((p.deleted_share for p in partitions), default=0.0)
    return False, f"deleted rows at most {worst:.1%} of a partition (threshold {ratio:g})"


def _load_purge() -> Callable[..., Any]:
    from python_ops.ops.purge import purge

    return purge


def _run_purge(target: ModelTarget, ctx: RunContext) -> OpCounts:
    c = target.config
    with _named_as_configured(_PURGE_KEYS):
        p = _load_purge()(
            target.location,
            deleted_ratio=c.purge_deleted_ratio,
            dry_run=ctx.dry_run,
            sql=ctx.sql,
            model=c.model,
            snapshot=ctx.snapshot,
        )
    params = {"deleted_ratio": c.purge_deleted_ratio, "writer": p.writer}
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


REGISTRY: Mapping[str, OpSpec] = {
    spec.name: spec
    for spec in (
        OpSpec("vacuum", "VACUUM", _vacuum_due, _run_vacuum, lambda: vacuum, needs_spark=True),
        OpSpec(
            "optimize", "OPTIMIZE", _optimize_due, _run_optimize, _load_optimize, takes_sql=True
        ),
        OpSpec(
            "cleanup_logs",
            "expired-log cleanup",
            _cleanup_logs_due,
            _run_cleanup_logs,
            lambda: cleanup_logs,
        ),
        OpSpec(
            "purge",
            "deletion-vector purge",
            _purge_due,
            _run_purge,
            _load_purge,
            takes_sql=True,
        ),
    )
}
OPS: tuple[str, ...] = tuple(REGISTRY)


def op_spec(name: Any) -> OpSpec:
    """The registered op called ``name``.

    Raises:
        ConfigError: For an unknown op, naming the valid ones and the nearest.
    """
    spec = REGISTRY.get(str(name))
    if spec is None:
        near = difflib.get_close_matches(str(name), OPS, n=1)
        hint = f" Did you mean '{near[0]}'?" if near else ""
        raise ConfigError(setting="ops", value=name, fix=f"Choose from: {', '.join(OPS)}.{hint}")
    return spec


def check_ops(ops: Any) -> tuple[str, ...]:
    """Validate a list of op names (run-operation and CLI arguments); None means every op.

    Raises:
        ConfigError: For an unknown op, naming the valid ones.
    """
    names = [ops] if isinstance(ops, str) else list(ops or OPS)
    return tuple(op_spec(op).name for op in names)
