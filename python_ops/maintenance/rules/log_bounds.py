"""How old the oldest removed file and the oldest commit file of a table can be: kept, not read.

Two of the post-hook's decisions look for something old in the table's log: VACUUM for a
removed file (tombstone) older than its retention, log cleanup for a commit file older than
its retention. Reading the snapshot answers both, at the cost of its checkpoint and a listing
of the log, on every build. But one answer bounds the next ones:

- a removed file the snapshot holds was removed at its ``deletionTimestamp``; one removed after
  the snapshot was read, at ``T``, was removed at ``T`` or later;
- a commit file the listing saw was written at its ``mtime``; one written after ``T``, later.

So with ``removed_since_ms = min(T, the oldest deletionTimestamp)`` and ``commits_since_ms =
min(T, the oldest commit file's mtime)``, no later snapshot of the table holds an older one, and
nothing passes a retention ``R`` before ``since + R``. A decision that read the snapshot keeps
these bounds in the history (op ``log_bounds``, deferred to the command's one history commit,
and only when they changed), and the post-hook's later decisions use them instead of the
snapshot (``build_decisions``). A build that created its table where nothing existed proves
both from its start, with nothing read (``bounds_from_empty_location``); its post-hook keeps
that fact as one row (``empty_origin``), which ``recorded_bounds`` reads when no decision has
kept bounds of the table since.

What this can miss, only for a while and never into a deletion: a writer whose clock is behind
(a ``deletionTimestamp`` or a commit file's ``mtime`` older than when it was written) is found
when the bound runs out, at ``since + R`` at the latest, or by any run-operation, which always
reads the snapshot. The bounds belong to one table: a table replaced by another at the same
location (a new table id) is decided from its snapshot again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from python_ops.delta.log.log_files import LogFileKind
from python_ops.delta.state.snapshot import Snapshot
from python_ops.maintenance.records.history import HistoryStore, defer_proof, recorded_proof
from python_ops.maintenance.rules.empty_origin import ORIGIN_OP, recorded_origin
from python_ops.maintenance.rules.untracked_bound import CHECK_OP
from python_ops.maintenance.selection.targets import ModelTarget

BOUNDS_OP = "log_bounds"  # the history's op of the bounds a decision proved
# the history's rows that record what a decision proved, not an op's run
PROOF_OPS = frozenset({BOUNDS_OP, CHECK_OP, ORIGIN_OP})
# Newer bounds replace recorded ones of the same table at most this often: a table whose
# post-hook reads its snapshot on every build would otherwise add a history row per build.
# Recorded bounds never turn false, they only run out (``build_decisions`` then reads the
# snapshot again, and keeps what that proves).
REFRESH_MS = 3_600_000


@dataclass(frozen=True)
class LogBounds:
    """No removed file and no commit file of the table is older than these, from ``proved_at_ms``.

    Attributes:
        table_id: The table they belong to (``metaData.id``).
        proved_at_ms: When they were proved (the snapshot was read, or the build began).
        removed_since_ms: No removed file has an older ``deletionTimestamp``.
        commits_since_ms: No commit file has an older modification time.
    """

    table_id: str
    proved_at_ms: int
    removed_since_ms: int
    commits_since_ms: int


def bounds_from_snapshot(snapshot: Snapshot, *, now_ms: int) -> LogBounds:
    """The bounds a snapshot read at ``now_ms`` proves.

    Args:
        snapshot: The table's snapshot (its tombstones and the log files its listing saw).
        now_ms: When it was read (the decision's time).

    Returns:
        The bounds.
    """
    removed = min((t.deletion_timestamp_ms for t in snapshot.tombstones), default=now_ms)
    commits = min(
        (f.modification_time_ms for f in snapshot.log_files if f.kind is LogFileKind.COMMIT),
        default=now_ms,
    )
    return LogBounds(snapshot.metadata.table_id, now_ms, min(removed, now_ms), min(commits, now_ms))


def bounds_from_empty_location(*, table_id: str, empty_at_ms: int) -> LogBounds:
    """The bounds a location that was empty at ``empty_at_ms`` proves: everything is younger.

    Args:
        table_id: The table created there.
        empty_at_ms: When nothing existed at the location (the build's start).

    Returns:
        The bounds.
    """
    return LogBounds(table_id, empty_at_ms, empty_at_ms, empty_at_ms)


def recorded_bounds(
    history: HistoryStore | None, target: ModelTarget, *, table_id: str | None = None
) -> LogBounds | None:
    """The newest bounds the history holds for the model's table (None: none, or elsewhere).

    A decision's (op ``log_bounds``), else those of the build that created the table where
    nothing existed (``empty_origin``: everything younger than its start).

    Args:
        history: The history (None: nothing recorded).
        target: The model.
        table_id: The table they must belong to (None: any).

    Returns:
        The bounds, or None (none of that table).
    """
    values = recorded_proof(
        history, model=target.config.model, location=target.location, op=BOUNDS_OP
    )
    recorded = _bounds(values) if values is not None else None
    if recorded is not None and table_id in (None, recorded.table_id):
        return recorded
    origin = recorded_origin(history, target)
    if origin is not None and table_id in (None, origin.table_id):
        return bounds_from_empty_location(table_id=origin.table_id, empty_at_ms=origin.empty_at_ms)
    return None


def _bounds(values: Mapping[str, Any]) -> LogBounds | None:
    """A ``log_bounds`` row's parameters as bounds (None: a record this version cannot read)."""
    try:
        return LogBounds(
            str(values["table_id"]),
            int(values["proved_at_ms"]),
            int(values["removed_since_ms"]),
            int(values["commits_since_ms"]),
        )
    except (ValueError, KeyError, TypeError):
        return None  # the snapshot decides


def keep_bounds(
    history: HistoryStore | None,
    target: ModelTarget,
    bounds: LogBounds,
    *,
    invocation_id: str,
    how: str,
) -> None:
    """Keep ``bounds`` in the history (deferred), unless the recorded ones do as well.

    The recorded ones do when they are the same, or belong to the same table and were proved
    less than ``REFRESH_MS`` ago (still true; ``bounds`` only reach further).

    Args:
        history: The history (None: nothing is kept).
        target: The model.
        bounds: The bounds.
        invocation_id: The command that proved them.
        how: How they were proved (the history row's reason).
    """
    if history is None:
        return
    recorded = recorded_bounds(history, target, table_id=bounds.table_id)
    if recorded is not None:
        same = (recorded.removed_since_ms, recorded.commits_since_ms) == (
            bounds.removed_since_ms,
            bounds.commits_since_ms,
        )
        if same or bounds.proved_at_ms - recorded.proved_at_ms < REFRESH_MS:
            return
    defer_proof(
        history,
        invocation_id=invocation_id,
        model=target.config.model,
        location=target.location,
        op=BOUNDS_OP,
        parameters={
            "table_id": bounds.table_id,
            "proved_at_ms": bounds.proved_at_ms,
            "removed_since_ms": bounds.removed_since_ms,
            "commits_since_ms": bounds.commits_since_ms,
        },
        at_ms=bounds.proved_at_ms,
        reason=how,
    )
