"""VACUUM's plan: retention, mode, protected set and selection, as a value nothing has run on.

As delta-rs's ``VacuumBuilder`` builds a ``VacuumPlan`` before ``execute`` deletes: the cutoff
from the retention (Delta's safety check), the mode (``mode.choose_mode``), the candidates from
one source (``candidates``) and the selection with the counting rule. Nothing is deleted or
written here; ``execute`` takes the plan.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict, Unpack

from python_ops.delta.state.file_paths import FilePaths, read_file_paths
from python_ops.delta.state.partitions import matching_partition_dirs
from python_ops.delta.state.snapshot import Snapshot
from python_ops.delta.table.features import Op
from python_ops.delta.table.properties import Retention
from python_ops.delta.table.protocol import check_protocol
from python_ops.invocation import Invocation
from python_ops.ops.results import VacuumDiagnostics, VacuumFile
from python_ops.ops.vacuum.candidates import READERS, ListingEvidence, Owned, Scope, hand_back
from python_ops.ops.vacuum.rule.options import CandidateSource, VacuumOptions
from python_ops.ops.vacuum.rule.retention import OverrideWords, vacuum_retention
from python_ops.ops.vacuum.sources.mode import ModeChoice, choose_mode
from python_ops.storage import Storage


class Given(TypedDict, total=False):
    """What a caller of VACUUM may have already, so the plan does not read or warn it again.

    Attributes:
        snapshot: The table's snapshot, or its paths (``read_file_paths``), if just read.
        evidence: The listing the due check made for this run (used when made for this
            version and filter).
        invocation: The command it runs in (its warnings are given once per command; absent:
            every time).
        words: How the caller names the table and the override in the warning of an allowed
            short retention (absent: the location and ``allow_short_retention``).
    """

    snapshot: Snapshot | FilePaths | None
    evidence: ListingEvidence | None
    invocation: Invocation | None
    words: OverrideWords | None


@dataclass(frozen=True)
class VacuumPlan:
    """What a VACUUM run deletes, and why (nothing deleted yet).

    Attributes:
        storage: The table's storage.
        options: The run's options.
        table_version: The snapshot version the protected set was computed from.
        retention: The retention used.
        retention_check_overridden: A retention below the table's minimum was allowed.
        now_ms: The run's time.
        cutoff_ms: Files older than this are eligible.
        choice: The mode and why.
        roots: Directories in scope (the partition filter's, or the root).
        source: Where the candidates came from.
        selected: The selected paths.
        files_listed: Files listed.
        symlinks_skipped: Symbolic links left alone.
        spellings_kept: Paths left out because they are not canonical.
        diagnostics: Where Spark tasks ran (EXECUTORS only).
        identify_s: Seconds spent reading the log, listing and selecting.
        listing: The listing made, for the run a due check decides (``keep_listing``).
    """

    storage: Storage
    options: VacuumOptions
    table_version: int
    retention: Retention
    retention_check_overridden: bool
    now_ms: int
    cutoff_ms: int
    choice: ModeChoice
    roots: tuple[str, ...]
    source: CandidateSource
    selected: Sequence[VacuumFile]
    files_listed: int
    symlinks_skipped: int
    spellings_kept: int
    diagnostics: VacuumDiagnostics | None
    identify_s: float
    listing: ListingEvidence | None = field(default=None, repr=False, compare=False)


def protected_paths(snapshot: Snapshot, cutoff_ms: int) -> set[str]:
    """Paths VACUUM must keep: live files, unexpired tombstones, their DV files and parents.

    Args:
        snapshot: The table snapshot.
        cutoff_ms: Tombstones deleted at or after this time are still protected.

    Returns:
        Relative paths (files and directories).
    """
    return set(FilePaths(snapshot).protected(cutoff_ms).to_pylist())


def _log_paths(storage: Storage, snapshot: Snapshot | FilePaths | None) -> Owned[FilePaths]:
    """The log's paths, owned by the plan (read here when the caller has none in hand)."""
    if snapshot is None:  # the log's paths only: no object per checkpoint row
        paths = read_file_paths(storage)
    else:
        paths = snapshot if isinstance(snapshot, FilePaths) else FilePaths(snapshot)
    hand_back(sum(len(c.live) + len(c.removed) for c in paths.columns))
    return Owned(paths)


def _mode(
    storage: Storage, head: Snapshot, o: VacuumOptions, *, cutoff_ms: int, now_ms: int
) -> ModeChoice:
    return choose_mode(
        storage,
        head,
        mode=o.mode.value,
        cutoff_ms=cutoff_ms,
        now_ms=now_ms,
        partition_filter=o.partition_filter,
        full_interval_days=o.full_interval_days,
    )


def _roots(storage: Storage, head: Snapshot, o: VacuumOptions) -> list[str]:
    """The directories in scope: the partition filter's (maybe none), else the root."""
    if o.partition_filter is None:
        return [""]
    return matching_partition_dirs(storage, head, o.partition_filter)


def _source(
    choice: ModeChoice, options: VacuumOptions, storage: Storage, roots: list[str]
) -> CandidateSource:
    if choice.mode == "lite":
        return CandidateSource.LOG
    if options.cluster_listing and storage.lists_on_executors and roots:
        return CandidateSource.EXECUTORS
    if options.inventory is not None:
        return CandidateSource.INVENTORY
    return CandidateSource.LISTING


def plan_vacuum(
    storage: Storage,
    *,
    options: VacuumOptions,
    spark: Any = None,
    **given: Unpack[Given],
) -> VacuumPlan:
    """Plan one VACUUM run: retention and cutoff, mode, candidates and their selection.

    Args:
        storage: The table's storage.
        options: The run's options.
        spark: A Spark session, for a selection or listing on Spark.
        **given: What the caller has already (``Given``: the snapshot or its paths, else they
            are read; the due check's listing; the command it runs in).

    Returns:
        The plan.

    Raises:
        MaintenanceError: A bad option (``ConfigError``), a short retention, LITE out of the
            log's reach, a log absent, unreadable or with an unsupported feature.
    """
    started = time.perf_counter()
    paths = _log_paths(storage, given.get("snapshot"))
    head = paths.peek().head
    check_protocol(head.protocol, Op.VACUUM, location=storage.root)
    o = options
    retention, overridden = vacuum_retention(
        head, o.retention_hours, allow_short_retention=o.allow_short_retention,
        invocation=given.get("invocation"), words=given.get("words"),
    )  # fmt: skip
    now = int(time.time() * 1000) if o.now_ms is None else o.now_ms
    cutoff = retention.cutoff_ms(now)
    choice = _mode(storage, head, o, cutoff_ms=cutoff, now_ms=now)
    roots = _roots(storage, head, o)
    source = _source(choice, o, storage, roots)
    scope = Scope(
        storage, head, paths, cutoff, roots, choice.window, o, spark, given.get("evidence")
    )
    found = READERS[source](scope)
    return VacuumPlan(
        storage=storage,
        options=o,
        table_version=head.version,
        retention=retention,
        retention_check_overridden=overridden,
        now_ms=now,
        cutoff_ms=cutoff,
        choice=choice,
        roots=tuple(roots),
        source=source,
        selected=found.selected,
        files_listed=found.files_listed,
        symlinks_skipped=found.symlinks_skipped,
        spellings_kept=found.spellings_kept,
        diagnostics=found.diagnostics,
        identify_s=time.perf_counter() - started,
        listing=found.listing,
    )
