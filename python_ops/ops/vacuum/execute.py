"""VACUUM's execution: delete what the plan selected, record the state, say what was done.

A ``Deleter`` deletes the plan's selection and says what it deleted as a ``Deletion`` (typed
counts, not a tuple): in this process on bounded threads (``delete.delete_selected``), or in
Spark tasks when the listing ran there (``cluster.delete_on_cluster``). A dry run deletes
nothing. After a real whole-table run that deleted everything it selected, the new
``_delta_log/_last_vacuum_info`` is written (``state``); never more is claimed.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from python_ops.ops.results import VacuumDiagnostics, VacuumKeptDir, VacuumResult
from python_ops.ops.vacuum.deleting.delete import delete_selected, group_by_prefix
from python_ops.ops.vacuum.deleting.kept import still_there
from python_ops.ops.vacuum.executors.cluster import delete_on_cluster
from python_ops.ops.vacuum.plan import VacuumPlan
from python_ops.ops.vacuum.rule.options import CandidateSource
from python_ops.ops.vacuum.rule.selection import SelectedPaths
from python_ops.ops.vacuum.sources.mode import next_state
from python_ops.ops.vacuum.sources.state import write_last_vacuum_info
from python_ops.ops.vacuum_modes import VacuumMode

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Deletion:
    """What a deleter deleted.

    Attributes:
        files: Files deleted.
        bytes: Their bytes.
        dirs: Directories deleted.
        dirs_kept: Selected directories kept because a writer filled them meanwhile.
        not_deleted: Selected paths that could not be deleted.
        tasks: Spark tasks that deleted (deletes in Spark tasks only).
        pids: Their process ids (deletes in Spark tasks only).
    """

    files: int = 0
    bytes: int = 0
    dirs: int = 0
    dirs_kept: tuple[VacuumKeptDir, ...] = ()
    not_deleted: tuple[str, ...] = ()
    tasks: int | None = None
    pids: tuple[int, ...] | None = None


class Deleter(Protocol):
    """Deletes a plan's selection (``plan.selected``, never empty when called)."""

    def __call__(self, plan: VacuumPlan, on_progress: Progress | None) -> Deletion:
        """Delete the plan's selection, calling ``on_progress`` with (done, total)."""
        ...


def delete_in_process(plan: VacuumPlan, on_progress: Progress | None) -> Deletion:
    """Delete in this process: files in bounded chunks on threads, then directories."""
    files, size, dirs, kept, failed = delete_selected(
        plan.storage,
        plan.selected,
        max_workers=plan.options.max_workers,
        on_progress=on_progress,
        progress_interval_s=plan.options.progress_interval_s,
        cutoff_ms=plan.cutoff_ms,
    )
    return Deletion(files, size, dirs, tuple(kept), tuple(failed))


@dataclass(frozen=True)
class ExecutorDeleter:
    """Delete in Spark tasks on the session's executors (where the listing ran).

    Attributes:
        spark: The Spark session.
    """

    spark: Any

    def __call__(self, plan: VacuumPlan, on_progress: Progress | None) -> Deletion:
        """Delete the plan's selection in Spark tasks; a failure is looked at from here."""
        counts = delete_on_cluster(
            self.spark,
            plan.storage,
            plan.selected,
            threads=plan.options.max_workers,
            on_progress=on_progress,
        )
        kept, failed = (
            still_there(plan.storage, plan.selected, cutoff_ms=plan.cutoff_ms)
            if counts.failures
            else ([], [])
        )
        return Deletion(
            counts.files,
            counts.bytes,
            counts.dirs,
            tuple(kept),
            tuple(failed),
            counts.tasks,
            counts.pids,
        )


def _deleted(
    plan: VacuumPlan, deleter: Deleter | None, spark: Any, on_progress: Progress | None
) -> Deletion:
    if plan.options.dry_run or not plan.selected:
        return Deletion()
    if deleter is None:
        on_executors = plan.source is CandidateSource.EXECUTORS
        deleter = ExecutorDeleter(spark) if on_executors else delete_in_process
    return deleter(plan, on_progress)


def _state_written(plan: VacuumPlan, deletion: Deletion) -> int | None:
    """The version recorded in ``_last_vacuum_info`` after a complete whole-table run, or None."""
    if plan.options.dry_run or deletion.not_deleted or plan.options.partition_filter is not None:
        return None
    state = next_state(plan.choice, now_ms=plan.now_ms)
    if state is not None and write_last_vacuum_info(plan.storage, state):
        return state.version
    return None


def execute(
    plan: VacuumPlan,
    *,
    spark: Any = None,
    deleter: Deleter | None = None,
    on_progress: Progress | None = None,
) -> VacuumResult:
    """Carry out a plan: delete its selection (unless a dry run), record the state.

    Args:
        plan: The plan (``plan_vacuum``).
        spark: The Spark session, for deletes in Spark tasks (a plan whose listing ran there).
        deleter: Deletes the selection (None: in Spark tasks where the listing ran, else in
            this process).
        on_progress: Called with (files done, files total) during deletion.

    Returns:
        What was found and deleted, with every selected path.
    """
    delete_started = time.perf_counter()
    deletion = _deleted(plan, deleter, spark, on_progress)
    written = _state_written(plan, deletion)
    diagnostics = _with_delete_tasks(plan.diagnostics, deletion)
    groups = group_by_prefix(plan.selected)  # one pass: the totals are the groups' sums
    choice, o, selected = plan.choice, plan.options, plan.selected
    return VacuumResult(  # every field measured: the plan's, the deletion's
        location=plan.storage.root,
        dry_run=o.dry_run,
        table_version=plan.table_version,
        retention_hours=plan.retention.hours,
        retention_source=plan.retention.source,
        retention_requested_hours=plan.retention.requested_hours,
        retention_check_overridden=plan.retention_check_overridden,
        cutoff_ms=plan.cutoff_ms,
        partition_filter=o.partition_filter,
        partitions_scanned=None if o.partition_filter is None else len(plan.roots),
        files_listed=plan.files_listed,
        symlinks_skipped=plan.symlinks_skipped,
        spellings_kept=plan.spellings_kept,
        files_found=sum(g.files for g in groups),
        bytes_found=sum(g.bytes for g in groups),
        dirs_found=sum(g.dirs for g in groups),
        files_deleted=deletion.files,
        bytes_deleted=deletion.bytes,
        dirs_deleted=deletion.dirs,
        delete_failures=len(deletion.not_deleted),
        identify_s=plan.identify_s,
        delete_s=time.perf_counter() - delete_started,
        paths=selected if isinstance(selected, SelectedPaths) else tuple(selected),
        by_prefix=groups,
        diagnostics=diagnostics,
        mode=choice.mode,
        mode_reason=choice.reason,
        dirs_kept=deletion.dirs_kept,
        paths_not_deleted=deletion.not_deleted,
        commit_range=choice.window.commit_range if choice.mode == VacuumMode.LITE else None,
        last_vacuum_version=written,
    )


def _with_delete_tasks(
    diagnostics: VacuumDiagnostics | None, deletion: Deletion
) -> VacuumDiagnostics | None:
    """The listing's diagnostics with the delete tasks', when the deletes ran in Spark tasks."""
    if diagnostics is None or deletion.tasks is None:
        return diagnostics
    return dataclasses.replace(
        diagnostics, num_delete_tasks=deletion.tasks, delete_pids=deletion.pids or ()
    )
