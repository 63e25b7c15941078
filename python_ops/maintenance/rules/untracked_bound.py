"""When an untracked file can next pass VACUUM's retention: listed once, not on every build.

VACUUM's due check (``reclaim``) finds expired tombstones in the log for free; untracked files
(left by jobs that failed before they committed) only a listing finds, and the post-hook would
list every model's table after every build. But a listing that found nothing to reclaim also
proves when the next untracked file can pass the retention ``R``:

- a file it saw, unprotected and younger than the cutoff, passes it at its ``mtime + R``;
- a file written after the listing has ``mtime`` >= the listing's time ``T``: at ``T + R``.

So the earliest is ``not_before = min(T + R, min(mtime + R))``, and until then a listing can
find nothing new: the check records that bound in the history (op ``vacuum_check``, deferred
to the command's one history commit), and the post-hook's later decisions of the same table
with a retention of at least ``R`` skip the listing until ``not_before`` (run-operations and the
report always list: a run on a schedule is thorough). Tombstones are still counted from the
log on every decision. In steady state a table is listed once per retention period (a week
by default) instead of once per build.

A build that created its table where nothing existed (``BuildFacts.location_was_empty``: the
front end found no file, directory or link at the location when the build began) proves the
same without a listing: every file there was written after the build began at ``B``, so none
passes the retention before ``B + R`` (``bound_from_empty_location``), for any ``R``. The first
build of a table then lists nothing either, and its post-hook keeps that fact once for both
bounds it gives (``empty_origin``), not as a listing's row.

What this can miss, only for a while and never into a deletion: a file that appears with a
modification time older than the listing (copied with its times kept, or from a writer whose
clock is behind) is found at ``not_before`` at the latest; so is an empty directory made after
the listing. VACUUM itself (a run, a dry run, ``maintenance_report``) always lists.
"""

from __future__ import annotations

from dataclasses import dataclass

from python_ops.maintenance.records.history import HistoryStore, defer_proof, recorded_proof
from python_ops.maintenance.selection.targets import ModelTarget
from python_ops.ops.vacuum.candidates import KeptListing

CHECK_OP = "vacuum_check"  # the history's op of a due check's listing that found nothing


@dataclass(frozen=True)
class UntrackedBound:
    """A listing's proof that no untracked file passes the retention before ``not_before_ms``.

    Attributes:
        listed_at_ms: When the listing was made (the decision's time).
        not_before_ms: The earliest time an untracked file can pass the retention.
        retention_hours: The retention it was computed with (valid for this one or longer).
    """

    listed_at_ms: int
    not_before_ms: int
    retention_hours: float

    def holds(self, *, now_ms: int, retention_hours: float) -> bool:
        """Whether a decision at ``now_ms`` with ``retention_hours`` may skip the listing."""
        return now_ms < self.not_before_ms and retention_hours >= self.retention_hours


def bound_from_listing(
    listing: KeptListing, *, listed_at_ms: int, cutoff_ms: int, retention_hours: float
) -> UntrackedBound:
    """The bound a listing proves (it found nothing older than the cutoff to reclaim).

    Protected files are left unstatted by a local listing (null ``mtime``); a listing that
    statted them counts them too, which only brings the bound earlier (the safe side).

    Args:
        listing: The due check's listing (``path``, ``size``, ``mtime``, ``is_dir``).
        listed_at_ms: When it was made.
        cutoff_ms: The cutoff it was selected with (``listed_at_ms`` minus the retention).
        retention_hours: The retention.

    Returns:
        The bound.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    retention_ms = listed_at_ms - cutoff_ms
    entries = listing.entries
    not_before = listed_at_ms + retention_ms
    if entries.num_rows:
        mtime = entries.column("mtime")
        young = pc.and_(
            pc.invert(entries.column("is_dir")),
            pc.greater_equal(mtime, pa.scalar(cutoff_ms, pa.int64())),
        )
        oldest = pc.min(mtime.filter(pc.fill_null(young, False))).as_py()
        if oldest is not None:
            not_before = min(not_before, int(oldest) + retention_ms)
    return UntrackedBound(listed_at_ms, not_before, retention_hours)


def bound_from_empty_location(*, empty_at_ms: int, retention_hours: float) -> UntrackedBound:
    """The bound a location that was empty at ``empty_at_ms`` proves (nothing older in it).

    Args:
        empty_at_ms: When nothing existed at the location (the build's start).
        retention_hours: The retention.

    Returns:
        The bound: no untracked file passes the retention before ``empty_at_ms + R``.
    """
    return UntrackedBound(
        empty_at_ms, empty_at_ms + round(retention_hours * 3_600_000), retention_hours
    )


def recorded_bound(history: HistoryStore | None, target: ModelTarget) -> UntrackedBound | None:
    """The newest bound the history holds for the model's table (None: none, or elsewhere)."""
    values = recorded_proof(
        history, model=target.config.model, location=target.location, op=CHECK_OP
    )
    if values is None:
        return None
    try:
        return UntrackedBound(
            int(values["listed_at_ms"]),
            int(values["untracked_not_before_ms"]),
            float(values["retention_hours"]),
        )
    except (ValueError, KeyError, TypeError):
        return None  # a record this version cannot read: list again


def record_bound(
    history: HistoryStore,
    target: ModelTarget,
    bound: UntrackedBound,
    *,
    invocation_id: str,
    reason: str = "VACUUM's due check listed the table: nothing to reclaim",
) -> None:
    """Keep the bound in the history (deferred: written with the command's history commit).

    Args:
        history: The history.
        target: The model.
        bound: The bound.
        invocation_id: The command that proved it.
        reason: How it was proved (the history row's reason).
    """
    defer_proof(
        history,
        invocation_id=invocation_id,
        model=target.config.model,
        location=target.location,
        op=CHECK_OP,
        parameters={
            "listed_at_ms": bound.listed_at_ms,
            "untracked_not_before_ms": bound.not_before_ms,
            "retention_hours": bound.retention_hours,
        },
        at_ms=bound.listed_at_ms,
        reason=reason,
    )
