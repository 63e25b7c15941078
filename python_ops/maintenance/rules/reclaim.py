"""Whether VACUUM has anything to reclaim, estimated at a bounded cost.

VACUUM deletes two kinds of files: files the log removed (tombstones) once older than the
retention, and untracked files (written by jobs that failed or were killed before they
committed) once older than the retention. The log knows the first kind for free; the second
kind only a listing finds. The estimate:

1. an expired tombstone in the snapshot: due, nothing listed;
2. else, for a table on a local or mounted disk whose log knows at most ``LISTING_LIMIT`` files
   (live and removed), a VACUUM dry run on the snapshot already read (one listing of the table;
   the same selection as the real run, so the decision, ``maintenance_report``'s reclaimable
   bytes and what VACUUM then deletes agree); a listing that found nothing also bounds when an
   untracked file can next pass the retention (``untracked_bound``, kept in the history), and
   until then the decision lists nothing;
3. else (a table too large to list on every build, or any table on an object store, where a
   listing is requests paid for on every build): due, and the model's
   ``maintenance_vacuum_interval_hours`` (default 24) bounds it to one listing per interval.
   The decision itself lists no data prefix (the log was listed to read the snapshot already).

A model in ``maintenance_vacuum_mode: lite`` never deletes untracked files, so only step 1
applies to it; in ``auto`` mode steps 2 and 3 apply only when the run would be FULL (``auto``'s
rule: the last FULL run is ``maintenance_vacuum_full_interval_days`` old, or LITE cannot be
complete).

The dry run's listing is the decision's evidence: ``VacuumDue.evidence`` carries it to the run
the decision starts (``runner``), which selects from it instead of listing again (one listing
per decision; a commit in between makes the run list afresh).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from python_ops.delta.state.file_paths import FilePaths
from python_ops.delta.state.snapshot import Snapshot
from python_ops.invocation import Invocation
from python_ops.maintenance.configuration.op_keys import as_model_setting, model_words
from python_ops.maintenance.configuration.policy import effective_paths, effective_snapshot
from python_ops.maintenance.records.history import HistoryStore
from python_ops.maintenance.rules.empty_origin import recorded_origin
from python_ops.maintenance.rules.untracked_bound import (
    UntrackedBound,
    bound_from_empty_location,
    bound_from_listing,
    record_bound,
    recorded_bound,
)
from python_ops.maintenance.rules.wording import size_text
from python_ops.maintenance.selection.targets import ModelTarget
from python_ops.ops.audit import Audit
from python_ops.ops.vacuum import vacuum_retention
from python_ops.ops.vacuum.candidates import ListingEvidence
from python_ops.ops.vacuum.execute import execute
from python_ops.ops.vacuum.plan import plan_vacuum
from python_ops.ops.vacuum.rule.options import VacuumOptions
from python_ops.ops.vacuum.sources.mode import choose_mode
from python_ops.ops.vacuum_modes import VacuumMode
from python_ops.storage import is_remote, open_storage

# About ten 1,000-key LIST requests on an object store; a few milliseconds on a local disk.
LISTING_LIMIT = 10_000


@dataclass(frozen=True)
class VacuumDue:
    """VACUUM's due decision, with its evidence.

    Attributes:
        due: Whether VACUUM is due.
        why: Why, in words.
        evidence: The dry run's listing when it found untracked files, for the run it decides
            (``vacuum(evidence=...)``); None when nothing was listed or nothing follows.
    """

    due: bool
    why: str
    evidence: ListingEvidence | None = None


def trusted_bound(
    history: HistoryStore | None,
    target: ModelTarget,
    retention_hours: float,
    *,
    now_ms: int,
    empty_at_ms: int | None,
) -> tuple[UntrackedBound | None, str]:
    """The untracked bound a post-hook's decision may trust, and how it was proved ('' : none).

    The history's listing, while it holds; else the bound an empty location proves: this
    build's (``empty_at_ms``), or the one that created the table (``empty_origin``, kept by
    that build's post-hook: not kept here).
    """
    bound = recorded_bound(history, target)
    if bound is not None and bound.holds(now_ms=now_ms, retention_hours=retention_hours):
        return bound, f"listed {_utc(bound.listed_at_ms)}"
    if empty_at_ms is None:
        origin = recorded_origin(history, target)
        if origin is None:
            return None, ""
        empty_at_ms = origin.empty_at_ms
    bound = bound_from_empty_location(empty_at_ms=empty_at_ms, retention_hours=retention_hours)
    if not bound.holds(now_ms=now_ms, retention_hours=retention_hours):
        return None, ""
    return bound, f"the build began at {_utc(empty_at_ms)} where nothing existed"


def vacuum_due(
    target: ModelTarget,
    snapshot: Snapshot | FilePaths,
    now_ms: int,
    *,
    invocation: Invocation | None = None,
    history: HistoryStore | None = None,
    trust_bound: bool = False,
    empty_at_ms: int | None = None,
) -> VacuumDue:
    """VACUUM's due rule: removed or untracked files older than the retention exist.

    Args:
        target: The model (its retention settings and table location).
        snapshot: The table's snapshot as the runner read it, or the log's paths
            (``read_file_paths``: the checkpoint's files as columns; counted the same).
        now_ms: The current time in ms.
        invocation: The command it runs in (warnings once per command).
        history: Where a listing's ``untracked_bound`` is kept (None: not kept).
        trust_bound: Skip the listing while the history's bound holds (the post-hook, after
            every build); False lists (run-operations, the report: thorough on a schedule).
        empty_at_ms: When nothing existed at the table's location (the build that created it
            began then): with ``trust_bound`` and no recorded bound that holds, the bound that
            proves (``untracked_bound.bound_from_empty_location``), kept like a listing's.

    Returns:
        Due or not, why, and the listing a dry run made (its evidence).

    Raises:
        ConfigError: For a bad retention (named as the op names it: ``due_rules`` names the
            model's key).
        RetentionTooShortError: For a retention below a floor a user set on the table, without
            ``maintenance_vacuum_allow_short_retention``.
    """
    c = target.config
    paths = snapshot if isinstance(snapshot, FilePaths) else None
    head = snapshot.head if isinstance(snapshot, FilePaths) else snapshot
    seen = effective_snapshot(head)
    retention, _ = vacuum_retention(
        seen,
        c.vacuum_retention_hours,
        allow_short_retention=c.vacuum_allow_short_retention,
        invocation=invocation,
        words=model_words(c.model),
    )
    cutoff = retention.cutoff_ms(now_ms)
    older = f"older than the {retention.hours_text} retention"
    expired = _expired(head, paths, cutoff)
    if expired:
        return VacuumDue(True, f"{expired} removed file(s) {older}")
    if c.vacuum_mode is VacuumMode.LITE:  # LITE deletes removed files only: no listing to estimate
        return VacuumDue(False, lite_not_due(older))
    bound, proof = (  # nothing can expire yet
        trusted_bound(history, target, retention.hours, now_ms=now_ms, empty_at_ms=empty_at_ms)
        if trust_bound
        else (None, "")
    )
    if bound is not None:
        return VacuumDue(False, bounded_not_due(older, bound, proof))
    unlisted = _due_without_listing(
        target, seen, head, paths, cutoff=cutoff, now_ms=now_ms, older=older
    )
    if unlisted is not None:
        return unlisted
    due = _due_from_listing(
        target,
        seen if paths is None else effective_paths(paths),
        now_ms,
        older=older,
        invocation=invocation,
    )
    if due.due or due.evidence is None:
        return due
    listing = due.evidence.take(due.evidence.key)  # not due: nothing follows that would use it
    if history is not None and listing is not None:
        bound = bound_from_listing(
            listing, listed_at_ms=now_ms, cutoff_ms=cutoff, retention_hours=retention.hours
        )
        record_bound(history, target, bound, invocation_id=invocation.id if invocation else "")
    return VacuumDue(False, due.why)


def _expired(head: Snapshot, paths: FilePaths | None, cutoff: int) -> int:
    """How many files the log removed before ``cutoff`` (tombstones and checkpoint columns)."""
    expired = sum(1 for t in head.tombstones if t.deletion_timestamp_ms < cutoff)
    if paths is not None:
        import pyarrow.compute as pc

        expired += sum(pc.less(col.removed_at_ms, cutoff).true_count for col in paths.columns)
    return expired


def _due_without_listing(
    target: ModelTarget,
    seen: Snapshot,
    head: Snapshot,
    paths: FilePaths | None,
    *,
    cutoff: int,
    now_ms: int,
    older: str,
) -> VacuumDue | None:
    """The decision when untracked files are not listed for it; None: list them."""
    c = target.config
    if c.vacuum_mode is VacuumMode.AUTO:  # untracked files count only when this run would be FULL
        choice = choose_mode(
            open_storage(target.location),
            seen,
            mode=VacuumMode.AUTO,
            cutoff_ms=cutoff,
            now_ms=now_ms,
            partition_filter=None,
            full_interval_days=c.vacuum_full_interval_days,
        )
        if choice.mode == VacuumMode.LITE:
            return VacuumDue(
                False,
                f"nothing LITE would reclaim: no removed file {older}; untracked files wait for "
                f"the next FULL run ({choice.reason.removeprefix('auto: ')})",
            )
    if is_remote(target.location):
        return VacuumDue(
            True,
            "untracked files not estimated on object storage (no listing per decision): runs "
            "once per maintenance_vacuum_interval_hours",
        )
    known = len(head.files) + len(head.tombstones)
    if paths is not None:
        known += sum(len(col.live) + len(col.removed) for col in paths.columns)
    if known > LISTING_LIMIT:
        return VacuumDue(
            True,
            f"untracked files not estimated ({known} files in the log, above {LISTING_LIMIT} "
            "listed per decision): runs once per maintenance_vacuum_interval_hours",
        )
    return None


def _due_from_listing(
    target: ModelTarget,
    seen: Snapshot | FilePaths,
    now_ms: int,
    *,
    older: str,
    invocation: Invocation | None,
) -> VacuumDue:
    """The decision from a dry run of VACUUM: due when it finds untracked files to delete.

    Its evidence is the dry run's listing either way; the caller keeps it only when due.
    """
    c = target.config
    options = VacuumOptions(
        retention_hours=c.vacuum_retention_hours,
        allow_short_retention=c.vacuum_allow_short_retention,
        now_ms=now_ms,
        audit=Audit(enabled=False),  # an estimate for the decision, not a VACUUM run: unaudited
        keep_listing=True,  # the run it decides selects from this listing: one per decision
    )
    plan = plan_vacuum(
        open_storage(target.location),
        options=options,
        snapshot=seen,
        invocation=invocation,
        words=model_words(c.model),
    )
    found = execute(plan)  # a dry run: what the run would find
    if found.files_found:
        why = f"{found.files_found} untracked file(s) ({size_text(found.bytes_found)}) {older}"
        return VacuumDue(True, why, plan.listing)
    return VacuumDue(
        False, f"nothing to reclaim: no removed or untracked file {older}", plan.listing
    )


def lite_not_due(older: str) -> str:
    """Why VACUUM LITE is not due: ``older`` is ``older than the N h retention``."""
    return f"nothing to reclaim: no removed file {older} (LITE: untracked not looked for)"


def bounded_not_due(older: str, bound: UntrackedBound, proof: str) -> str:
    """Why VACUUM is not due while an untracked bound holds (``proof``: how it was proved)."""
    return (
        f"nothing to reclaim: no removed file {older}, and no untracked file can pass it "
        f"before {_utc(bound.not_before_ms)} ({proof})"
    )


def _utc(ms: int) -> str:
    # time's C struct, not a datetime with a zone: a post-hook's reasons format two of these
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(ms // 1000))


def hours_to_expiry(
    target: ModelTarget,
    snapshot: Snapshot,
    now_ms: int,
    *,
    invocation: Invocation | None = None,
) -> float | None:
    """Hours until the oldest removed file passes the retention (None: the log removed none).

    Untracked files are not counted: the log does not know when they were written.

    Raises:
        ConfigError: For a bad retention.
        RetentionTooShortError: As ``vacuum_due``.
    """
    if not snapshot.tombstones:
        return None
    c = target.config
    with as_model_setting(c.model):
        retention, _ = vacuum_retention(
            effective_snapshot(snapshot),
            c.vacuum_retention_hours,
            allow_short_retention=c.vacuum_allow_short_retention,
            invocation=invocation,
            words=model_words(c.model),
        )
    oldest = min(t.deletion_timestamp_ms for t in snapshot.tombstones)
    return max(0.0, (oldest - retention.cutoff_ms(now_ms)) / 3_600_000)
