"""Whether a table's files are still those its last clustering wrote, read from the Delta log.

A ``table`` model's build (``CREATE OR REPLACE TABLE ... AS SELECT``), a full refresh or a
Python model's overwrite writes every live file anew: the Z-order an earlier OPTIMIZE gave the
table is gone with the files it wrote. Two questions, both answered from a few commits:

- ``last_replacement``: is the table, as it is now, exactly what one write left, with no
  rewrite (OPTIMIZE, REORG) since? Then a Z-ordered model needs re-clustering now, whatever its
  interval (``due_rules``).
- ``layout_replaced``: are the files an OPTIMIZE wrote (the history's ``version_before`` to
  ``version_after``) all gone from the live files, and which commit removed the last of them?
  Then the report must not print that OPTIMIZE's figures as the table's (``report``).
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from python_ops.delta.log.commits import commit_actions
from python_ops.errors import MaintenanceError
from python_ops.storage import Storage

# commits that write no data (or only statistics): looked through, back to the write before
NO_DATA_OPERATIONS = frozenset({"VACUUM START", "VACUUM END", "SET TBLPROPERTIES", "COMPUTE STATS"})
# row-level writes (an incremental model's MERGE, an UPDATE, a DELETE): they rewrite the files
# they touch, even every file of a small table, and keep the interval (a Z-order rewrites each
# changed partition whole: not after every incremental build)
ROW_LEVEL_OPERATIONS = frozenset({"MERGE", "UPDATE", "DELETE"})
LOOKBACK = 20  # commits read back from the head before the answer is "not known"
LOOKAHEAD = 200  # commits read forward from an OPTIMIZE to find the one that replaced its files
MARKER = "python_ops.operation"  # this package's Z-order commits (ops.optimize.planning.plan)


@dataclass(frozen=True)
class Replacement:
    """The commit that replaced a table's files.

    Attributes:
        version: Its version (None: not found in the log still kept).
        timestamp_ms: Its ``commitInfo`` time (None: not known).
        operation: Its ``commitInfo.operation`` ('' when none or not known).
    """

    version: int | None
    timestamp_ms: int | None = None
    operation: str = ""


def _info(actions: list[dict[str, Any]]) -> dict[str, Any]:
    return next((a["commitInfo"] for a in actions if isinstance(a.get("commitInfo"), dict)), {})


def _replacement(version: int, actions: list[dict[str, Any]]) -> Replacement:
    info = _info(actions)
    stamp = info.get("inCommitTimestamp") or info.get("timestamp")
    timestamp = stamp if isinstance(stamp, int) and not isinstance(stamp, bool) else None
    return Replacement(version, timestamp, str(info.get("operation") or ""))


def _paths(actions: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [a[kind] for a in actions if isinstance(a.get(kind), dict)]


def last_replacement(storage: Storage, head: int, live: Collection[str]) -> Replacement | None:
    """The write that left every live file at ``head``, when nothing rewrote them since.

    Read back from ``head``: commits that write no data (VACUUM, properties, COMPUTE STATS, no
    ``add``) are looked through; the first other commit answers. It is the replacement when its
    new files (``dataChange`` not false, not removed in the same commit) are every live file
    and it is no row-level write; a rewrite of the same rows (every ``add`` with ``dataChange:
    false``: OPTIMIZE, REORG), a write that left earlier files live, or a MERGE, UPDATE or
    DELETE (``ROW_LEVEL_OPERATIONS``, even one that rewrote every file) is not.

    Args:
        storage: The table's storage.
        head: The version the live files are of.
        live: The live files' paths, as the log spells them.

    Returns:
        The replacing write; None when there is none, or a commit in the way is gone.
    """
    if not live:
        return None
    for version in range(head, max(-1, head - LOOKBACK), -1):
        try:
            actions = commit_actions(storage, version)
        except (MaintenanceError, OSError):  # cleaned up: not known
            return None
        info = _info(actions)
        adds = _paths(actions, "add")
        operations = {info.get("operation"), info.get(MARKER)}
        if not adds or operations & NO_DATA_OPERATIONS:
            continue
        if info.get("operation") in ROW_LEVEL_OPERATIONS:
            return None
        new = {a.get("path") for a in adds if a.get("dataChange") is not False}
        # a file re-added with a deletion vector (DELETE, UPDATE) is no new file
        new -= {r.get("path") for r in _paths(actions, "remove")}
        if new and all(path in new for path in live):
            return _replacement(version, actions)
        return None
    return None


def layout_replaced(
    storage: Storage, written: tuple[int, int], head: int, live: Collection[str]
) -> Replacement | None:
    """Whether none of the files a rewrite wrote is live at ``head``, and what removed them.

    Args:
        storage: The table's storage.
        written: The rewrite's versions: (``version_before``, ``version_after``] of its record.
        head: The table's version now.
        live: The live files' paths at ``head``, as the log spells them.

    Returns:
        The commit that removed the last of them (version None when the log no longer holds
        it); None when one of them is live, or the rewrite wrote none (or is not readable).
    """
    before, after = written
    wrote: set[str] = set()
    try:
        for version in range(before + 1, after + 1):
            adds = _paths(commit_actions(storage, version), "add")
            wrote |= {str(a.get("path")) for a in adds if a.get("dataChange") is False}
    except (MaintenanceError, OSError):
        return None
    if not wrote or not wrote.isdisjoint(live):
        return None
    left = set(wrote)
    for version in range(after + 1, min(head, after + LOOKAHEAD) + 1):
        try:
            actions = commit_actions(storage, version)
        except (MaintenanceError, OSError):
            break
        left -= {str(r.get("path")) for r in _paths(actions, "remove")}
        if not left:
            return _replacement(version, actions)
    return Replacement(None)


def clustering_columns(storage: Storage, head: int) -> tuple[str, ...] | None:
    """The liquid-clustering columns the table's log names at ``head`` (``delta.clustering``).

    Read back from ``head`` to the newest ``domainMetadata`` of the ``delta.clustering`` domain
    (every create or replace of a clustered table writes one; Delta 4.4's ``CREATE OR REPLACE
    TABLE ... AS SELECT`` without ``CLUSTER BY`` writes it empty).

    Args:
        storage: The table's storage.
        head: The version to read at.

    Returns:
        The columns (nested fields joined with '.'); () for a removed domain or none named;
        None when no such action is within ``LOOKBACK`` commits (not known).
    """
    for version in range(head, max(-1, head - LOOKBACK), -1):
        try:
            actions = commit_actions(storage, version)
        except (MaintenanceError, OSError):
            return None
        for domain in reversed(_paths(actions, "domainMetadata")):
            if domain.get("domain") != "delta.clustering":
                continue
            if domain.get("removed") is True:
                return ()
            try:
                config = json.loads(str(domain.get("configuration") or "{}"))
            except ValueError:
                return None
            names = config.get("clusteringColumns") or []
            return tuple(".".join(str(p) for p in name) for name in names)
    return None
