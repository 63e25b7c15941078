"""Prove that nothing is due without reading the table's snapshot.

Deciding needs the table's snapshot (its checkpoint and a listing of its log) only when
something may be due. Most builds and most scheduled runs find nothing due, and a few small
reads prove it:

- the version checksum the writer left beside the newest version (``delta.state.version_checksum``):
  the table's live file count, metadata and protocol; after a build, the same state replayed
  from the build's commits (a table it created) or derived from the checksum before them (a
  rebuilt one: ``BuildWrites.state``), no file read;
- the newest commit: after a build, the build's own commits (``build_writes``, already read);
  in a run-operation, the commit at the head of a listing of the log;
- bounds kept in the history: no removed file and no commit file is older than
  ``log_bounds``; after a build, no untracked file passes the retention before
  ``untracked_bound``; a table whose build created it where nothing existed has both from
  that build's start, which its post-hook keeps as one row (``empty_origin``).

From them, each op's rule, in the same terms as ``due_rules``:

- VACUUM: no removed file passes the retention before ``removed_since + R``; and after a build
  the untracked bound holds (LITE: the first alone), in a run-operation a listing of the
  table's top directory finds no file older than the cutoff (``_all_young``);
- OPTIMIZE (not clustered, no Z-order, no advisor): the newest commit is a write that added
  every live file, fewer than ``REBUILT_MIN_FILES``; or the table has fewer live files than
  ``maintenance_min_small_files``, so no partition has that many small ones;
- log cleanup: no recorded retention to follow, and no commit file passes the log retention
  before ``commits_since + R`` (a run-operation's listing of the log gives the oldest exactly);
- purge: the protocol has no deletion vectors;
- statistics upkeep: never proved here (it reads the files' statistics).

Each answer is either "not due", with the same words as the snapshot's rule would give, or
"not known", and one "not known" sends the whole model to the snapshot (``session`` after a
build, ``runner`` in a run-operation). No op ever runs on what is read here: an op that is due
reads the snapshot itself, and VACUUM's protected set is built from every tombstone in it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from python_ops.delta.log.commits import commit_actions
from python_ops.delta.table.features import CLUSTERING_FEATURES, Op, Writer
from python_ops.delta.table.protocol import check_protocol
from python_ops.errors import MaintenanceError
from python_ops.invocation import Invocation
from python_ops.maintenance.configuration.op_keys import as_model_setting, model_words
from python_ops.maintenance.configuration.policy import stale_policy_of
from python_ops.maintenance.decisions.due import Decision, decided_without_table
from python_ops.maintenance.facts.build_writes import BuildWrites, build_commit
from python_ops.maintenance.facts.layout import ROW_LEVEL_OPERATIONS
from python_ops.maintenance.records.history import HistoryStore
from python_ops.maintenance.records.outcomes import Reason
from python_ops.maintenance.rules.due_rules import REBUILT_MIN_FILES
from python_ops.maintenance.rules.empty_origin import EmptyOrigin, record_origin
from python_ops.maintenance.rules.known_table import KnownTable, known_table, listed_head
from python_ops.maintenance.rules.reclaim import (
    LISTING_LIMIT,
    bounded_not_due,
    lite_not_due,
    trusted_bound,
)
from python_ops.maintenance.runs.registry import OPS
from python_ops.maintenance.selection.targets import ModelTarget
from python_ops.ops.log_cleanup import expiry_cutoff_ms, resolve_log_retention
from python_ops.ops.optimize.planning.plan import target_file_size
from python_ops.ops.vacuum.rule.retention import checked_retention
from python_ops.ops.vacuum.sources.listing import is_hidden
from python_ops.ops.vacuum_modes import VacuumMode
from python_ops.storage import Storage, is_remote, open_storage

DELETION_VECTORS = "deletionVectors"


Rule = Callable[[KnownTable], str | None]  # why the op is not due; None: not known


def _vacuum(built: KnownTable) -> str | None:
    c = built.target.config
    try:
        with as_model_setting(c.model, "vacuum"):
            retention, _ = checked_retention(
                built.configuration,
                built.target.location,
                c.vacuum_retention_hours,
                allow_short_retention=c.vacuum_allow_short_retention,
                invocation=built.invocation,
                words=model_words(c.model),
            )
    except MaintenanceError:
        return None  # the snapshot's rule reports it
    cutoff = retention.cutoff_ms(built.now_ms)
    if cutoff > built.bounds.removed_since_ms:
        return None  # a removed file may have passed the retention
    older = f"older than the {retention.hours_text} retention"
    if c.vacuum_mode is VacuumMode.LITE:
        return lite_not_due(older)
    if built.thorough:
        return (
            f"nothing to reclaim: no removed or untracked file {older}"
            if _all_young(built, cutoff)
            else None
        )
    bound, proof = trusted_bound(
        built.history,
        built.target,
        retention.hours,
        now_ms=built.now_ms,
        empty_at_ms=built.empty_at_ms,
    )
    return bounded_not_due(older, bound, proof) if bound is not None else None


def _all_young(built: KnownTable, cutoff_ms: int) -> bool:
    """A run-operation's listing: every file VACUUM could delete is younger than the cutoff.

    One listing of the table's top directory (Delta's hidden names skipped, as VACUUM skips
    them). VACUUM deletes no file younger than its cutoff, protected or not, so when every
    file is, it has nothing to reclaim whatever the snapshot protects. A directory (partitions,
    empty directories VACUUM may remove), a link, a table on an object store or one too large
    to list per decision: not known here.
    """
    if is_remote(built.target.location) or built.checksum.num_files > LISTING_LIMIT:
        return False
    partition_columns = built.checksum.metadata.partition_columns
    for entry in built.storage.list_dir(""):
        if is_hidden(entry.path.rsplit("/", 1)[-1], partition_columns):
            continue
        if entry.is_dir or entry.is_symlink or entry.modification_time_ms < cutoff_ms:
            return False
    return True


def _optimize(built: KnownTable) -> str | None:
    c = built.target.config
    clustered = bool(built.features & set(CLUSTERING_FEATURES))
    chosen = c.auto_choice is not None or c.zorder_auto or c.cluster_auto
    if chosen or c.zorder_by or c.cluster_by or clustered:
        return None
    files = built.checksum.num_files
    if built.rewrote_every_file() and files < REBUILT_MIN_FILES:
        return (
            f"just rebuilt: version {built.checksum.version} wrote all {files} file(s) of the "
            f"table; compaction waits for {REBUILT_MIN_FILES} (as Delta's auto compaction), "
            "since the next full build replaces them"
        )
    if files >= c.min_small_files:
        return None  # a partition may hold that many small files: the plan decides
    if built.checksum.metadata.schema_missing:
        return None  # the plan refuses it, and says why
    try:  # the plan's checks: a size or a feature it refuses is reported by the plan
        target_file_size(built.checksum.metadata.configuration, c.target_file_size_bytes)
        check_protocol(
            built.checksum.protocol,
            Op.COMPACTION,
            location=built.target.location,
            writer=Writer.DELTA,
        )
    except MaintenanceError:
        return None
    where = " of the partitions this build wrote" if built.target.build_scope else ""
    return f"nothing{where} worth rewriting (min_small_files={c.min_small_files})"


def _cleanup_logs(built: KnownTable) -> str | None:
    c = built.target.config
    checksum = built.checksum
    try:
        with as_model_setting(c.model, "cleanup_logs"):
            configuration = checksum.metadata.configuration
            if stale_policy_of(checksum.protocol, configuration, built.target.location, c):
                return None  # due: the recorded retention follows the config
            retention = resolve_log_retention(built.configuration, c.log_retention_days)
    except MaintenanceError:
        return None
    if expiry_cutoff_ms(built.now_ms, retention) >= built.bounds.commits_since_ms:
        return None  # a commit file may have passed the retention
    return f"no commit file older than {retention.days:g} days before a checkpoint"


def _purge(built: KnownTable) -> str | None:
    return None if DELETION_VECTORS in built.features else "no deletion vectors"


RULES: dict[str, Rule] = {
    "vacuum": _vacuum,
    "optimize": _optimize,
    "cleanup_logs": _cleanup_logs,
    "purge": _purge,
}


def _rebuilt_zorder(known: KnownTable, settled: Decision) -> bool:
    """OPTIMIZE too soon for a clustered model whose build just rewrote every file."""
    c = known.target.config
    return (
        settled.op == "optimize"
        and settled.reason is Reason.TOO_SOON
        and bool(c.zorder_by or c.zorder_auto or c.cluster_by or c.cluster_auto)
        and known.rewrote_every_file()
        and known.last_commit is not None
        and known.last_commit.operation not in ROW_LEVEL_OPERATIONS
    )


def _decide(known: KnownTable) -> list[Decision] | None:
    """Every op's decision, when none is due; None: any may be."""
    decisions = []
    for op in OPS:
        settled = decided_without_table(known.target, op, known.history, known.now_ms / 1000)
        if settled is not None and _rebuilt_zorder(known, settled):
            return None  # the snapshot decides whether the interval gives way (``due``)
        if settled is not None:
            decisions.append(settled)
            continue
        rule = RULES.get(op)
        why = rule(known) if rule is not None else None
        if why is None:
            return None
        decisions.append(Decision(op, Reason.NOT_DUE, why))
    return decisions


def decide_from_build(
    target: ModelTarget,
    writes: BuildWrites,
    *,
    storage: Storage,
    history: HistoryStore | None,
    invocation: Invocation | None,
    now_ms: int,
) -> list[Decision] | None:
    """Every op's decision after a build, when nothing is due; None: read the snapshot.

    Args:
        target: The model (its build scope already set).
        writes: The build's own commits.
        storage: The table's storage (the one its commits were read from).
        history: The maintenance history (intervals, bounds).
        invocation: The command it runs in.
        now_ms: The decision's time.

    Returns:
        One decision per op (none of them due), or None when any op may be due or a fact is
        missing (no checksum, no bounds, a feature not understood).
    """
    if writes.head_version is None:
        return None
    facts = writes.facts
    known = known_table(
        target,
        writes.head_version,
        storage=storage,
        history=history,
        invocation=invocation,
        now_ms=now_ms,
        last_commit=writes.commits[-1] if writes.commits else None,
        empty_at_ms=facts.started_at_ms if facts.location_was_empty else None,
        state=writes.state,
    )
    if known is None or (decisions := _decide(known)) is None:
        return None
    if facts.location_was_empty and history is not None:
        # one fact for both bounds, kept once (the runner keeps it when it reads the snapshot)
        origin = EmptyOrigin(known.checksum.metadata.table_id, facts.started_at_ms)
        record_origin(history, target, origin, invocation_id=invocation.id if invocation else "")
    return decisions


def decide_from_log(
    target: ModelTarget,
    *,
    history: HistoryStore | None,
    invocation: Invocation | None,
    now_ms: int,
) -> list[Decision] | None:
    """A run-operation's decisions without the snapshot, when nothing is due; None: read it.

    The head version and the oldest commit file from a listing of the log, the head's
    checksum and commit, the history's bound of removed files; VACUUM lists the table's top
    directory (a run-operation always looks for untracked files) instead of trusting the
    untracked bound, and finds nothing to reclaim only when every file there is younger than
    its cutoff (VACUUM deletes no younger file, whatever the log says of it).

    Args:
        target: The model.
        history: The maintenance history (intervals, bounds).
        invocation: The command it runs in.
        now_ms: The decision's time.

    Returns:
        One decision per op (none of them due), or None.
    """
    storage = open_storage(target.location)
    listed = listed_head(storage)
    if listed is None:
        return None
    head, oldest = listed
    try:
        last = build_commit(head, commit_actions(storage, head))
    except (OSError, MaintenanceError):
        return None  # gone since the listing (cleaned up): the snapshot decides
    known = known_table(
        target,
        head,
        storage=storage,
        history=history,
        invocation=invocation,
        now_ms=now_ms,
        last_commit=last,
        thorough=True,
    )
    if known is None:
        return None
    # the oldest commit file as listed now, not as recorded
    return _decide(replace(known, bounds=replace(known.bounds, commits_since_ms=oldest)))
