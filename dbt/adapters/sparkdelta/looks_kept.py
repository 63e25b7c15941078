"""Tables' looks kept from one dbt command to the next, in the project's target directory.

A post-hook that ran no op knows the version it left its table at and the table's state there
(``left_at``); the command's end keeps those where they hold (``kept_looks.keep_look``: the log
directory's stamp, two names, the commit file), and the next command's first build start takes
them instead of listing each log and reading each checksum (``BuildClock``). The file is a
shortcut only: deleted, stale or unreadable, every table is read as before.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from python_ops.maintenance import (
    CommitFile,
    LookEntry,
    VersionChecksum,
    commit_file,
    entry_holds,
    is_remote,
    keep_look,
    load_looks,
    normalize_location,
    save_looks,
)

if TYPE_CHECKING:
    from dbt.adapters.sparkdelta.build_clock import StartedBuild
    from python_ops.maintenance import ModelMaintenance

LOOKS_FILE = "sparkdelta_kept_looks.json"


@dataclass(frozen=True)
class _Left:
    """Where a post-hook left its table, for the command's end.

    Attributes:
        version: The newest version the post-hook read.
        state: The table there.
        read: The commit file of ``version`` as the post-hook saw it, after reading it.
    """

    version: int
    state: VersionChecksum
    read: CommitFile | None


def left_at(done: ModelMaintenance) -> tuple[int, VersionChecksum] | None:
    """The version and state a post-hook that ran no op left its table at (None: not known).

    After a build whose own facts decided (nothing due, or skipped as having written too
    little): the newest commit the hook read and the table there, or, when the build made no
    commit, the version and checksum its start recorded. Where the snapshot decided (an op may
    have run), nothing: the state after an op is not known here.

    Args:
        done: What the post-hook's session did.
    """
    writes = done.build
    if writes is None or not (done.skipped or done.nothing_due):
        return None
    if writes.head_version is not None:
        return None if writes.state is None else (writes.head_version, writes.state)
    facts = writes.facts
    if facts.version_before is None or facts.checksum_before is None:
        return None
    return facts.version_before, facts.checksum_before


class LooksKept:
    """The looks file of one project: read by a command's first start, written at its end.

    Args:
        path: The file (None: no project, nothing kept).
    """

    def __init__(self, path: Callable[[], str | None]) -> None:
        self._path = path
        self._lock = threading.Lock()
        self._read: dict[str, LookEntry] = {}  # the file's looks as this command read them
        self._left: dict[str, _Left] = {}  # by location: where this command's post-hooks left

    def load(self) -> None:
        """Read the file (the command's first build start): its looks, unparsed, for ``take``."""
        path = self._path()
        looks = load_looks(path) if path else {}
        with self._lock:
            self._read = looks

    def take(self, location: str) -> LookEntry | None:
        """The file's look of a table this command builds (None: none), parsed by the caller.

        Taken out: its table is being built, so the look will not hold again; the command's end
        writes the file's other looks back as they were.

        Args:
            location: The table (normalized).
        """
        with self._lock:
            return self._read.pop(location, None)

    def finished(self, build: StartedBuild | None, location: str, done: ModelMaintenance) -> None:
        """Note where a post-hook left its table, for the command's end to keep.

        Only where the build's start looked (the table is at ``location``), on a local disk,
        after a hook that ran no op (``left_at``); the commit file is seen now, after the hook
        read it.

        Args:
            build: The build's facts as its start recorded them.
            location: Where the table is.
            done: What the post-hook's session did.
        """
        if build is None or not build.looked_at(location) or is_remote(location):
            return
        left = left_at(done)
        if left is None:
            return
        version, state = left
        key = normalize_location(location)
        read = commit_file(key, version)
        with self._lock:
            self._left[key] = _Left(version, state, read)

    def keep(self) -> int:
        """As the command ends: keep the looks that hold where its post-hooks left tables.

        Each a stamp of the log directory, then one name and the commit file (``keep_look``);
        the file's other looks stay as read where they still hold (one ``lstat`` each: a
        changed or removed table's look is dropped, so a wiped warehouse leaves nothing behind
        to read). Nothing is written when no hook noted a table.

        Returns:
            The looks kept from this command.
        """
        with self._lock:
            left, self._left = self._left, {}
            others = [e for k, e in self._read.items() if k not in left]  # other tables
        path = self._path() if left else None
        if not path:
            return 0
        others = [e for e in others if entry_holds(e)]  # a changed or gone table's: dropped
        looks = []
        for key, one in left.items():
            look = keep_look(key, version=one.version, state=one.state, read=one.read)
            if look is not None:
                looks.append(look)
        save_looks(path, looks, others)
        with self._lock:
            self._read = {}  # written: a later command of this process reads the file again
        return len(looks)
