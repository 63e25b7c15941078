"""The statistics op's execution: compute each due file's statistics, commit them once.

The commit goes through the ``write`` collaborator (``write_commit``: a put-if-absent of the
version's file); a version another writer took is retried at the next one, with the files that
writer removed left out, and a metadata or protocol change refuses (nothing written).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa

from python_ops.delta.log.actions import AddFile
from python_ops.delta.state.snapshot import read_snapshot
from python_ops.delta.writing.log_commit import (
    MAX_ATTEMPTS,
    changed_since,
    commit_info,
    require_atomic_commits,
    write_commit,
)
from python_ops.errors import StatsUnsupportedError, StorageError, WriterError
from python_ops.ops.results import StatsResult
from python_ops.ops.stats.columns import STATS_COLUMNS, order_like_schema
from python_ops.ops.stats.compute import file_stats
from python_ops.ops.stats.log_actions import raw_actions
from python_ops.ops.stats.options import StatsOptions
from python_ops.ops.stats.plan import StatsPlan
from python_ops.ops.stats.stats_json import stats_json
from python_ops.storage import Storage

OPERATION = "COMPUTE STATS"
# publishes one commit file; False when the version is taken (``write_commit``)
CommitWriter = Callable[[Storage, int, list[dict[str, Any]]], bool]


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


def _commit(
    storage: Storage, plan: StatsPlan, new: dict[Any, str], write: CommitWriter
) -> tuple[int, int, int]:
    """Commit; returns (version, files committed, attempts)."""
    read = plan.snapshot.version
    files = list(plan.files_due)
    for attempt in range(1, MAX_ATTEMPTS + 1):
        version = read + 1
        if write(storage, version, _actions(storage, plan, files, new, read)):
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


def execute(
    plan: StatsPlan,
    *,
    storage: Storage,
    options: StatsOptions,
    started: float,
    write: CommitWriter = write_commit,
) -> StatsResult:
    """Compute the plan's statistics and commit them once (nothing in a dry run).

    Args:
        plan: The plan (``plan_stats``) on ``storage``.
        storage: The table's storage, where the files are read and the commit written.
        options: The run's options.
        started: ``time.monotonic()`` when the run started (the result's duration).
        write: Publishes one commit, False when its version is taken (``write_commit``).

    Returns:
        What was done, every count measured.

    Raises:
        StatsUnsupportedError: A file or value this op cannot handle (nothing written).
        StorageError: A live file missing or unreadable (nothing written).
        WriterError: Concurrent commits kept taking the version (nothing written).
    """
    new: dict[Any, str] = {}
    footer = read_bytes = updated = attempts = 0
    commit = None
    if plan.has_work and not options.dry_run:
        require_atomic_commits(storage)
        new, footer, read_bytes = _compute(storage, plan)
        commit, updated, attempts = _commit(storage, plan, new, write)
    dv_files = sum(1 for f in plan.files_due if f.deletion_vector is not None)
    return StatsResult(
        location=plan.snapshot.location,
        dry_run=options.dry_run,
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
