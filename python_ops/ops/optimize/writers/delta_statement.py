"""Running one of Delta's own statements on a table and finding the commit it made.

Shared by the ops that hand a table to Delta's writer (``execute``'s OPTIMIZE of our plan,
``clustering``'s clustering OPTIMIZE, ``python_ops.ops.purge``'s REORG): the session settings
they set for one statement, a marker in the commit's ``userMetadata`` that finds exactly the
commit the statement made, and the output row's structs as plain data.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from python_ops.delta.log.actions import DeletionVector, file_key, identity_text
from python_ops.delta.log.commits import commit_actions, commit_versions
from python_ops.errors import ChangedThenFailedError, EngineError, MaintenanceError
from python_ops.storage import open_storage

WRITER_DELTA_SQL = "Delta OPTIMIZE (SQL)"

# Delta's session settings that decide which files its OPTIMIZE rewrites and how it commits
# (delta-io/delta v4.4.0: OptimizeExecutor.optimize, CompactionStrategy, DeltaSQLConf).
_DELTA = "spark.databricks.delta."
MIN_FILE_SIZE = _DELTA + "optimize.minFileSize"
MAX_FILE_SIZE = _DELTA + "optimize.maxFileSize"
MAX_DELETED_ROWS_RATIO = _DELTA + "optimize.maxDeletedRowsRatio"
BATCH_SIZE = _DELTA + "optimize.batchSize"
USER_METADATA = _DELTA + "commitInfo.userMetadata"
MARKER_PREFIX = "python_ops.optimize:"  # no spaces or semicolons: also set by SET


def literal(value: str) -> str:
    """A SQL string literal (quotes and backslashes escaped)."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def partitions_predicate(
    partitions: list[Mapping[str, str | None]], logical: Mapping[str, str]
) -> str:
    """A predicate selecting exactly these partitions, in the names Delta's SQL takes.

    Args:
        partitions: Each partition's values as the log keys them (physical names under column
            mapping).
        logical: Physical to logical names (``Metadata.logical_names``; empty without mapping).

    Returns:
        ``(a = 'x' AND b IS NULL) OR (...)``; empty when no partition has values.
    """
    terms = []
    for values in partitions:
        parts = []
        for key, value in values.items():
            column = "`" + logical.get(key, key).replace("`", "``") + "`"
            parts.append(
                f"{column} = {literal(value)}" if value is not None else f"{column} IS NULL"
            )
        if parts:
            terms.append("(" + " AND ".join(parts) + ")")
    return " OR ".join(terms)


def unmarked_answer(location: str, after: int, marker: str, what: str) -> MaintenanceError:
    """The error for a Delta statement that reported rewriting files without a marked commit.

    Measured on Delta 4.4: a ``REORG ... APPLY (PURGE)`` of a partition whose only deletion
    vector deletes every row of its file answered ``numFilesRemoved = 1`` and committed
    nothing. Where no commit at all follows ``after``, nothing changed (exit 2); where commits
    follow but none carries the marker, one may be the statement's (exit 1, never "nothing
    changed").

    Args:
        location: The table.
        after: The version the statement was planned on.
        marker: The statement's marker.
        what: The statement and what it reported, for the message.

    Returns:
        ``EngineError`` or ``ChangedThenFailedError``, to raise.
    """
    later = [v for v in commit_versions(open_storage(location)) if v > after]
    if not later:
        return EngineError(
            f"{what}, but committed nothing: the table is still at version {after}. Nothing "
            "changed; Delta's answer is not what it did"
        )
    return ChangedThenFailedError(
        f"{what}, but none of the commits after version {after} ({later[0]}-{later[-1]}) "
        f"carries its marker {marker!r}; its history cannot be attributed"
    )


def run_marked(
    sql: Any, statement: str, settings: Mapping[str, str | None], *, location: str, after: int
) -> list[dict[str, Any]]:
    """Run one of Delta's writing statements; a failure that committed anyway says so.

    A statement can fail after its commit (the connection dropped, the answer lost): when a
    commit after ``after`` carries the marker in ``settings`` (``USER_METADATA``), the table
    changed and the failure is ``ChangedThenFailedError`` (exit 1), never a refusal (exit 2).

    Args:
        sql: The engine (``delta_sql.DeltaSql``).
        statement: The statement.
        settings: Its settings, the marker among them.
        location: The table.
        after: The version the statement was planned on.

    Returns:
        The statement's rows.

    Raises:
        EngineError: The statement failed and committed nothing.
        ChangedThenFailedError: The statement failed but its commit is in the log.
    """
    try:
        rows: list[dict[str, Any]] = sql.run_with_settings(statement, settings)
    except EngineError as err:
        marker = settings.get(USER_METADATA)
        found = marked_commit(location, after, marker) if marker else None
        if found is not None:
            raise ChangedThenFailedError(
                f"{location}: Delta committed version {found[0]} for {statement[:120]!r}, "
                f"then the statement failed: {err}"
            ) from err
        raise
    return rows


def as_dict(value: Any) -> dict[str, Any]:
    """A struct from a result row: a dict (Spark Connect, classic), or JSON text (thrift).

    Args:
        value: The struct value.

    Returns:
        It as a dict.

    Raises:
        EngineError: For anything else.
    """
    if value is None:
        return {}
    if isinstance(value, str):
        value = json.loads(value)
    if isinstance(value, Mapping):
        return dict(value)
    as_dict = getattr(value, "asDict", None)  # a pyspark Row
    if as_dict is not None:
        return dict(as_dict(recursive=True))
    raise EngineError(f"Delta's OPTIMIZE answered an unexpected metrics value: {value!r}")


def marked_commit(location: str, after: int, marker: str) -> tuple[int, set[str]] | None:
    """The commit after version ``after`` whose ``userMetadata`` is this run's marker.

    The marker is a fresh UUID set as ``commitInfo.userMetadata`` for our statement only, so
    exactly one commit can carry it: unlike "the newest OPTIMIZE in the history", another
    OPTIMIZE committed by someone else meanwhile cannot be mistaken for ours.

    Args:
        location: The table location.
        after: The version the statement was planned on.
        marker: The run's marker.

    Returns:
        (version, identities of the files the commit removed as Delta keys them, with their
        deletion vectors: ``AddFile.identity``), or None.
    """
    storage = open_storage(location)
    for version in sorted(v for v in commit_versions(storage) if v > after):
        actions = commit_actions(storage, version)
        info = next((a["commitInfo"] for a in actions if "commitInfo" in a), None)
        if info is None or info.get("userMetadata") != marker:
            continue
        removed = {
            identity_text(
                file_key(
                    str(a["remove"]["path"]),
                    storage.root,
                    DeletionVector.parse(a["remove"].get("deletionVector")),
                )
            )
            for a in actions
            if "remove" in a
        }
        return version, removed
    return None


def optimize_metrics(rows: list[Any], table: str, where: str) -> dict[str, Any]:
    """The ``metrics`` struct of the one row Delta's OPTIMIZE answers, as plain data.

    Args:
        rows: What the statement returned.
        table: The table, for the message.
        where: The engine, for the message.

    Returns:
        The metrics.

    Raises:
        EngineError: For any other answer.
    """
    if len(rows) != 1 or "metrics" not in rows[0]:
        raise EngineError(
            f"Delta's OPTIMIZE of {table} on {where} answered {len(rows)} row(s) without the "
            f"expected 'metrics' column: {rows[:1]!r}"
        )
    return as_dict(rows[0]["metrics"])
