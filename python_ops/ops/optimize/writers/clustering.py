"""Liquid clustering as maintenance: Delta's own clustering OPTIMIZE, due from the log.

On a table with liquid clustering (table feature ``clustering``, or ``liquid``, Databricks
Runtime 13.x's preview name) OPTIMIZE is Delta's clustering OPTIMIZE: Delta picks the files not
yet clustered and rewrites them clustered on the table's clustering columns. Our planner's
bins, Z-order and partition ``WHERE`` do not apply (Delta refuses the last two on such tables).

What the log says (checked against Delta 4.4):
- a file Delta's clustering OPTIMIZE wrote carries ``clusteringProvider: "liquid"`` in its
  ``add`` action; every other file (appends, MERGE, CTAS) was written since the last clustering
  and is what the next OPTIMIZE clusters, so those files and bytes are the due rule;
- ``ALTER TABLE ... CLUSTER BY`` commits operation ``CLUSTER BY``. Files clustered on the old
  columns still count as clustered and a plain OPTIMIZE leaves them (it answered 0 files on
  Delta 4.4), so after a change the next OPTIMIZE is ``OPTIMIZE ... FULL``, once: until an
  OPTIMIZE commit with ``isFull`` follows the change.
"""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass
from typing import Any

from python_ops.delta.log.commits import commit_actions
from python_ops.delta.log.log_files import LogFileKind
from python_ops.delta.state.snapshot import Snapshot
from python_ops.delta.table.features import CLUSTERING_FEATURES, Op, Writer
from python_ops.delta.table.protocol import table_features
from python_ops.delta_sql import DeltaSql
from python_ops.errors import EngineError
from python_ops.ops.audit import Audit, as_audit
from python_ops.ops.optimize.writers.delta_statement import (
    MARKER_PREFIX,
    MAX_FILE_SIZE,
    USER_METADATA,
    WRITER_DELTA_SQL,
    as_dict,
    marked_commit,
    optimize_metrics,
    run_marked,
    unmarked_answer,
)
from python_ops.ops.results import OptimizeResult
from python_ops.ops.writer_choice import delta_writer_for
from python_ops.storage import Storage

log = logging.getLogger(__name__)

#: Commits read back from the newest when looking for a clustering-column change.
HISTORY_SCAN_LIMIT = 500
#: Operations after which no earlier clustering-column change matters (all data rewritten).
_RESETS = frozenset(
    {
        "CREATE TABLE",
        "CREATE TABLE AS SELECT",
        "CREATE OR REPLACE TABLE",
        "CREATE OR REPLACE TABLE AS SELECT",
        "REPLACE TABLE",
        "REPLACE TABLE AS SELECT",
    }
)


def is_clustered(snapshot: Snapshot) -> bool:
    """Whether the table uses liquid clustering (its protocol names the feature)."""
    features = table_features(snapshot.protocol, location=snapshot.location).all
    return bool(features & set(CLUSTERING_FEATURES))


@dataclass(frozen=True)
class ClusteringState:
    """What the next clustering OPTIMIZE has to do, read from the log.

    Attributes:
        files: Live data files.
        bytes: Their bytes.
        unclustered_files: Files written since the last clustering (no ``clusteringProvider``).
        unclustered_bytes: Their bytes.
        columns_changed_at: Version of a ``CLUSTER BY`` commit no OPTIMIZE FULL has followed
            yet (None: none within the newest ``HISTORY_SCAN_LIMIT`` commits).
    """

    files: int
    bytes: int
    unclustered_files: int
    unclustered_bytes: int
    columns_changed_at: int | None

    @property
    def full(self) -> bool:
        """True when the next OPTIMIZE must re-cluster every file (``OPTIMIZE ... FULL``)."""
        return self.columns_changed_at is not None


def _is_true(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.lower() == "true")


def columns_changed_at(storage: Storage, snapshot: Snapshot) -> int | None:
    """The ``CLUSTER BY`` commit that no OPTIMIZE FULL has followed yet, if any.

    Commits are read from the newest back (at most ``HISTORY_SCAN_LIMIT``) until the first
    that settles it: ``CLUSTER BY`` (a change waiting), an OPTIMIZE with ``isFull`` or a
    create/replace of the table (nothing waiting).

    Args:
        storage: The table's storage.
        snapshot: Its snapshot (its log listing names the commits).

    Returns:
        The version of the waiting change, or None.
    """
    versions = sorted(
        (
            f.version
            for f in snapshot.log_files
            if f.kind is LogFileKind.COMMIT
            and f.version is not None
            and f.version <= snapshot.version
        ),
        reverse=True,
    )
    for version in versions[:HISTORY_SCAN_LIMIT]:
        info: dict[str, Any] = next(
            (a["commitInfo"] for a in commit_actions(storage, version) if "commitInfo" in a), {}
        )
        operation = info.get("operation")
        parameters = info.get("operationParameters") or {}
        if operation == "CLUSTER BY":
            return version
        if operation == "OPTIMIZE" and _is_true(parameters.get("isFull")):
            return None
        if operation in _RESETS:
            return None
    return None


def clustering_state(storage: Storage, snapshot: Snapshot) -> ClusteringState:
    """Files written since the last clustering and any clustering-column change waiting.

    Args:
        storage: The table's storage.
        snapshot: Its latest snapshot.

    Returns:
        The state.
    """
    unclustered = [f for f in snapshot.files if f.clustering_provider is None]
    return ClusteringState(
        files=len(snapshot.files),
        bytes=sum(f.size_bytes for f in snapshot.files),
        unclustered_files=len(unclustered),
        unclustered_bytes=sum(f.size_bytes for f in unclustered),
        columns_changed_at=columns_changed_at(storage, snapshot),
    )


def _plan(state: ClusteringState, full: bool) -> dict[str, Any]:
    return {
        "scope": "clustering",
        "full": full,
        "columns_changed_at": state.columns_changed_at,
        "files_to_rewrite": state.files if full else state.unclustered_files,
        "bytes_to_rewrite": state.bytes if full else state.unclustered_bytes,
        "partitions": [],
        "zorder_by": [],
    }


def cluster(
    storage: Storage,
    snapshot: Snapshot,
    *,
    full: bool | None = None,
    target_size_bytes: int | None = None,
    dry_run: bool = False,
    sql: DeltaSql | None = None,
    started: float | None = None,
    audit: Audit | bool = True,
) -> OptimizeResult:
    """Run Delta's clustering OPTIMIZE on a liquid-clustered table.

    Args:
        storage: The table's storage.
        snapshot: Its latest snapshot.
        full: ``OPTIMIZE ... FULL``; None: when a clustering-column change waits for it.
        target_size_bytes: Delta's ``optimize.maxFileSize`` for the statement (None: Delta's).
        dry_run: Only say what would run.
        sql: The engine's Delta SQL (None or no Delta: the local Delta writer).
        started: ``time.perf_counter()`` when the op started.
        audit: Whether the run is audited, and the caller's labels (``ops.audit.Audit``).

    Returns:
        What Delta's OPTIMIZE did, from its output row; the commit found by its marker.

    Raises:
        UnsupportedFeatureError: When no Delta writer is available here.
        EngineError: When Delta's answer is not what its OPTIMIZE returns.
    """
    started = time.perf_counter() if started is None else started
    location = storage.root
    state = clustering_state(storage, snapshot)
    full = state.full if full is None else full
    plan = _plan(state, full)
    params = {"full": full, "columns_changed_at": state.columns_changed_at}
    nothing = not full and state.unclustered_files == 0
    writer = f"{WRITER_DELTA_SQL} (clustering)"
    metrics: dict[str, Any] = {}
    version: int | None = None
    if not dry_run and not nothing:
        try:
            gate, runner = delta_writer_for(snapshot, Op.COMPACTION, sql, location)
            if gate is not Writer.DELTA or runner is None:
                raise EngineError(f"{location}: a clustered table needs Delta's own writer")
            writer = f"{WRITER_DELTA_SQL} (clustering) on {runner.where}"
            marker = MARKER_PREFIX + uuid.uuid4().hex
            settings: dict[str, str | None] = {USER_METADATA: marker}
            if target_size_bytes is not None:
                settings[MAX_FILE_SIZE] = str(target_size_bytes)
            table = runner.table(location)
            statement = f"OPTIMIZE {table}" + (" FULL" if full else "")
            rows = run_marked(
                runner, statement, settings, location=location, after=snapshot.version
            )
            metrics = optimize_metrics(rows, table, runner.where)
            if int(metrics.get("numFilesAdded") or 0) or int(metrics.get("numFilesRemoved") or 0):
                found = marked_commit(location, snapshot.version, marker)
                if found is None:
                    said = f"Delta's clustering OPTIMIZE of {table} answered it rewrote files"
                    raise unmarked_answer(location, snapshot.version, marker, said)
                version = found[0]
        except Exception as err:
            as_audit(audit).record("optimize", location, "failed", {**params, "error": str(err)})
            raise
    result = OptimizeResult(
        location=location,
        dry_run=dry_run,
        zorder_by=(),
        plan=plan,
        skipped_reason="every file is clustered" if nothing else None,
        version_before=snapshot.version,
        commits=() if version is None else (version,),
        files_added=int(metrics.get("numFilesAdded") or 0),
        files_removed=int(metrics.get("numFilesRemoved") or 0),
        bytes_added=int(as_dict(metrics.get("filesAdded")).get("totalSize") or 0),
        bytes_removed=int(as_dict(metrics.get("filesRemoved")).get("totalSize") or 0),
        partitions_optimized=0,
        files_considered=int(metrics.get("totalConsideredFiles") or 0),
        files_skipped=int(metrics.get("totalFilesSkipped") or 0),
        duration_s=time.perf_counter() - started,
        writer=writer,
    )
    if full and version is not None:
        log.info("OPTIMIZE FULL of %s re-clustered every file (version %d)", location, version)
    as_audit(audit).record("optimize", location, "succeeded", {**params, **result.to_dict()})
    return result
