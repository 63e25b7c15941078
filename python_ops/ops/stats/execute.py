"""The statistics op: plan, compute each due file's statistics, commit them once.

``compute_stats`` is what ``python -m python_ops stats`` and the maintenance runner call. It
refuses (a named error, exit 2 on the command line) before computing or writing anything on a
table feature the protocol gate refuses for ``stats``, a store where no put-if-absent is made
(an S3 endpoint that ignores ``If-None-Match``, other object stores), a statistics column of a
type it cannot compute, or a watched column the table lacks.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from python_ops.delta.log.actions import AddFile
from python_ops.delta.state.snapshot import read_snapshot
from python_ops.delta.writing.log_commit import (
    MAX_ATTEMPTS,
    changed_since,
    commit_info,
    refuse_without_atomic_commits,
    require_atomic_commits,
    write_commit,
)
from python_ops.errors import StatsUnsupportedError, StorageError, WriterError
from python_ops.ops.audit import Audit, as_audit
from python_ops.ops.results import to_dict
from python_ops.ops.stats.columns import STATS_COLUMNS, order_like_schema
from python_ops.ops.stats.compute import file_stats
from python_ops.ops.stats.log_actions import raw_actions
from python_ops.ops.stats.plan import StatsPlan, plan_stats
from python_ops.ops.stats.stats_json import stats_json
from python_ops.storage import Storage, open_storage

OPERATION = "COMPUTE STATS"


@dataclass(frozen=True)
class StatsResult:
    """What the statistics op did (every count measured, not estimated).

    Attributes:
        location: The table.
        dry_run: Nothing was computed or written.
        read_version: The version planned on.
        commit_version: The ``COMPUTE STATS`` commit, None when nothing was committed.
        num_files: Live files.
        files_due: Files whose statistics lacked a statistics column.
        files_without_stats: Of those, files with no statistics at all.
        files_updated: Files re-added with new statistics.
        files_from_footer: Files whose statistics came from the Parquet footer alone.
        files_read: Files whose rows were read (some column not exact in the footer).
        bytes_read: Size of the files whose rows were read.
        files_with_deletion_vectors: Updated files that keep a deletion vector
            (``tightBounds=false``).
        watched_columns: The watched columns (partition columns left out).
        stats_columns: The statistics columns' leaf paths after the op.
        stats_columns_before: ``delta.dataSkippingStatsColumns`` before.
        stats_columns_after: The value set, None when unchanged.
        features_ruled: Table features whose rule applied.
        attempts: Commit attempts (more than one after a concurrent commit).
        duration_s: Wall seconds.
    """

    location: str
    dry_run: bool
    read_version: int
    commit_version: int | None
    num_files: int
    files_due: int
    files_without_stats: int
    files_updated: int
    files_from_footer: int
    files_read: int
    bytes_read: int
    files_with_deletion_vectors: int
    watched_columns: tuple[str, ...]
    stats_columns: tuple[str, ...]
    stats_columns_before: str | None
    stats_columns_after: str | None
    features_ruled: tuple[str, ...]
    attempts: int
    duration_s: float

    def to_dict(self) -> dict[str, Any]:
        """The result as a plain dict (for JSON, Jinja and audit records)."""
        return to_dict(self)


def _leaf_names(plan: StatsPlan) -> tuple[str, ...]:
    out: list[str] = []

    def walk(fields: Any, prefix: str) -> None:
        for f in fields:
            if f.is_struct:
                walk(f.children, prefix + f.name + ".")
            else:
                out.append(prefix + f.name)

    walk(plan.fields, "")
    return tuple(out)


def _compute(storage: Storage, plan: StatsPlan) -> tuple[dict[Any, str], int, int]:
    """New stats JSON per file key, files from the footer alone, bytes of files read."""
    new: dict[Any, str] = {}
    footer = 0
    read_bytes = 0
    for f in plan.files_due:
        if f.relative_path is None:
            raise StatsUnsupportedError(
                f"{storage.root}: file {f.path} lies outside the table root (a shallow clone); "
                "its statistics are not computed here. Nothing was written."
            )
        fs, path = storage.arrow_path(f.relative_path)
        try:
            with fs.open_input_file(path) as handle:
                stats = file_stats(handle, plan.fields, string_prefix=plan.string_prefix)
        except StatsUnsupportedError as err:
            raise StatsUnsupportedError(f"{storage.root}: '{f.relative_path}': {err}") from err
        except FileNotFoundError as err:
            raise StorageError(
                f"{storage.root}: live data file '{f.relative_path}' is missing; nothing was "
                "written"
            ) from err
        except (OSError, pa.ArrowInvalid) as err:
            raise StorageError(
                f"{storage.root}: '{f.relative_path}' cannot be read as Parquet ({err}); "
                "nothing was written"
            ) from err
        assert stats is not None
        footer += stats.from_footer
        read_bytes += 0 if stats.from_footer else f.size_bytes
        tight = (f.deletion_vector is None) if plan.tight_bounds_flag else None
        try:
            new[f.key] = stats_json(plan.fields, stats, tight_bounds=tight)
        except OverflowError as err:
            raise StatsUnsupportedError(
                f"{storage.root}: '{f.relative_path}' holds a timestamp outside years 1-9999, "
                "which this op does not format as Delta does. Nothing was written."
            ) from err
    return new, footer, read_bytes


def _actions(
    storage: Storage, plan: StatsPlan, files: Sequence[AddFile], new: dict[Any, str], read: int
) -> list[dict[str, Any]]:
    adds, metadata = raw_actions(storage, plan.snapshot, files)
    metrics = {"numFilesUpdated": str(len(files))}
    info = commit_info(
        OPERATION, read, parameters={"predicate": json.dumps(["true"])}, metrics=metrics
    )
    actions: list[dict[str, Any]] = [{"commitInfo": info}]
    if plan.stats_columns_after is not None:
        schema = json.loads(plan.snapshot.metadata.schema_string)
        configuration = dict(metadata.get("configuration") or {})
        configuration[STATS_COLUMNS] = order_like_schema(plan.stats_columns_after, schema)
        actions.append({"metaData": {**metadata, "configuration": configuration}})
    for f in files:
        add = {**adds[f.key], "dataChange": False, "stats": new[f.key]}
        actions.append({"add": add})
    return actions


def _commit(storage: Storage, plan: StatsPlan, new: dict[Any, str]) -> tuple[int, int, int]:
    """Commit; returns (version, files committed, attempts)."""
    read = plan.snapshot.version
    files = list(plan.files_due)
    for attempt in range(1, MAX_ATTEMPTS + 1):
        version = read + 1
        if write_commit(storage, version, _actions(storage, plan, files, new, read)):
            return version, len(files), attempt
        latest = read_snapshot(storage).version
        structural, removed = changed_since(storage, plan.snapshot.version, latest)
        if structural:
            raise WriterError(
                f"{storage.root}: a concurrent commit changed the table's metadata or protocol "
                f"after version {plan.snapshot.version}; the statistics were not committed "
                "(nothing was written). Run the op again."
            )
        files = [f for f in files if f.key not in removed]
        read = latest
    raise WriterError(
        f"{storage.root}: {MAX_ATTEMPTS} concurrent commits took each version the statistics "
        "commit tried; nothing was written. Run the op again."
    )


def compute_stats(
    location: str,
    *,
    columns: Sequence[str] = (),
    dry_run: bool = False,
    set_stats_columns: bool = True,
    audit: Audit | bool = True,
) -> StatsResult:
    """Fill in missing file statistics, as Delta's ``COMPUTE STATS`` recompute commits them.

    Args:
        location: The table.
        columns: Watched columns besides the table's indexed ones (the advisor's under
            ``maintenance_stats: auto``).
        dry_run: Plan only: count the files due, compute and write nothing.
        set_stats_columns: Set ``delta.dataSkippingStatsColumns`` when a watched column is not
            indexed (otherwise such a column is left unindexed).
        audit: Whether the run is audited, and the caller's labels (``ops.audit.Audit``).

    Returns:
        What was done.

    Raises:
        UnsupportedFeatureError: A feature the protocol gate refuses for ``stats``.
        StatsUnsupportedError: A store without put-if-absent here, a column type or a file this
            op cannot handle.
        ConfigError: A watched column the table lacks or cannot index, or an S3 endpoint that
            ignores conditional writes.
        WriterError: Concurrent commits kept taking the version (nothing written).
    """
    started = time.monotonic()
    params = {"columns": list(columns), "dry_run": dry_run}
    storage = open_storage(location)
    refuse_without_atomic_commits(storage)
    plan = plan_stats(storage, columns=columns, set_stats_columns=set_stats_columns)
    new: dict[Any, str] = {}
    footer = read_bytes = 0
    commit = None
    updated = 0
    attempts = 0
    if plan.has_work and not dry_run:
        try:
            require_atomic_commits(storage)
            new, footer, read_bytes = _compute(storage, plan)
            commit, updated, attempts = _commit(storage, plan, new)
        except Exception as err:
            as_audit(audit).record(
                "stats", plan.snapshot.location, "failed", {**params, "error": str(err)}
            )
            raise
    dv_files = sum(1 for f in plan.files_due if f.deletion_vector is not None)
    result = StatsResult(
        location=plan.snapshot.location,
        dry_run=dry_run,
        read_version=plan.snapshot.version,
        commit_version=commit,
        num_files=len(plan.snapshot.files),
        files_due=len(plan.files_due),
        files_without_stats=plan.files_without_stats,
        files_updated=updated,
        files_from_footer=footer,
        files_read=len(new) - footer,
        bytes_read=read_bytes,
        files_with_deletion_vectors=dv_files if commit is not None else 0,
        watched_columns=plan.watched,
        stats_columns=_leaf_names(plan),
        stats_columns_before=plan.stats_columns_before,
        stats_columns_after=plan.stats_columns_after,
        features_ruled=plan.features_ruled,
        attempts=attempts,
        duration_s=time.monotonic() - started,
    )
    as_audit(audit).record("stats", result.location, "succeeded", {**params, **result.to_dict()})
    return result
