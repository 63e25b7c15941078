"""The commit of one rewrite (compaction or Z-order): exactly the plan, checked after it lands.

A rewrite removes exactly the files it planned, each ``remove`` spelled exactly as the log
spells its ``add`` (path string byte for byte, deletion-vector descriptor, partition values),
and adds the files it wrote; nothing re-plans (delta-rs's ``optimize.compact`` planned from its
own snapshot and re-encoded the paths it removed, so Delta read the rows twice). The commit is
written by ``delta.log_commit`` (put-if-absent).

Conflicts, as Delta's conflict checker decides them for OPTIMIZE (``dataChange=false``): a
concurrent commit that only adds files never conflicts (the rewrite is retried at the next
version, nothing re-read); one that removed one of our inputs, or changed the metadata or the
protocol, is a conflict (``RewriteConflict``).

After the commit lands it is read back: its ``remove`` actions must be the planned inputs, each
spelled byte for byte as the log spells its live ``add`` (so Delta's replay cancels exactly
them), and its ``add`` actions the files written. Anything else is a loud failure naming the
difference (``ChangedThenFailedError``), never a success.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from python_ops.delta.log.actions import AddFile, DeletionVector
from python_ops.delta.log.commits import commit_actions, commit_versions
from python_ops.delta.writing.log_commit import (
    MAX_ATTEMPTS,
    FileKey,
    changed_since,
    commit_info,
    stamp_in_commit_timestamp,
    write_commit,
)
from python_ops.errors import ChangedThenFailedError, WriterError
from python_ops.ops.optimize.sorting.zorder import RUN_MARKER, WrittenFile
from python_ops.storage import Storage

# What a new file's relative path keeps raw in its log path: URI path characters that need
# no escape anywhere (a ':' is escaped: in a first segment it would read as a scheme).
_SAFE = "/=!$&'()*+,;@"


class RewriteConflict(WriterError):
    """A concurrent commit removed one of the inputs or changed the metadata or protocol.

    Attributes:
        untracked: Files the failed attempt wrote and could not delete (named for VACUUM).
    """

    untracked: tuple[str, ...] = ()


@dataclass(frozen=True)
class RewriteCommit:
    """What one rewrite commits.

    Attributes:
        inputs: The planned input files (their ``add`` actions as the log spells them).
        written: The files the rewrite wrote (relative physical paths).
        parameters: ``operationParameters`` (``predicate``, ``zOrderBy``, ``targetSize``).
        operation: The operation recorded (``OPTIMIZE``; ``REORG`` for a purge).
        in_commit_timestamps: The table enables in-commit timestamps: the commit carries
            ``inCommitTimestamp`` (``log_commit.in_commit_timestamp``).
    """

    inputs: tuple[AddFile, ...]
    written: tuple[WrittenFile, ...]
    parameters: dict[str, str]
    operation: str = "OPTIMIZE"
    in_commit_timestamps: bool = False


def log_path(relative: str) -> str:
    """The log's spelling of a file this project wrote at ``relative`` (percent-encoded)."""
    return quote(relative, safe=_SAFE)


def _dv_struct(dv: DeletionVector) -> dict[str, Any]:
    out: dict[str, Any] = {
        "storageType": dv.storage_type,
        "pathOrInlineDv": dv.path_or_inline_dv,
        "sizeInBytes": dv.size_in_bytes,
        "cardinality": dv.cardinality,
    }
    if dv.offset is not None:
        out["offset"] = dv.offset
    return out


def _remove(f: AddFile, now_ms: int) -> dict[str, Any]:
    """A ``remove`` of ``f`` as Delta writes one for OPTIMIZE: the add's own spelling."""
    body: dict[str, Any] = {
        "path": f.path,
        "deletionTimestamp": now_ms,
        "dataChange": False,
        "extendedFileMetadata": True,
        "partitionValues": dict(f.partition_values),
        "size": f.size_bytes,
    }
    if f.deletion_vector is not None:
        body["deletionVector"] = _dv_struct(f.deletion_vector)
    return {"remove": body}


def _add(w: WrittenFile, values: dict[str, str | None], now_ms: int) -> dict[str, Any]:
    body: dict[str, Any] = {
        "path": log_path(w.path),
        "partitionValues": dict(values),
        "size": w.size_bytes,
        "modificationTime": now_ms,
        "dataChange": False,
    }
    if w.stats is not None:
        body["stats"] = w.stats
    return {"add": body}


def _actions(rewrite: RewriteCommit, read_version: int, run: str) -> list[dict[str, Any]]:
    now = int(time.time() * 1000)
    values = dict(rewrite.inputs[0].partition_values) if rewrite.inputs else {}
    metrics = {
        "numRemovedFiles": str(len(rewrite.inputs)),
        "numAddedFiles": str(len(rewrite.written)),
        "numRemovedBytes": str(sum(f.size_bytes for f in rewrite.inputs)),
        "numAddedBytes": str(sum(w.size_bytes for w in rewrite.written)),
    }
    info = commit_info(
        rewrite.operation,
        read_version,
        parameters=rewrite.parameters,
        metrics=metrics,
        extra={RUN_MARKER: run},
    )
    return [
        {"commitInfo": info},
        *(_remove(f, now) for f in rewrite.inputs),
        *(_add(w, values, now) for w in rewrite.written),
    ]


def commit_rewrite(
    storage: Storage, rewrite: RewriteCommit, *, read_version: int, next_version: int | None = None
) -> tuple[int, int]:
    """Commit ``rewrite`` planned on ``read_version``; read it back before returning.

    Every commit after ``read_version`` is checked for a conflict before ours is written at
    the version after it (commit files only: no snapshot is read again).

    Args:
        storage: The table's storage.
        rewrite: The inputs to remove and the files to add.
        read_version: The version the plan read.
        next_version: The first version to try (the one after this run's previous commit);
            None: the one after ``read_version``.

    Returns:
        The committed version, and how many versions concurrent writers took first.

    Raises:
        RewriteConflict: When a concurrent commit removed an input or changed the metadata or
            protocol (nothing was committed).
        ChangedThenFailedError: When the commit landed but is not the plan.
        WriterError: When every version tried was taken.
    """
    run = str(uuid.uuid4())
    wanted = {f.key for f in rewrite.inputs}
    read, version = read_version, next_version or read_version + 1
    for attempt in range(MAX_ATTEMPTS):
        if version > read + 1:  # commits since the plan: a conflict, or only appends?
            structural, removed = changed_since(storage, read, version - 1)
            if structural or wanted & removed:
                raise RewriteConflict(_conflict_reason(structural, wanted & removed))
            read = version - 1
        actions = _actions(rewrite, read, run)
        if rewrite.in_commit_timestamps:  # monotonic: after the commit before this version
            stamp_in_commit_timestamp(storage, version, actions)
        if write_commit(storage, version, actions):
            verify_commit(storage, version, rewrite)
            return version, attempt
        version = max(commit_versions(storage)) + 1
    raise WriterError(
        f"{storage.root}: {MAX_ATTEMPTS} concurrent commits took each version the OPTIMIZE "
        "commit tried; nothing was committed. Run the op again."
    )


def _conflict_reason(structural: bool, lost: set[FileKey]) -> str:
    if structural:
        return "a concurrent commit changed the table's metadata or protocol"
    names = ", ".join(sorted(k[0] for k in lost)[:5])
    return f"a concurrent commit removed {len(lost)} of the rewrite's input file(s) ({names})"


def _mismatch(what: str, expected: Sequence[object], found: Sequence[object]) -> str:
    missing = sorted(map(str, set(expected) - set(found)))
    extra = sorted(map(str, set(found) - set(expected)))
    return f"{what}: missing {missing[:5]}, unexpected {extra[:5]}"


def verify_commit(storage: Storage, version: int, rewrite: RewriteCommit) -> None:
    """Read commit ``version`` back and check it is ``rewrite`` and the table agrees.

    Raises:
        ChangedThenFailedError: Naming what differs (the commit is in the log: never a success).
    """
    root = storage.root
    actions = commit_actions(storage, version)
    removes = [a["remove"] for a in actions if isinstance(a.get("remove"), dict)]
    adds = [a["add"] for a in actions if isinstance(a.get("add"), dict)]
    planned = [
        (f.path, f.deletion_vector.unique_id if f.deletion_vector else None) for f in rewrite.inputs
    ]
    found = [
        (
            str(r.get("path")),
            d.unique_id if (d := DeletionVector.parse(r.get("deletionVector"))) else None,
        )
        for r in removes
    ]
    problems = []
    if sorted(map(str, planned)) != sorted(map(str, found)):
        problems.append(_mismatch("removes", planned, found))
    written = [log_path(w.path) for w in rewrite.written]
    if sorted(written) != sorted(str(a.get("path")) for a in adds):
        problems.append(_mismatch("adds", written, [str(a.get("path")) for a in adds]))
    if problems:
        raise ChangedThenFailedError(
            f"OPTIMIZE of {root} committed version {version}, but that commit is not the plan "
            f"({'; '.join(problems)}). The table's content may have changed: check it with "
            "Delta before running another op."
        )
