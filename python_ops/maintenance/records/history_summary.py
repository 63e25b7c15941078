"""The last runs of a history version, kept beside the history so a process need not read it.

The first post-hook of a dbt process needs the newest counted run of each (model, op)
(``history_last``). The history keeps a row per op run, per skip and per proof for as long as it
lives, so reading it all grows with the project's age, not only its size (a first build of
1,000 models keeps 2,010 rows). The process that appends knows the last runs after its own commit
(it read them, and remembers what it wrote), so it writes them down, in a file beside the
history's log, for the version its commit made.

A reader uses the file only for the version it names, and only while that version is the
history's newest commit, the very file (device, inode, size, status-change time: a table
deleted and made again, or copied, has other ones). Anything else (no file, another version, a
commit since, a file that does not parse, an object store) reads the history as before.
The writer names a version only when its commit followed the version it had read with no
other commit between (``HistoryStore``).

The file's name starts with ``_``: Delta's VACUUM (and this package's) never lists it, and
Delta's readers never read it. It is written whole to a temporary name and renamed into place.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import uuid
from collections.abc import Mapping
from dataclasses import dataclass

from python_ops.delta.log.json_text import loads_bytes
from python_ops.delta.log.log_files import LOG_DIR
from python_ops.maintenance.facts.build_start import head_version
from python_ops.maintenance.records.history_last import LastRun
from python_ops.storage import is_remote

SUMMARY_NAME = "_sparkdelta_last_runs.json"
_FORMAT = 1


@dataclass(frozen=True, slots=True)
class HeadCommit:
    """The history's newest commit, as one ``lstat`` of its file saw it.

    Attributes:
        version: Its version.
        device: The file's device.
        inode: The file's inode.
        size: Its bytes.
        ctime_ns: Its status-change time (no writer sets it).
    """

    version: int
    device: int
    inode: int
    size: int
    ctime_ns: int

    def identity(self) -> list[int]:
        """Its fields as the summary file names the commit it was written for."""
        return [self.version, self.device, self.inode, self.size, self.ctime_ns]


# the state before a history's first commit: no rows; a commit that follows it is version 0
BEFORE_FIRST = HeadCommit(-1, -1, -1, -1, -1)


def head_commit(location: str) -> HeadCommit | None:
    """The newest commit of the history at ``location`` (None: none, or not a local path)."""
    if is_remote(location):
        return None
    version = head_version(location)
    return None if version is None else commit_at(location, version)


def commit_at(location: str, version: int) -> HeadCommit | None:
    """The commit file of ``version`` as one ``lstat`` sees it (None: not there, not a file)."""
    root = location.removeprefix("file://")
    try:
        seen = os.lstat(os.path.join(root, LOG_DIR, f"{version:020d}.json"))
    except OSError:
        return None  # cleaned away between the listing and here: not known
    if not stat.S_ISREG(seen.st_mode):
        return None
    return HeadCommit(version, seen.st_dev, seen.st_ino, seen.st_size, seen.st_ctime_ns)


def _path(location: str) -> str:
    return os.path.join(location.removeprefix("file://"), SUMMARY_NAME)


def read_summary(location: str, head: HeadCommit) -> dict[tuple[str, str], LastRun] | None:
    """The last runs written for ``head``, or None (no file, another commit, not as written).

    Args:
        location: The history's location (local).
        head: Its newest commit (``head_commit``), taken before this read.
    """
    try:
        with open(_path(location), "rb", buffering=0) as handle:
            raw = loads_bytes(handle.readall())
    except (OSError, ValueError):  # absent, unreadable, not JSON
        return None
    if not isinstance(raw, dict) or raw.get("format") != _FORMAT:
        return None
    if raw.get("head") != head.identity():
        return None
    runs = raw.get("runs")
    if not isinstance(runs, list):
        return None
    last: dict[tuple[str, str], LastRun] = {}
    for run in runs:  # each as ``write_summary`` wrote it, or the whole file is not used
        if type(run) is not list or len(run) != 6:
            return None
        model, op, location_, parameters, at, clustering = run
        if (
            not (
                type(model) is str
                and type(op) is str
                and type(location_) is str
                and type(parameters) is str
                and type(at) is int
                and (clustering is None or type(clustering) is str)
            )
            or (model, op) in last
        ):
            return None
        last[(model, op)] = LastRun._make(run)
    return last


def write_summary(location: str, head: HeadCommit, last: Mapping[tuple[str, str], LastRun]) -> bool:
    """Write the last runs of the history as of ``head`` (whole, then renamed into place).

    Never fatal: a summary that cannot be written leaves the next reader to read the history.

    Args:
        location: The history's location (local).
        head: The commit the runs are exactly the last runs of.
        last: The last runs.

    Returns:
        Whether it was written.
    """
    document = {
        "format": _FORMAT,
        "head": head.identity(),
        "runs": [
            [r.model, r.op, r.table_location, r.parameters, r.started_at_us, r.clustering_columns]
            for r in last.values()
        ],
    }
    target = _path(location)
    temporary = f"{target}.{uuid.uuid4().hex}.tmp"
    try:
        with open(temporary, "x", encoding="utf-8") as handle:
            handle.write(json.dumps(document, separators=(",", ":")))  # the C encoder
        os.replace(temporary, target)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        return False
    return True
