"""What a front end records when a model's build starts: the table's version, or nothing there.

The post-hook reads the build's own commits (``build_writes``) from the version before the
build: the adapter asks for it, and whether the table's location was empty, as the
materialization starts (``BuildFacts.version_before`` and ``location_was_empty``). Every build of
a maintained model pays for this, so it is asked at a cost that does not grow with the log:
a missing log is one ``stat``, a short one one listing of names, a long one its checkpoint's
pointer and the names after it (``head_version``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from python_ops.delta.log.log_files import LOG_DIR
from python_ops.delta.state.checkpoint_reader import last_checkpoint_version
from python_ops.errors import MaintenanceError
from python_ops.storage import Storage, is_remote, open_storage

# a commit's name as Delta's log pattern has it (Java's ``\\d``: ASCII digits), whole
_COMMIT_NAME = re.compile(r"[0-9]{20}\.json")


def location_is_empty(location: str) -> bool:
    """Whether nothing exists at a table location (no directory, file or link).

    True only for a local path, where one ``lstat`` says so; an object store's prefix is not
    asked (False: unknown). What a front end records as ``BuildFacts.location_was_empty``
    when a build starts.

    Args:
        location: The table location (path or ``file://`` URI).
    """
    if is_remote(location):
        return False
    path = location.removeprefix("file://")
    return not os.path.lexists(path)


def head_version(location: str | Storage) -> int | None:
    """The table's latest commit version (None: no table there yet).

    What a front end records as ``BuildFacts.version_before`` when a build starts, so every
    build of a maintained model pays for it: by the commits' names, as Delta lists its log
    (nothing statted or read but the checkpoint's pointer), at a cost that does not grow with
    the log. A log keeps every commit the log retention keeps (30 days: 720 commits and their
    checksums for an hourly build), so its whole listing does grow:

    - an object store lists from the newest checkpoint's version on (``_last_checkpoint``):
      one request, and the same greatest name as a listing of everything;
    - a local log that has grown past one listing's worth (``SHORT_LOG_BYTES``) is asked name
      by name from that version on, until the first missing one: Delta writes version N+1
      only after N exists, and reads no log with a hole in it;
    - a short log, a log without a checkpoint, or a pointer that does not hold (its commit
      gone): the names of the whole log, listed once.

    Args:
        location: The table (or its open storage).
    """
    try:
        storage = location if isinstance(location, Storage) else open_storage(location)
        found = None
        if storage.lists_key_ranges:
            found = _head_listed_from_checkpoint(storage)
        elif (size := storage.directory_bytes(LOG_DIR)) == 0:
            return None  # no log directory: no commit, nothing to list
        elif (size or 0) > SHORT_LOG_BYTES:
            found = _head_probed_from_checkpoint(storage)
        if found is not None:
            return found
        return _newest_commit(storage.list_names(LOG_DIR))
    except (MaintenanceError, OSError):
        return None


# a local log directory up to this size is listed in one go (ext4: up to about 150 names, 70
# versions): one listing of 53 names took 34 us here, the pointer and 10 names asked 46 us; a
# listing of 252 names 118 us, of 1,512 686 us (docs/benchmarks.md, "version before a build")
SHORT_LOG_BYTES = 8 * 1024
_MAX_PROBES = 200  # commits after a checkpoint asked one by one, before listing them all


def _newest_commit(names: Iterable[str]) -> int | None:
    # matched in C (hundreds of names), and the greatest name is the greatest version (fixed
    # width)
    newest = max(filter(_COMMIT_NAME.fullmatch, names), default=None)
    return None if newest is None else int(newest[:20])


def _head_listed_from_checkpoint(storage: Storage) -> int | None:
    """The greatest commit name at or after the checkpoint's (None: no pointer, or none)."""
    checkpoint = last_checkpoint_version(storage)
    if checkpoint is None:
        return None
    after = storage.list_range(LOG_DIR, start_after=f"{LOG_DIR}/{checkpoint:020d}")
    return _newest_commit(e.path.rpartition("/")[2] for e in after)


def _head_probed_from_checkpoint(storage: Storage) -> int | None:
    """The last of the commits that follow the checkpoint's one by one (None: not known)."""
    checkpoint = last_checkpoint_version(storage)
    if checkpoint is None:
        return None
    version = checkpoint
    for _ in range(_MAX_PROBES):
        if not storage.exists(f"{LOG_DIR}/{version + 1:020d}.json"):
            if version == checkpoint and not storage.exists(f"{LOG_DIR}/{version:020d}.json"):
                return None  # the pointer's own commit is gone: the listing says what is
            return version
        version += 1
    return None  # that many commits since a checkpoint: one listing is cheaper
