"""One listing per decision: the due check's listing handed to the VACUUM it decides.

The post-hook and ``maintain_all`` decide whether VACUUM is due with a dry run, which lists the
table (``python_ops.maintenance.reclaim``); the VACUUM that follows moments later would list it
again. The dry run keeps its listing here, keyed by the table, the snapshot version it was made
against and the partition filter; the real run takes it, once, and selects from it with its
own (later) cutoff and protected set. A listing made against another version is never used: a
commit in between means the run lists again. What the listing cannot know is a file written
after it: such a file is younger than any retention, so it is never a candidate anyway.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

Key = tuple[str, int, str | None]


@dataclass(frozen=True)
class KeptListing:
    """A listing kept for the run it decided.

    Attributes:
        entries: The listing as an Arrow table (``Listing.table()``).
        files_listed: Files it listed.
        symlinks_skipped: Symbolic links it skipped.
    """

    entries: Any
    files_listed: int
    symlinks_skipped: int


_KEPT: dict[Key, KeptListing] = {}
_LOCK = threading.Lock()


def keep(key: Key, listing: KeptListing) -> None:
    """Keep ``listing`` for the next run on ``key``: one listing per table, the newest."""
    with _LOCK:
        for old in [k for k in _KEPT if k[0] == key[0]]:
            del _KEPT[old]
        _KEPT[key] = listing


def take(key: Key) -> KeptListing | None:
    """The listing kept for ``key``, removed (each listing serves one run), or None."""
    with _LOCK:
        return _KEPT.pop(key, None)


def forget(location: str) -> None:
    """Drop every listing kept for a table (e.g. after a run that did not take it)."""
    with _LOCK:
        for key in [k for k in _KEPT if k[0] == location]:
            del _KEPT[key]
