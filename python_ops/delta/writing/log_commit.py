"""Commits this project writes itself: the statistics commit and every OPTIMIZE rewrite.

delta-rs's transaction API re-encodes the paths it is given (a ``remove`` of ``p=café/x``
becomes ``p=caf%C3%A9/x``, which to Delta is another file: the rows were then read twice), keeps
no deletion vector (its ``AddAction`` has no such field) and cannot name the operation. So these
commits are written here, as Delta writes them: every ``remove`` carries its ``add``'s path
string byte for byte, its deletion-vector descriptor and its partition values. One commit: a
process killed at any point leaves either the old table or the new one.

The commit file is published without overwriting: written beside it under a staged name, then
hard-linked to ``<version>.json`` (the link fails when another writer took the version, as
Hadoop's ``rename`` without overwrite does for Delta's local log store). On a lost race the
newer commits are read: any ``metaData`` or ``protocol`` change refuses the op; files they
removed are left out; the commit is retried at the next version. On S3 the commit is one
``PutObject`` with ``If-None-Match: *`` (refused when the key exists), after the store's
conditional writes were checked (``storage.safe_commit``, as before delta-rs's commits here);
other object stores are refused.
"""

from __future__ import annotations

import json
import os
import secrets
import time
import uuid
from typing import Any

from python_ops.delta.log.actions import DeletionVector, file_key
from python_ops.delta.log.commits import commit_actions
from python_ops.delta.log.log_files import LOG_DIR
from python_ops.errors import DeltaLogError, StatsUnsupportedError
from python_ops.storage import Storage, is_remote, is_s3

MARKER = "python_ops.operation"  # as OPTIMIZE's own commits (ops.optimize.plan.OPERATION_MARKER)
MAX_ATTEMPTS = 5


def commit_info(
    operation: str,
    read_version: int,
    *,
    parameters: dict[str, str],
    metrics: dict[str, str],
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A ``commitInfo`` as Delta records one (``COMPUTE STATS``, ``OPTIMIZE``).

    Args:
        operation: The operation's name.
        read_version: The version the commit was planned on.
        parameters: ``operationParameters`` (string values, as Delta writes them).
        metrics: ``operationMetrics`` (string values).
        extra: More fields (this project's run marker).

    Returns:
        The ``commitInfo`` object.
    """
    return {
        "timestamp": int(time.time() * 1000),
        "operation": operation,
        "operationParameters": parameters,
        "readVersion": read_version,
        "isolationLevel": "SnapshotIsolation" if operation == "OPTIMIZE" else "Serializable",
        "isBlindAppend": False,
        "operationMetrics": metrics,
        "engineInfo": "python_ops",
        "txnId": str(uuid.uuid4()),
        MARKER: operation,
        **(extra or {}),
    }


def refuse_without_atomic_commits(storage: Storage) -> None:
    """Refuse stores where no put-if-absent is made here, before anything is computed.

    Local and mounted paths publish by hard link, S3 by ``PutObject`` with ``If-None-Match: *``
    (``S3Storage.create_if_absent``); other object stores (``gs://``, ``abfss://``, ``hdfs://``)
    are refused. Makes no request (the due check calls it).

    Raises:
        StatsUnsupportedError: For a remote table that is not on S3.
    """
    if is_remote(storage.root) and not is_s3(storage.root):
        raise StatsUnsupportedError(
            f"{storage.root}: the statistics commit needs a put-if-absent this project makes "
            "only on local paths and S3; nothing was written."
        )


def require_atomic_commits(storage: Storage) -> None:
    """As ``refuse_without_atomic_commits``, and on S3 the store's conditional writes checked.

    The S3 check is the one delta-rs's commits here go through (``safe_commit``): once per
    endpoint and bucket, a probe key written twice with ``If-None-Match: *``, the second write
    refused; a store that overwrites instead (S3Proxy 2.6.0, measured) is refused.

    Raises:
        StatsUnsupportedError: For a remote table that is not on S3.
        ConfigError: When the S3 store ignores conditional writes.
    """
    refuse_without_atomic_commits(storage)
    if is_s3(storage.root):
        from python_ops.storage.s3 import S3Storage
        from python_ops.storage.safe_commit import require_safe_commits

        assert isinstance(storage, S3Storage)
        require_safe_commits(storage.root, settings=storage.settings)


def staged_name(version: int) -> str:
    """The name a commit is written under before it is linked into place.

    Named as object_store stages a put (``<name>#<n>``): log cleanup removes one a killed
    process left behind (``log_files.stale_staged_files``), and Delta's listing ignores it.
    """
    return f"{version:020d}.json#{secrets.randbelow(2**31)}"


def _publish(storage: Storage, version: int, body: bytes) -> bool:
    """Write ``<version>.json`` unless it exists; True when ours is the commit."""
    if is_s3(storage.root):
        from python_ops.storage.s3 import S3Storage

        assert isinstance(storage, S3Storage)
        return storage.create_if_absent(f"{LOG_DIR}/{version:020d}.json", body)
    log_dir = os.path.join(storage.root, LOG_DIR)
    target = os.path.join(log_dir, f"{version:020d}.json")
    staged = os.path.join(log_dir, staged_name(version))
    with open(staged, "wb") as out:
        out.write(body)
        out.flush()
        os.fsync(out.fileno())
    try:
        os.link(staged, target)
        return True
    except FileExistsError:
        return False
    except OSError as err:  # a file system without hard links: no safe publish here
        raise StatsUnsupportedError(
            f"{storage.root}: the commit cannot be published without overwriting ({err}); "
            "nothing was written"
        ) from err
    finally:
        os.unlink(staged)


FileKey = tuple[str, str | None]


def changed_since(storage: Storage, read_version: int, latest: int) -> tuple[bool, set[FileKey]]:
    """(metadata or protocol changed, files removed) in the commits after ``read_version``.

    Files are keyed as Delta keys them (``file_key``: the path's URI and the DV id), so a
    concurrent ``remove`` spelled differently from our input's ``add`` is what Delta takes it
    for.
    """
    structural = False
    removed: set[FileKey] = set()
    for version in range(read_version + 1, latest + 1):
        for action in commit_actions(storage, version):
            if "metaData" in action or "protocol" in action:
                structural = True
            raw = action.get("remove")
            if isinstance(raw, dict):
                dv = DeletionVector.parse(raw.get("deletionVector"))
                removed.add(file_key(str(raw.get("path")), storage.root, dv))
    return structural, removed


def stamp_in_commit_timestamp(storage: Storage, version: int, actions: list[dict[str, Any]]) -> int:
    """Give the commit ``version`` an in-commit timestamp, as the protocol asks of writers.

    ``commitInfo`` is the first action; its ``inCommitTimestamp`` (and ``timestamp``) is the
    greater of now and the previous commit's in-commit timestamp plus one millisecond, so the
    table's commit times stay strictly increasing whatever the clocks of its writers say.

    Args:
        storage: The table's storage.
        version: The version about to be written.
        actions: The commit's actions, ``commitInfo`` first (changed in place).

    Returns:
        The in-commit timestamp written.

    Raises:
        DeltaLogError: When the previous commit has no in-commit timestamp to follow.
    """
    from python_ops.delta.log.commits import commit_actions  # the log's reader, for one commit

    infos = [a["commitInfo"] for a in commit_actions(storage, version - 1) if "commitInfo" in a]
    previous = infos[0].get("inCommitTimestamp") if infos and isinstance(infos[0], dict) else None
    if not isinstance(previous, int):
        raise DeltaLogError(
            f"{storage.root}: commit {version - 1} has no inCommitTimestamp although the table "
            "enables in-commit timestamps; nothing was written"
        )
    stamp = max(int(time.time() * 1000), previous + 1)
    info = actions[0]["commitInfo"]
    info["inCommitTimestamp"] = stamp
    info["timestamp"] = stamp
    return stamp


def write_commit(storage: Storage, version: int, actions: list[dict[str, Any]]) -> bool:
    """Publish ``actions`` as commit ``version``; False when the version is taken.

    Args:
        storage: The table's (local) storage.
        version: The version to write.
        actions: The actions, ``commitInfo`` first.

    Returns:
        Whether the commit is ours.
    """
    body = "".join(json.dumps(a, separators=(",", ":"), ensure_ascii=False) + "\n" for a in actions)
    return _publish(storage, version, body.encode())
