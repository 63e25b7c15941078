"""The Delta log's JSON commits: strict line parsing, commit infos, the history.

``json_lines`` is the one parser of JSON log files (commits and JSON checkpoints): one object per
line holding exactly one known action, anything else refused with its file and line. The
snapshot reader (``snapshot``) replays what it yields; ``read_history`` and the commit helpers
read commits one by one.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from contextvars import ContextVar, Token
from typing import Any

from python_ops.delta.log.actions import CommitInfo
from python_ops.delta.log.json_text import loads
from python_ops.delta.log.log_files import LOG_DIR, LogFile, LogFileKind, classify
from python_ops.errors import DeltaLogError, TableNotFoundError
from python_ops.storage import Storage, open_storage

# Where an action was read: (file, "line" or "row", number). Formatted only for errors, so the
# reader does not build a string per action.
At = tuple[str, str, int]


class _SharedCommits:
    """One op's parsed commits (``commits_shared``), by (table root, path), and their size."""

    def __init__(self) -> None:
        self.lines: dict[tuple[str, str], list[tuple[At, dict[str, Any]]]] = {}
        self.held = 0


_shared: ContextVar[_SharedCommits | None] = ContextVar("shared_commits", default=None)
# commit files kept, by their size: parsed, a commit takes several times its size in memory
_SHARED_MAX_BYTES = 4 * 1024 * 1024


class _CommitsShared:
    """``commits_shared``'s block: a class, not a generator (every post-hook enters two)."""

    __slots__ = ("enabled", "token")

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.token: Token[_SharedCommits | None] | None = None

    def __enter__(self) -> None:
        outer = _shared.get()
        self.token = _shared.set((outer or _SharedCommits()) if self.enabled else None)

    def __exit__(self, kind: object, err: object, trace: object) -> None:
        if self.token is not None:
            _shared.reset(self.token)
            self.token = None


def commits_shared(enabled: bool = True) -> AbstractContextManager[None]:
    """Within the block, a commit read again is neither fetched nor parsed again.

    For one op that reads some commits twice (VACUUM LITE: the snapshot's replay, then the
    window's removes). A commit file never changes once written; the cache lives only as long
    as the block, up to ``_SHARED_MAX_BYTES`` of commit files, so no later op sees it.

    A block inside another enabled one shares the outer block's commits (a post-hook that
    reads the build's first commit to find its table, then the build's writes).

    Args:
        enabled: False makes the block change nothing (an op that reads each commit once).

    Returns:
        The block (entered once).
    """
    return _CommitsShared(enabled)


def commit_lines(storage: Storage, path: str) -> list[tuple[At, dict[str, Any]]]:
    """The (location, action) lines of one JSON commit (shared within ``commits_shared``).

    Args:
        storage: The table's storage.
        path: The commit's path relative to the root.

    Returns:
        Its lines, parsed by ``json_lines``.

    Raises:
        FileNotFoundError: When the commit does not exist.
        DeltaLogError: For a line ``json_lines`` refuses.
    """
    shared = _shared.get()
    key = (storage.root, path)
    if shared is not None and key in shared.lines:
        return shared.lines[key]
    data = storage.read_bytes(path)
    lines = list(json_lines(data, f"{storage.root}/{path}"))
    if shared is not None and shared.held + len(data) <= _SHARED_MAX_BYTES:
        shared.lines[key] = lines
        shared.held += len(data)
    return lines


def location_of(at: At) -> str:
    """``file, line N`` (or ``row N`` in a checkpoint) for an error message."""
    return f"{at[0]}, {at[1]} {at[2]}"


def list_log(storage: Storage) -> list[LogFile]:
    """Every file in ``_delta_log``, its name classified."""
    return [classify(e) for e in storage.list_dir(LOG_DIR) if not e.is_dir]


# Every action type of the Delta protocol (4.x). Anything else is a log this reader does not
# understand: refused, never skipped.
ACTION_TYPES = frozenset(
    {
        "add",
        "remove",
        "metaData",
        "protocol",
        "commitInfo",
        "txn",
        "cdc",
        "domainMetadata",
        "checkpointMetadata",
        "sidecar",
    }
)


def json_lines(data: bytes, where: str) -> Iterator[tuple[At, dict[str, Any]]]:
    """Yield (location, action) for each line: one JSON object holding exactly one action.

    Raises:
        DeltaLogError: For a line that is not JSON, not an object, holds several actions or an
            unknown action type.
    """
    raw = data.splitlines()  # \n, \r and \r\n only (a JSON string may hold U+2028)
    lines: Sequence[str | bytes] = raw
    if b"\xef\xbb\xbf" not in data:  # a line with a BOM: json.loads' own detection, as before
        try:  # UTF-8, as Delta writes it: json.loads guesses each bytes line's encoding first
            lines = [line.decode("utf-8") for line in raw]
        except UnicodeDecodeError:
            lines = raw  # the line that fails is found and named below
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            action = loads(line) if isinstance(line, str) else json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError) as err:
            raise DeltaLogError(f"{where}, line {number}: not valid JSON ({err})") from err
        if not isinstance(action, dict) or len(action) != 1:
            raise DeltaLogError(
                f"{where}, line {number}: expected a JSON object holding one action, found "
                f"{line[:80]!r}"
            )
        (kind,) = action
        if kind not in ACTION_TYPES:
            raise DeltaLogError(f"{where}, line {number}: unknown action type {kind!r}")
        if not isinstance(action[kind], dict):
            raise DeltaLogError(f"{where}, line {number}: the '{kind}' action is not an object")
        yield (where, "line", number), action


def commit_info(version: int, actions: list[dict[str, Any]], mtime_ms: int) -> CommitInfo:
    """A commit's ``commitInfo`` (timestamp: in-commit, else recorded, else the file's time)."""
    for action in actions:
        if (info := action.get("commitInfo")) is not None:
            stamp = info.get("inCommitTimestamp") or info.get("timestamp")
            return CommitInfo(
                version=version,
                timestamp_ms=stamp
                if isinstance(stamp, int) and not isinstance(stamp, bool)
                else mtime_ms,
                operation=info.get("operation"),
                operation_parameters=dict(info.get("operationParameters") or {}),
                operation_metrics=dict(info.get("operationMetrics") or {}),
            )
    return CommitInfo(version, mtime_ms, None, {}, {})


def read_history(location: str | Storage, *, limit: int | None = None) -> list[CommitInfo]:
    """Read the ``commitInfo`` of every commit still in the log, newest first.

    Args:
        location: Table location or an open ``Storage``.
        limit: Return at most this many (newest) commits.

    Returns:
        Commit infos, newest first.

    Raises:
        TableNotFoundError: When there is no Delta log at the location.
    """
    storage = location if isinstance(location, Storage) else open_storage(location)
    commits = sorted(
        (f for f in list_log(storage) if f.kind is LogFileKind.COMMIT and f.version is not None),
        key=lambda f: -(f.version or 0),
    )
    if not commits:
        raise TableNotFoundError(f"no Delta table at {storage.root}: '{LOG_DIR}' has no commits")
    out = []
    for f in commits[:limit] if limit else commits:
        assert f.version is not None
        actions = [a for _, a in json_lines(storage.read_bytes(f.path), f"{storage.root}/{f.path}")]
        out.append(commit_info(f.version, actions, f.modification_time_ms))
    return out


def commit_versions(storage: Storage) -> list[int]:
    """Versions of the JSON commits still in the log, ascending."""
    return sorted(
        f.version
        for f in list_log(storage)
        if f.kind is LogFileKind.COMMIT and f.version is not None
    )


def commit_actions(storage: Storage, version: int) -> list[dict[str, Any]]:
    """The actions of one JSON commit.

    Args:
        storage: The table's storage.
        version: The commit version.

    Returns:
        The commit's actions in file order.
    """
    return [action for _, action in commit_lines(storage, f"{LOG_DIR}/{version:020d}.json")]
