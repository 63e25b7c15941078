"""Carry out a log cleanup plan: the checkpoint first, the selection, the deletes, the result."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from python_ops.delta.log.commits import list_log
from python_ops.delta.log.log_files import LogFile
from python_ops.delta.table.features import Writer
from python_ops.ops.log_cleanup.delete import delete_oldest_first, remove_stale_staged
from python_ops.ops.log_cleanup.plan import LogCleanupPlan, Selection, select_files
from python_ops.ops.log_cleanup.rules import planned_checkpoint
from python_ops.ops.results import LogCleanupResult

log = logging.getLogger(__name__)

Progress = Callable[[int, int], None]
# Who writes a checkpoint: the table location in, the version written out.
CheckpointWriter = Callable[[str], int]


@dataclass(frozen=True)
class Deleted:
    """What the deletes did.

    Attributes:
        files: Files deleted.
        bytes: Their bytes.
        not_deleted: Selected files that could not be deleted, oldest first.
    """

    files: int = 0
    bytes: int = 0
    not_deleted: tuple[str, ...] = ()


def checkpoint_writers() -> dict[Writer, CheckpointWriter]:
    """The real checkpoint writers: delta-rs, and a local Spark with Delta 4.4."""
    from python_ops.delta.writing.local_writer import writer as local_delta_writer
    from python_ops.delta.writing.writer import write_checkpoint

    return {
        Writer.DELTA_RS: write_checkpoint,
        Writer.DELTA: lambda t: local_delta_writer().checkpoint(t),
    }


def _checkpoint_first(
    plan: LogCleanupPlan, writers: dict[Writer, CheckpointWriter] | None
) -> tuple[int | None, list[LogFile], int | None]:
    """(the checkpoint written first or planned, the listing after it, the last checkpoint)."""
    files, last = list(plan.files), plan.last_checkpoint
    if plan.checkpointer is None:
        return None, files, last
    version = plan.snapshot.version
    if plan.options.dry_run:  # planned as if the checkpoint the real run writes existed
        return version, [*files, planned_checkpoint(version, plan.options.now_ms)], version
    write = (writers or checkpoint_writers())[plan.checkpointer]
    first = write(plan.storage.root)
    log.info(
        "cleanup_logs %s: %s wrote a checkpoint at version %d first",
        plan.storage.root,
        plan.checkpointer,
        first,
    )
    return first, list_log(plan.storage), first


def execute(
    plan: LogCleanupPlan,
    *,
    started: float,
    recorded: dict[str, str],
    on_progress: Progress | None = None,
    writers: dict[Writer, CheckpointWriter] | None = None,
) -> LogCleanupResult:
    """Write the checkpoint the plan needs, select, delete (unless a dry run), report.

    Args:
        plan: The plan.
        started: ``time.perf_counter()`` when the run started.
        recorded: Table properties the run recorded before planning.
        on_progress: Called with (files done, files total) after each deletion.
        writers: Checkpoint writers by ``Writer`` (None: the real ones).

    Returns:
        What was selected and deleted.
    """
    if plan.skipped_reason is not None:
        return _result(plan, started, recorded, Selection((), None, None, plan.skipped_reason))
    first, files, last = _checkpoint_first(plan, writers)
    selection = select_files(plan, files, last)
    deleted = Deleted()
    if not plan.options.dry_run and selection.selected:
        deleted = Deleted(*delete_oldest_first(plan.storage, list(selection.selected), on_progress))
    if not plan.options.dry_run and selection.skipped_reason is None:
        remove_stale_staged(
            plan.storage, latest_version=plan.snapshot.version, now_ms=plan.options.now_ms
        )
    return _result(plan, started, recorded, selection, first=first, last=last, deleted=deleted)


def _result(
    plan: LogCleanupPlan,
    started: float,
    recorded: dict[str, str],
    selection: Selection,
    *,
    first: int | None = None,
    last: int | None = None,
    deleted: Deleted | None = None,
) -> LogCleanupResult:
    done = deleted or Deleted()
    skipped = selection.skipped_reason
    return LogCleanupResult(
        location=plan.storage.root,
        dry_run=plan.options.dry_run,
        table_version=plan.snapshot.version,
        skipped_reason=skipped,
        retention_days=plan.retention.days,
        retention_source=plan.retention.source,
        cutoff_ms=plan.cutoff_ms,
        last_checkpoint_version=last if skipped is None or last is not None else None,
        checkpoint_first=first,
        checkpoint_not_written=plan.checkpoint_note,
        checkpoint_kept=selection.kept,
        oldest_version_kept=selection.oldest_kept,
        files_found=len(selection.selected),
        bytes_found=sum(f.size_bytes for f in selection.selected),
        files_deleted=done.files,
        bytes_deleted=done.bytes,
        delete_failures=len(done.not_deleted),
        properties_recorded=recorded,
        duration_s=time.perf_counter() - started,
        files=selection.selected,
        checkpoint_writer=None
        if first is None or plan.checkpointer is None
        else str(plan.checkpointer),
        paths_not_deleted=done.not_deleted,
    )
