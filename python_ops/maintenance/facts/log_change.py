"""Whether a local table's log gained or lost a file since a look: one ``lstat`` of the directory.

A build's start checks that its table is still at the version the command's first start saw
(``build_start.head_still``: two names asked). Every file Delta writes into or removes from
``_delta_log`` (a commit put in place by a rename or a link, its checksum, a checkpoint, a file
log cleanup deletes) changes the directory's entries, and POSIX gives every such change a new
modification and status-change time on the directory. So a directory whose device, inode and
both times are what they were holds the same names, and the head the look found holds, asked
in one ``lstat`` instead of two probes of names.

A timestamp is only as fine as its filesystem's clock, so a stamp is trusted only where that
holds with room to spare (``log_stamp`` gives None otherwise, and the caller probes names):

- the directory's own times are at least ``RACY_NS`` older than the look (a change within the
  same tick of a coarse clock, or a second of ext3, would leave them equal: git's "racily
  clean" index entries, for the same reason);
- the filesystem is a local one of ``LOCAL_FILESYSTEMS`` (by the device's entry in
  ``/proc/self/mountinfo``): a network filesystem takes its times from another machine's
  clock, and may answer ``lstat`` from an attribute cache;
- the path is a directory, not a link to one.

The status-change time is the kernel's: no one can set it back (``utime`` sets the
modification time, and moves the status-change time to now). The one thing assumed is a wall
clock that does not step back by more than ``RACY_NS`` and forward again between the look and
the check (a clock found earlier than the look is caught: the stamp is not trusted then).
"""

from __future__ import annotations

import os
import stat
import threading
import time
from dataclasses import dataclass

from python_ops.delta.log_files import LOG_DIR
from python_ops.storage import is_remote, normalize_location

# a directory changed this recently (or later than the look) is not trusted: 2 s covers ext3's
# whole seconds and a coarse kernel tick with room (ext4, xfs, btrfs and tmpfs keep nanoseconds)
RACY_NS = 2_000_000_000
# filesystems whose directory times are this machine's kernel's, kept on this machine
LOCAL_FILESYSTEMS = frozenset(
    {"ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "f2fs", "zfs", "bcachefs", "overlay"}
)
MOUNTINFO = "/proc/self/mountinfo"


@dataclass(frozen=True)
class LogStamp:
    """A log directory as one ``lstat`` saw it.

    Attributes:
        device: Its filesystem's device number.
        inode: Its inode number.
        mtime_ns: Its modification time (an entry added, removed or renamed).
        ctime_ns: Its status-change time (the same, and any change of its inode).
        looked_ns: When the stamp was taken (the wall clock): a clock found earlier than this
            later has stepped back, and the stamp is not trusted then.
        path: The log directory (the table's normalized location and ``_delta_log``).
    """

    device: int
    inode: int
    mtime_ns: int
    ctime_ns: int
    looked_ns: int
    path: str


class Mounts:
    """Filesystem types by device number, from ``/proc/self/mountinfo``.

    Read once, and again the first time a device it does not know is asked for (mounted
    since); a device still unknown then is not read for again.

    Args:
        path: The mountinfo file.
    """

    def __init__(self, path: str = MOUNTINFO) -> None:
        self._path = path
        self._lock = threading.Lock()
        self._types: dict[int, str] | None = None
        self._unknown: set[int] = set()  # asked for, read again for, not found

    def _read(self) -> dict[int, str]:
        types: dict[int, str] = {}
        try:
            with open(self._path, encoding="utf-8", errors="replace") as fh:
                for line in fh:
                    fields = line.split()
                    if "-" not in fields[6:]:
                        continue  # not a mountinfo line
                    major, _, minor = fields[2].partition(":")
                    kind = fields[fields.index("-", 6) + 1]
                    device = os.makedev(int(major), int(minor))
                    # a device mounted twice with two types: neither is trusted
                    types[device] = kind if types.get(device, kind) == kind else "?"
        except (OSError, ValueError, IndexError):
            return {}
        return types

    def kind(self, device: int) -> str | None:
        """The filesystem type of ``device`` (None: not mounted, or not known)."""
        with self._lock:
            if self._types is None or (device not in self._types and device not in self._unknown):
                self._types = self._read()
            if device not in self._types:
                self._unknown.add(device)
            return self._types.get(device)


_MOUNTS = Mounts()


def log_stamp(
    location: str, *, now_ns: int | None = None, mounts: Mounts = _MOUNTS
) -> LogStamp | None:
    """The stamp of a local table's log directory, when a later one can be trusted to differ.

    Take it before reading the log: a change between the stamp and the reading then shows as a
    stamp that differs.

    Args:
        location: The table (path or ``file:`` URI).
        now_ns: The look's time (``time.time_ns()`` when not given).
        mounts: The filesystem types by device.

    Returns:
        The stamp; None for a table on an object store, no log directory, a link, a
        filesystem not in ``LOCAL_FILESYSTEMS``, or a directory changed within ``RACY_NS``
        of the look.
    """
    if is_remote(location):
        return None
    path = f"{normalize_location(location)}/{LOG_DIR}"
    try:
        st = os.lstat(path)
    except OSError:
        return None
    now = time.time_ns() if now_ns is None else now_ns
    if not stat.S_ISDIR(st.st_mode) or max(st.st_mtime_ns, st.st_ctime_ns) > now - RACY_NS:
        return None
    if mounts.kind(st.st_dev) not in LOCAL_FILESYSTEMS:
        return None
    return LogStamp(st.st_dev, st.st_ino, st.st_mtime_ns, st.st_ctime_ns, now, path)


def log_unchanged(stamp: LogStamp, *, now_ns: int | None = None) -> bool:
    """Whether the table's log directory holds the same names as when ``stamp`` was taken.

    One ``lstat``; False on any error (the caller asks the names then), and when the wall
    clock reads earlier than the look did (stepped back: a change since may carry the old
    times).

    Args:
        stamp: ``log_stamp``'s answer for the table.
        now_ns: The check's time (``time.time_ns()`` when not given).
    """
    if (time.time_ns() if now_ns is None else now_ns) < stamp.looked_ns:
        return False
    try:
        st = os.lstat(stamp.path)
    except OSError:
        return False
    return (st.st_ino, st.st_ctime_ns, st.st_mtime_ns, st.st_dev) == (
        stamp.inode,
        stamp.ctime_ns,
        stamp.mtime_ns,
        stamp.device,
    )
