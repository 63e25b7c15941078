"""What this build wrote into a model's table: its own commits, read from the Delta log.

The post-hook decides from what the build did, not from the table's whole state. Which commits
are the build's: the adapter records, when the model's materialization starts, the wall clock
and the table's latest version (``BuildFacts``: plain values, so this module needs no dbt). The
build's commits are then the versions after ``version_before`` (read one by one until the next
is missing: no listing), or, for a table that had no version then (its first build, or a catalog
that did not know it) and when there is no version after it (nothing committed, or the table
re-created from version 0 in a replaced directory), the newest commits whose ``commitInfo``
timestamp is at or after the start (a listing, walked back from the head). Commits of
maintenance itself (OPTIMIZE, VACUUM, REORG, COMPUTE STATS, or any commit carrying this
package's run marker) and commits that rewrote rows without changing them (every ``add`` is
``dataChange: false``) are never attributed to the build. A concurrent writer that committed to
the same table during the build cannot be told apart from the build by the log (no writer
records dbt's node): its commits count as the build's, which can only make maintenance run,
never skip it wrongly.

From each commit: the files written, from the writer's ``operationMetrics`` (Delta on Spark
writes ``numFiles`` for WRITE and CREATE/REPLACE AS SELECT, ``numTargetFilesAdded`` for MERGE,
``numAddedFiles`` for UPDATE/DELETE, values as strings; Sail writes all of these as numbers;
delta-rs 1.6 writes ``num_added_files`` for WRITE/DELETE/UPDATE and ``num_target_files_added``
for MERGE, as numbers), else the count of its ``add`` actions that are new files; the rows
written (``numOutputRows``, delta-rs' ``num_added_rows``, else the files' ``numRecords``
statistics); and the partitions its ``add`` actions touched (``partitionValues``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from python_ops.delta.log.commits import commit_actions, commit_info, commit_versions
from python_ops.delta.log.json_text import loads
from python_ops.delta.log.log_files import LOG_DIR
from python_ops.delta.state.version_checksum import VersionChecksum, replayed_checksum
from python_ops.errors import MaintenanceError
from python_ops.storage import Storage, open_storage

# operationMetrics naming the files a commit wrote, first match wins (see the module docstring)
FILE_METRICS = (
    "numTargetFilesAdded",
    "num_target_files_added",
    "num_added_files",
    "numAddedFiles",
    "numFiles",
)
# operationMetrics naming the rows a commit wrote
ROW_METRICS = ("numOutputRows", "num_added_rows", "num_output_rows")
# operations of maintenance (Delta's and this package's): never a build's write
MAINTENANCE_OPERATIONS = frozenset(
    {"OPTIMIZE", "VACUUM START", "VACUUM END", "REORG", "COMPUTE STATS", "SET TBLPROPERTIES"}
)
RUN_MARKER = "python_ops.run"  # set in commitInfo by every commit this package makes

Partition = tuple[tuple[str, str | None], ...]


@dataclass(frozen=True)
class BuildFacts:
    """What the front end knew of a model's build (dbt: recorded when its materialization began).

    Attributes:
        started_at_ms: When the build started (wall clock, ms since the epoch).
        version_before: The table's latest version then (None: it had none, or not known).
        build_s: Seconds the build took, up to the post-hook.
        location_was_empty: Nothing existed at the table's location then (a local path the
            front end checked, ``location_is_empty``): every file there was written since.
    """

    started_at_ms: int
    version_before: int | None
    build_s: float
    location_was_empty: bool = False


@dataclass(frozen=True)
class BuildCommit:
    """One commit of the build.

    Attributes:
        version: Its version.
        operation: Its ``commitInfo.operation`` ('' when none).
        files_written: Files it wrote.
        files_metric: The ``operationMetrics`` key that gave it ('' : its ``add`` actions).
        files_added: Distinct new files its ``add`` actions name (``dataChange`` not false, not
            removed in the same commit: a file re-added with a deletion vector is no new file).
        rows_written: Rows it wrote (None: neither a metric nor statistics say).
        partitions: The partitions its ``add`` actions touched.
    """

    version: int
    operation: str
    files_written: int
    files_metric: str
    rows_written: int | None
    partitions: tuple[Partition, ...]
    files_added: int = 0


@dataclass(frozen=True)
class BuildWrites:
    """What one build wrote into a table.

    Attributes:
        facts: The build's facts as the front end gave them.
        commits: The build's commits, oldest first.
        not_attributed: Versions in the build's window that are not its own (maintenance).
        partition_columns: The partition columns the commits' files carry (empty: none).
        head_version: The newest version read (the build's, or maintenance's after it); None:
            no commit was found.
        state: The table at ``head_version`` replayed from the commits read, when they are its
            whole log (a table the build created; ``replayed_checksum``); None: not known (the
            hook reads the newest version's checksum file).
    """

    facts: BuildFacts
    commits: tuple[BuildCommit, ...]
    not_attributed: tuple[int, ...] = ()
    partition_columns: tuple[str, ...] = ()
    head_version: int | None = None
    state: VersionChecksum | None = None

    @property
    def files_written(self) -> int:
        """Files the build wrote."""
        return sum(c.files_written for c in self.commits)

    @property
    def rows_written(self) -> int | None:
        """Rows the build wrote (None when a commit does not say)."""
        rows = [c.rows_written for c in self.commits]
        return None if any(r is None for r in rows) else sum(r for r in rows if r is not None)

    @property
    def partitions(self) -> tuple[Partition, ...]:
        """Every partition the build touched, sorted."""
        return tuple(sorted({p for c in self.commits for p in c.partitions}, key=str))

    def skip_reason(self, min_files_written: int) -> str | None:
        """Why maintenance is skipped after this build (None: it is decided as usual).

        Args:
            min_files_written: The model's ``maintenance_min_files_written``.

        Returns:
            ``wrote nothing: ...`` or ``wrote N file(s), fewer than ...``; None to go on.
        """
        files = self.files_written
        if files >= min_files_written:
            return None
        if not self.commits:
            return "wrote nothing: the build made no commit to the table"
        if files == 0:
            versions = ", ".join(str(c.version) for c in self.commits)
            return f"wrote nothing: its commit(s) (version {versions}) added no file"
        return (
            f"wrote {files} file(s), fewer than maintenance_min_files_written={min_files_written}"
        )

    def scope(self) -> str | None:
        """A partition predicate selecting exactly the partitions the build touched.

        None for an unpartitioned table (the table is its one partition). The values are quoted
        strings (``partition_scope`` reads them as the column's type); a null partition value
        is ``IS NULL``.
        """
        if not self.partition_columns:
            return None
        terms = []
        for partition in self.partitions:
            parts = [
                f"`{c}` IS NULL" if v is None else f"`{c}` = '{v.replace(chr(39), chr(39) * 2)}'"
                for c, v in partition
            ]
            terms.append("(" + " AND ".join(parts) + ")")
        return " OR ".join(terms) if terms else None

    def describe(self) -> str:
        """One line: the commits, files, rows and partitions written."""
        if not self.commits:
            return "no commit"
        versions = [c.version for c in self.commits]
        span = str(versions[0]) if len(versions) == 1 else f"{versions[0]}-{versions[-1]}"
        rows = self.rows_written
        text = f"version {span} wrote {self.files_written} file(s)"
        if rows is not None:
            text += f", {rows} row(s)"
        if self.partition_columns:
            text += f" in {len(self.partitions)} partition(s)"
        return text

    def history_columns(self) -> dict[str, Any]:
        """The build's columns of each history row (``HistoryRecord``)."""
        return {
            "build_s": self.facts.build_s,
            "build_files_written": self.files_written,
            "build_rows_written": self.rows_written,
            "build_versions": json.dumps([c.version for c in self.commits]),
        }


def _metric(metrics: dict[str, Any], keys: tuple[str, ...]) -> tuple[int, str] | None:
    for key in keys:
        value = metrics.get(key)
        if value is None or isinstance(value, bool):
            continue
        try:
            return int(value), key  # Delta on Spark writes strings, Sail and delta-rs numbers
        except (TypeError, ValueError):
            continue
    return None


def _records(add: dict[str, Any]) -> int | None:
    stats = add.get("stats")
    if not isinstance(stats, str):
        return None
    try:
        value = loads(stats).get("numRecords")
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def build_commit(version: int, actions: list[dict[str, Any]]) -> BuildCommit | None:
    """The commit as a build's write, or None when it is not one (maintenance)."""
    raw_info: dict[str, Any] | None = None  # the first commitInfo (an object: json_lines)
    adds: list[dict[str, Any]] = []
    removed: set[Any] = set()
    for a in actions:  # one pass (every post-hook reads its build's commit)
        if isinstance(add := a.get("add"), dict):
            adds.append(add)
        if isinstance(remove := a.get("remove"), dict):
            removed.add(remove.get("path"))
        if raw_info is None and "commitInfo" in a:
            raw_info = a["commitInfo"]
    # the operation and metrics from the commitInfo already found (no second pass); metrics
    # that are not an object tell nothing: the files are counted instead
    raw = raw_info or {}
    operation = raw.get("operation") or ""
    operation_metrics = raw.get("operationMetrics")
    if not isinstance(operation_metrics, dict):
        operation_metrics = {}
    if operation in MAINTENANCE_OPERATIONS or RUN_MARKER in raw:
        return None
    changed = [a for a in adds if a.get("dataChange") is not False]
    if adds and not changed:
        return None  # the same rows rewritten (a compaction by another tool)
    new_files, new_paths, partitions = [], set(), set()
    for a in changed:
        values = a.get("partitionValues") or {}
        partitions.add(tuple(sorted((str(k), v) for k, v in values.items())) if values else ())
        if (path := a.get("path")) not in removed:  # not a DV re-add
            new_files.append(a)
            new_paths.add(path)
    metric = _metric(operation_metrics, FILE_METRICS)
    files, files_metric = metric if metric is not None else (len(new_files), "")
    rows_metric = _metric(operation_metrics, ROW_METRICS)
    if rows_metric is not None:
        rows: int | None = rows_metric[0]
    else:  # each new file's statistics, when every one has them
        counted = [_records(a) for a in new_files]
        rows = None if any(r is None for r in counted) else sum(r for r in counted if r)
    return BuildCommit(
        version,
        operation,
        files,
        files_metric,
        rows,
        tuple(sorted(partitions, key=str)),
        files_added=len(new_paths),
    )


def _versions_after(storage: Storage, version: int) -> list[tuple[int, list[dict[str, Any]]]]:
    """The commits after ``version``, read one by one until the next one is missing.

    The first is read at once (a build commits); each later one is first asked for by name
    where that costs one call (``probes_by_name``): the first missing name, which ends most
    windows, is then a plain answer, not an error raised through the reader.
    """
    out: list[tuple[int, list[dict[str, Any]]]] = []
    while True:
        version += 1
        if out and storage.probes_by_name and not storage.exists(f"{LOG_DIR}/{version:020d}.json"):
            return out
        try:
            out.append((version, commit_actions(storage, version)))
        except (FileNotFoundError, MaintenanceError):
            return out


def _versions_since(storage: Storage, started_at_ms: int) -> list[tuple[int, list[dict[str, Any]]]]:
    """The newest commits whose timestamp is at or after ``started_at_ms``, oldest first."""
    out = []
    for version in reversed(commit_versions(storage)):
        actions = commit_actions(storage, version)
        # a commit without a timestamp counts as the build's: never skip on a guess
        if commit_info(version, actions, started_at_ms).timestamp_ms < started_at_ms:
            break
        out.append((version, actions))
    return out[::-1]


def read_build_writes(location: str | Storage, facts: BuildFacts) -> BuildWrites:
    """The build's own commits of a table and what they wrote.

    Reads the build's commits and one name more (the first missing version), and lists nothing
    when the build started from a known version: the cost follows what the build wrote, not
    the length of the table's log (``tests/integration/test_build_writes_costs.py``).

    Args:
        location: The table (or its open storage).
        facts: What the front end recorded when the build started.

    Returns:
        What the build wrote (no commit: nothing).

    Raises:
        MaintenanceError: When the log cannot be read.
    """
    storage = location if isinstance(location, Storage) else open_storage(location)
    before = facts.version_before
    if before is None and facts.location_was_empty:
        before = -1  # an empty location had no version: the build's commits start at 0
    window = _versions_after(storage, before) if before is not None else []
    if not window:  # no version then, or none after it: a table re-created from version 0
        # (its directory replaced) has commits only the clock finds; else one commit is read
        window = _versions_since(storage, facts.started_at_ms)
    commits, others = [], []
    columns: tuple[str, ...] = ()
    for version, actions in window:
        commit = build_commit(version, actions)
        if commit is None:
            others.append(version)
            continue
        commits.append(commit)
        for partition in commit.partitions:
            columns = columns or tuple(c for c, _ in partition)
    head = window[-1][0] if window else None
    return BuildWrites(
        facts, tuple(commits), tuple(others), columns, head, _state_after(storage, window)
    )


def _state_after(
    storage: Storage, window: list[tuple[int, list[dict[str, Any]]]]
) -> VersionChecksum | None:
    """The table after the window's commits, replayed from them (None: not known).

    Known only when they are its whole log (a table its build created); else the post-hook
    reads the newest version's checksum file.
    """
    if window and window[0][0] == 0 and sum(len(a) for _, a in window) <= _MAX_REPLAYED_ACTIONS:
        return replayed_checksum(storage.root, window)
    return None


# a created table's state is replayed from its commits up to this many actions (a few hundred
# microseconds); a bigger first write reads its checksum file instead
_MAX_REPLAYED_ACTIONS = 1000


def holds_first_commit(location: str) -> bool:
    """Whether the table at ``location`` has its first commit (version 0), read to know.

    After a build that created its table where nothing was, what tells the table is a Delta
    table: read inside ``commits_shared``, the commit is kept for the build's writes, which read
    it next (no separate check that the log exists).

    Args:
        location: The table location.

    Returns:
        False when there is no such commit or it cannot be read.
    """
    try:
        commit_actions(open_storage(location), 0)
    except (FileNotFoundError, MaintenanceError):
        return False
    return True
