"""What is known of a table without its snapshot: its newest checksum, commit and bounds.

The facts ``build_decisions`` decides from (``KnownTable``), gathered with a few small reads:
the checksum file of the newest version (or, for a table its build created, the same state
replayed from the build's commits), the protocol's features (a feature this project does
not know leaves the table to the snapshot, whose rules report it), and the bounds of its
removed and commit files the history keeps (or an empty location proves).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from python_ops.delta.log.log_files import LOG_DIR
from python_ops.delta.state.version_checksum import VersionChecksum, read_version_checksum
from python_ops.delta.table.features import FEATURES
from python_ops.delta.table.protocol import table_features
from python_ops.delta.table.recorded_retentions import user_properties
from python_ops.errors import UnsupportedFeatureError
from python_ops.invocation import Invocation
from python_ops.maintenance.facts.build_writes import BuildCommit
from python_ops.maintenance.records.history import HistoryStore
from python_ops.maintenance.rules.log_bounds import (
    LogBounds,
    bounds_from_empty_location,
    recorded_bounds,
)
from python_ops.maintenance.selection.targets import ModelTarget
from python_ops.storage import Storage

_COMMIT_NAME = re.compile(r"(?:^|/)(\d{20})\.json$")


@dataclass(frozen=True)
class KnownTable:
    """What is known of a table without its snapshot.

    Attributes:
        target: The model.
        storage: Its table's storage.
        checksum: The writer's checksum of the newest version, or the same state replayed
            from the whole log (``replayed_checksum``).
        features: The protocol's features.
        bounds: How old the oldest removed and commit files can be.
        now_ms: The decision's time.
        history: The maintenance history.
        invocation: The command it runs in.
        last_commit: The newest version's commit, when it is a write (a build's, or the one a
            run-operation finds at the head); None: a maintenance commit, or not read.
        configuration: The checksum's table properties as the model's ops see them (the
            package's own left out: ``user_properties``; VACUUM's and log cleanup's rules both
            read them).
        empty_at_ms: When nothing existed at the location (a first build began then).
        thorough: A run-operation's decision: VACUUM lists the table (the post-hook's trusts
            the untracked bound instead).
    """

    target: ModelTarget
    storage: Storage
    checksum: VersionChecksum
    features: frozenset[str]
    bounds: LogBounds
    now_ms: int
    history: HistoryStore | None
    invocation: Invocation | None
    last_commit: BuildCommit | None
    configuration: dict[str, str]
    empty_at_ms: int | None = None
    thorough: bool = False

    def rewrote_every_file(self) -> bool:
        """Whether the newest version is a write that added every live file."""
        last = self.last_commit
        return (
            last is not None
            and last.version == self.checksum.version
            and 0 < self.checksum.num_files == last.files_added
        )


def known_table(
    target: ModelTarget,
    head: int,
    *,
    storage: Storage,
    history: HistoryStore | None,
    invocation: Invocation | None,
    now_ms: int,
    last_commit: BuildCommit | None,
    empty_at_ms: int | None = None,
    thorough: bool = False,
    state: VersionChecksum | None = None,
) -> KnownTable | None:
    """What is known of the table at version ``head`` (None: not enough).

    The table's state is ``state`` when it is of version ``head`` (replayed from the whole
    log), else the checksum file's. Its bounds are the history's (``recorded_bounds``), else
    those the build's empty location proves (``empty_at_ms``; its post-hook keeps that fact:
    ``empty_origin``).
    """
    if state is not None and state.version == head:
        checksum: VersionChecksum | None = state
    else:
        checksum = read_version_checksum(storage, head)
    if checksum is None:
        return None
    try:
        features = table_features(checksum.protocol, location=target.location).all
    except UnsupportedFeatureError:
        return None
    if any(name not in FEATURES for name in features):
        return None  # the snapshot's rules report what is not understood
    table_id = checksum.metadata.table_id
    bounds = recorded_bounds(history, target, table_id=table_id)
    if bounds is None:
        if empty_at_ms is None:
            return None
        bounds = bounds_from_empty_location(table_id=table_id, empty_at_ms=empty_at_ms)
    return KnownTable(
        target,
        storage,
        checksum,
        features,
        bounds,
        now_ms,
        history,
        invocation,
        last_commit,
        user_properties(checksum.metadata.configuration),
        empty_at_ms=empty_at_ms,
        thorough=thorough,
    )


def listed_head(storage: Storage) -> tuple[int, int] | None:
    """The newest commit version and the oldest commit file's time, from one listing of the log.

    Args:
        storage: The table's storage.

    Returns:
        (head version, oldest commit file's modification time in ms); None: no commit listed.
    """
    scan = storage.scan_dir(LOG_DIR)  # names and times
    commits = [
        (int(m.group(1)), mtime)
        for path, mtime, is_dir in zip(scan.paths, scan.mtimes, scan.is_dir, strict=True)
        if not is_dir and mtime is not None and (m := _COMMIT_NAME.search(path)) is not None
    ]
    if not commits:
        return None
    return max(v for v, _ in commits), min(t for _, t in commits)
