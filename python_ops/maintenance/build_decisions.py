"""After a build: prove that nothing is due without reading the table's snapshot.

The post-hook's decisions need the table's snapshot (its checkpoint and a listing of its log)
only when something may be due. Most builds leave nothing due, and three things the post-hook
has anyway prove it:

- the build's own commits (``build_writes``): what it added, and the newest version;
- the version checksum its writer left beside that version (``delta.version_checksum``): the
  table's live file count, metadata and protocol;
- bounds kept in the history: no removed file and no commit file is older than
  ``log_bounds``; no untracked file passes the retention before ``untracked_bound``.

From them, each op's rule, in the same terms as ``due_rules``:

- VACUUM: no removed file passes the retention before ``removed_since + R``, and the untracked
  bound holds (LITE: the first alone);
- OPTIMIZE (not clustered, no Z-order, no advisor): the build's last commit wrote every live
  file, fewer than ``REBUILT_MIN_FILES``; or the table has fewer live files than
  ``maintenance_min_small_files``, so no partition has that many small ones;
- log cleanup: no recorded retention to follow, and no commit file passes the log retention
  before ``commits_since + R``;
- purge: the protocol has no deletion vectors;
- statistics upkeep: never proved here (it reads the files' statistics).

Each answer is either "not due", with the same words as the snapshot's rule would give, or
"not known", and one "not known" sends the whole model to the snapshot (``runner``). No op
ever runs on what is read here: an op that is due reads the snapshot itself, and VACUUM's
protected set is built from every tombstone in it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from python_ops.delta.properties import TARGET_FILE_SIZE
from python_ops.delta.protocol import (
    CLUSTERING_FEATURES,
    FEATURES,
    Op,
    Writer,
    check_protocol,
    table_features,
)
from python_ops.delta.recorded_retentions import user_properties
from python_ops.delta.version_checksum import VersionChecksum, read_version_checksum
from python_ops.errors import MaintenanceError, UnsupportedFeatureError
from python_ops.invocation import Invocation
from python_ops.maintenance.build_writes import BuildWrites
from python_ops.maintenance.due import Decision, decided_without_table
from python_ops.maintenance.due_rules import REBUILT_MIN_FILES
from python_ops.maintenance.history import HistoryStore
from python_ops.maintenance.log_bounds import (
    LogBounds,
    bounds_from_empty_location,
    keep_bounds,
    recorded_bounds,
)
from python_ops.maintenance.op_keys import as_model_setting, model_words
from python_ops.maintenance.outcomes import Reason, Status
from python_ops.maintenance.policy import stale_policy_of
from python_ops.maintenance.reclaim import bounded_not_due, lite_not_due, trusted_bound
from python_ops.maintenance.registry import OPS
from python_ops.maintenance.runner import OpOutcome
from python_ops.maintenance.targets import ModelTarget
from python_ops.ops.log_cleanup import expiry_cutoff_ms, resolve_log_retention
from python_ops.ops.vacuum.retention import checked_retention
from python_ops.ops.vacuum_modes import VacuumMode
from python_ops.storage import open_storage
from python_ops.values import checked_number

DELETION_VECTORS = "deletionVectors"


@dataclass(frozen=True)
class BuiltTable:
    """What the post-hook knows of a table just built, without its snapshot.

    Attributes:
        target: The model.
        writes: The build's own commits.
        checksum: The writer's checksum of the newest version.
        features: The protocol's features.
        bounds: How old the oldest removed and commit files can be.
        now_ms: The decision's time.
        history: The maintenance history.
        invocation: The command it runs in.
    """

    target: ModelTarget
    writes: BuildWrites
    checksum: VersionChecksum
    features: frozenset[str]
    bounds: LogBounds
    now_ms: int
    history: HistoryStore | None
    invocation: Invocation | None

    @property
    def configuration(self) -> dict[str, str]:
        """The table's properties as the model's ops see them (the package's own left out)."""
        return user_properties(self.checksum.metadata.configuration)

    def rewrote_every_file(self) -> bool:
        """Whether the build's last commit is the newest version and added every live file."""
        commits = self.writes.commits
        last = commits[-1] if commits else None
        return (
            last is not None
            and last.version == self.checksum.version
            and 0 < self.checksum.num_files == last.files_added
        )


Rule = Callable[[BuiltTable], str | None]  # why the op is not due; None: not known


def _vacuum(built: BuiltTable) -> str | None:
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
    if retention.cutoff_ms(built.now_ms) > built.bounds.removed_since_ms:
        return None  # a removed file may have passed the retention
    older = f"older than the {retention.hours:g} h retention"
    if c.vacuum_mode is VacuumMode.LITE:
        return lite_not_due(older)
    facts = built.writes.facts
    bound, proof = trusted_bound(
        built.history,
        built.target,
        retention.hours,
        now_ms=built.now_ms,
        empty_at_ms=facts.started_at_ms if facts.location_was_empty else None,
        invocation=built.invocation,
    )
    return bounded_not_due(older, bound, proof) if bound is not None else None


def _target_size_ok(configuration: dict[str, str]) -> bool:
    if TARGET_FILE_SIZE not in configuration:
        return True
    try:
        checked_number(
            configuration[TARGET_FILE_SIZE], setting=TARGET_FILE_SIZE, minimum=1, whole=True
        )
    except MaintenanceError:
        return False
    return True


def _optimize(built: BuiltTable) -> str | None:
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
    if built.checksum.metadata.schema_missing or not _target_size_ok(built.configuration):
        return None  # the plan refuses it, and says why
    try:  # the plan's gate: a feature compaction refuses is reported by the plan
        check_protocol(
            built.checksum.protocol,
            Op.COMPACTION,
            location=built.target.location,
            writer=Writer.DELTA,
        )
    except UnsupportedFeatureError:
        return None
    where = " of the partitions this build wrote" if built.target.build_scope else ""
    return f"nothing{where} worth rewriting (min_small_files={c.min_small_files})"


def _cleanup_logs(built: BuiltTable) -> str | None:
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


def _purge(built: BuiltTable) -> str | None:
    return None if DELETION_VECTORS in built.features else "no deletion vectors"


RULES: dict[str, Rule] = {
    "vacuum": _vacuum,
    "optimize": _optimize,
    "cleanup_logs": _cleanup_logs,
    "purge": _purge,
}


def _bounds(
    target: ModelTarget,
    writes: BuildWrites,
    checksum: VersionChecksum,
    history: HistoryStore | None,
) -> tuple[LogBounds | None, bool]:
    """The bounds that hold for the table, and whether they are new (to keep when used)."""
    table_id = checksum.metadata.table_id
    recorded = recorded_bounds(history, target)
    if recorded is not None and recorded.table_id == table_id:
        return recorded, False
    facts = writes.facts
    if facts.location_was_empty:
        return bounds_from_empty_location(table_id=table_id, empty_at_ms=facts.started_at_ms), True
    return None, False


def _built_table(
    target: ModelTarget,
    writes: BuildWrites,
    *,
    history: HistoryStore | None,
    invocation: Invocation | None,
    now_ms: int,
) -> tuple[BuiltTable | None, bool]:
    """What is known of the table without its snapshot (None: not enough), bounds new."""
    if writes.head_version is None:
        return None, False
    checksum = read_version_checksum(open_storage(target.location), writes.head_version)
    if checksum is None:
        return None, False
    try:
        features = table_features(checksum.protocol, location=target.location).all
    except UnsupportedFeatureError:
        return None, False
    if any(name not in FEATURES for name in features):
        return None, False  # the snapshot's rules report what is not understood
    bounds, new = _bounds(target, writes, checksum, history)
    if bounds is None:
        return None, False
    built = BuiltTable(target, writes, checksum, features, bounds, now_ms, history, invocation)
    return built, new


def not_due_outcomes(target: ModelTarget, decisions: list[Decision]) -> list[OpOutcome]:
    """The outcomes of decisions none of which is due (nothing ran)."""
    c = target.config
    return [
        OpOutcome(c.model, d.op, Status.NOT_DUE, d.reason, d.detail, on_error=c.on_error)
        for d in decisions
    ]


def decide_from_build(
    target: ModelTarget,
    writes: BuildWrites,
    *,
    history: HistoryStore | None,
    invocation: Invocation | None,
    now_ms: int,
) -> list[Decision] | None:
    """Every op's decision after a build, when nothing is due; None: read the snapshot.

    Args:
        target: The model (its build scope already set).
        writes: The build's own commits.
        history: The maintenance history (intervals, bounds).
        invocation: The command it runs in.
        now_ms: The decision's time.

    Returns:
        One decision per op (none of them due), or None when any op may be due or a fact is
        missing (no checksum, no bounds, a feature not understood).
    """
    built, new_bounds = _built_table(
        target, writes, history=history, invocation=invocation, now_ms=now_ms
    )
    if built is None:
        return None
    decisions = []
    for op in OPS:
        settled = decided_without_table(target, op, history, now_ms / 1000)
        if settled is not None:
            decisions.append(settled)
            continue
        rule = RULES.get(op)
        why = rule(built) if rule is not None else None
        if why is None:
            return None
        decisions.append(Decision(op, Reason.NOT_DUE, why))
    if new_bounds:
        keep_bounds(
            history,
            target,
            built.bounds,
            invocation_id=invocation.id if invocation else "",
            how="the build created the table where nothing existed",
        )
    return decisions
