"""Where a Z-order spills its runs: one temporary directory per sort, named by host and process.

``python_ops-zorder-<host>-p<pid>-*`` under the given root (else the OS temp directory). The
sort removes it on every exit path; a process killed by a signal cannot, so each new spill
directory first removes those of this host's processes that are gone (``remove_orphans``).
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile

SPILL_PREFIX = "python_ops-zorder-"


def _owner(name: str) -> tuple[str, int] | None:
    """(host, pid) of the process that made the spill directory ``name``, if it is one."""
    host, _, rest = name[len(SPILL_PREFIX) :].rpartition("-p")
    pid = rest.split("-")[0]
    return (host, int(pid)) if name.startswith(SPILL_PREFIX) and pid.isdigit() else None


def remove_orphans(root: str) -> list[str]:
    """Remove spill directories under ``root`` left by killed processes of this host.

    A process killed by a signal cannot remove its directory; the next Z-order here does. Only
    directories named by this host whose process is gone are removed (never a link).

    Args:
        root: The directory spill directories are made in.

    Returns:
        The paths removed.
    """
    removed = []
    host = socket.gethostname()
    for entry in os.scandir(root):
        owner = _owner(entry.name)
        if owner is None or owner[0] != host or not entry.is_dir(follow_symlinks=False):
            continue
        try:
            os.kill(owner[1], 0)
        except ProcessLookupError:
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(entry.path)
        except PermissionError:  # alive, another user's
            continue
    return removed


def spill_directory(spill_root: str | None) -> tempfile.TemporaryDirectory[str]:
    """A new spill directory named by this host and process, orphans of killed ones removed."""
    root = spill_root or tempfile.gettempdir()
    remove_orphans(root)
    prefix = f"{SPILL_PREFIX}{socket.gethostname()}-p{os.getpid()}-"
    return tempfile.TemporaryDirectory(prefix=prefix, dir=root)
