"""Typed results of the ops: frozen dataclasses with snake_case fields, JSON-friendly.

One vocabulary across results, history and reports: a count of things in a state is
``num_<things>`` (``num_files``, ``num_tombstones``) and their size ``total_bytes``; a count of
what an op did is ``<things>_<verb>`` (``files_found``, ``files_deleted``, ``files_removed``,
``files_added``) with ``bytes_<verb>`` beside it; every duration is in seconds, ``*_s``.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from python_ops.values import retention_text


@dataclass(frozen=True)
class TableHealth:
    """What a table's Delta log says about its state (no data file is listed or read).

    Attributes:
        location: The normalised table location.
        version: Current (latest) table version.
        checkpoint_version: Version of the newest complete checkpoint, None if there is none.
        num_files: Live data files.
        total_bytes: Sum of the live files' sizes.
        small_file_threshold_bytes: Files strictly smaller than this count as small.
        num_small_files: Live files below the threshold.
        small_file_share: ``num_small_files / num_files`` (0.0 for an empty table).
        num_partitions: Distinct partition-value combinations among live files.
        partition_columns: The table's partition columns.
        num_log_files: Files directly in ``_delta_log`` (commits, checkpoints, checksums ...).
        num_tombstones: ``remove`` actions not yet expired (newer than the retention cutoff).
        deleted_file_retention_hours: The retention used for ``num_tombstones``.
        duration_s: Seconds taken to read the log and summarise it.
        deleted_rows: Rows deletion vectors delete (still in the data files until a purge).
        deleted_row_share: ``deleted_rows`` over the rows the live files hold (0.0 without
            deletion vectors).
        max_partition_deleted_share: The largest deleted-row share of one partition (what
            ``maintenance_purge_deleted_ratio`` is compared with).
        purge_reclaimable_bytes: Estimated bytes a purge of every file with a deletion vector
            would free (each file's size times its deleted share).
    """

    location: str
    version: int
    checkpoint_version: int | None
    num_files: int
    total_bytes: int
    small_file_threshold_bytes: int
    num_small_files: int
    small_file_share: float
    num_partitions: int
    partition_columns: tuple[str, ...]
    num_log_files: int
    num_tombstones: int
    deleted_file_retention_hours: float
    duration_s: float
    deleted_rows: int = 0
    deleted_row_share: float = 0.0
    max_partition_deleted_share: float = 0.0
    purge_reclaimable_bytes: int = 0

    def to_dict(self) -> dict[str, Any]:
        """The result as a plain dict (for JSON, Jinja and audit records)."""
        return to_dict(self)


_SCALARS = (str, int, float, bool, type(None))


@functools.cache
def _field_names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls))


def _plain(value: Any) -> Any:
    if type(value) in _SCALARS:  # most values, e.g. each field of 100,000 selected paths
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {name: _plain(getattr(value, name)) for name in _field_names(type(value))}
    if isinstance(value, Sequence) and not isinstance(value, str):  # tuples, lists, paths
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def to_dict(result: Any, *, exclude: tuple[str, ...] = ()) -> dict[str, Any]:
    """Convert a result dataclass into plain dicts/lists/scalars.

    Args:
        result: A dataclass instance from this module.
        exclude: Fields left out (never converted: path lists can be long).

    Returns:
        A JSON-serialisable dict.
    """
    return {
        f.name: _plain(getattr(result, f.name))
        for f in dataclasses.fields(result)
        if f.name not in exclude
    }


@dataclass(frozen=True, slots=True)  # one per selected path: millions on a big table
class VacuumFile:
    """One path VACUUM selected.

    Attributes:
        path: Path relative to the table root.
        size_bytes: Size in bytes (0 for directories).
        is_dir: True for a directory.
    """

    path: str
    size_bytes: int
    is_dir: bool


@dataclass(frozen=True)
class VacuumKeptDir:
    """A selected directory VACUUM kept: it was not empty when its turn came (not a failure).

    Attributes:
        path: Path relative to the table root.
        reason: Why, e.g. ``not empty: holds p=1/part-0.parquet (modified after the cutoff: a
            writer may be filling it)``.
    """

    path: str
    reason: str


@dataclass(frozen=True)
class VacuumGroup:
    """Totals of selected paths under one partition directory or top-level directory.

    Attributes:
        prefix: The first path component ("" for files directly in the table root).
        files: Selected files.
        bytes: Their total size.
        dirs: Selected directories.
    """

    prefix: str
    files: int
    bytes: int
    dirs: int


@dataclass(frozen=True)
class VacuumDiagnostics:
    """Where a VACUUM with ``cluster_listing`` did its work (for checks and troubleshooting).

    Attributes:
        driver_pid: The process that called ``vacuum``.
        num_prefixes_in_tasks: Directories (prefixes) listed in Spark tasks.
        num_listing_tasks: Spark tasks that listed them.
        listing_pids: Process ids the listing tasks ran in (distinct, sorted).
        num_delete_tasks: Spark tasks that deleted (0 for a dry run or deletes on the driver).
        delete_pids: Process ids the delete tasks ran in (distinct, sorted).
        num_key_ranges_in_tasks: Key ranges of one big prefix listed in tasks (an
            unpartitioned table on an object store; 0 when no prefix was cut).
    """

    driver_pid: int
    num_prefixes_in_tasks: int
    num_listing_tasks: int
    listing_pids: tuple[int, ...]
    num_delete_tasks: int = 0
    delete_pids: tuple[int, ...] = ()
    num_key_ranges_in_tasks: int = 0


@dataclass(frozen=True)
class VacuumResult:
    """What a VACUUM run found and did.

    Attributes:
        location: The table location.
        dry_run: True when nothing was deleted.
        table_version: The table version the cleanup read.
        table_version: The snapshot version the protected set was computed from.
        retention_hours: Retention used.
        retention_source: ``requested``, ``table property`` or ``default``.
        retention_check_overridden: True when a retention below the table's minimum was allowed.
        cutoff_ms: Files modified before this time (ms since the epoch) were eligible.
        partition_filter: The partition predicate, if any.
        partitions_scanned: Partition directories listed (None for the whole table).
        files_listed: Visible files listed.
        symlinks_skipped: Symbolic links seen and left alone (LITE and inventory: candidates that
            are, or lie below, a link).
        spellings_kept: Listed keys or inventory rows left out because their path is not the
            canonical spelling (``p=a//f``): never deleted under another name.
        files_found: Files selected for deletion.
        bytes_found: Their total size.
        dirs_found: Directories selected for deletion.
        files_deleted: Files deleted (0 for a dry run).
        bytes_deleted: Bytes deleted.
        dirs_deleted: Directories deleted.
        delete_failures: Selected paths that could not be deleted.
        identify_s: Seconds spent reading the log, listing and selecting.
        delete_s: Seconds spent deleting.
        paths: Every selected path with its size (no cap).
        by_prefix: Totals per partition / top-level directory.
        diagnostics: Where the listing and deletes ran, for runs with ``cluster_listing`` on a
            storage Spark tasks can reopen; None otherwise.
        mode: ``full`` (listed storage) or ``lite`` (read the log's removes, listed nothing).
        mode_reason: Why that mode ran (requested, or ``auto``'s reason).
        dirs_kept: Selected directories not deleted because they were not empty when their
            turn came (a writer filling one, a file that appeared after the listing), with the
            reason; not failures.
        paths_not_deleted: Selected paths that could not be deleted (``delete_failures`` of
            them), by name.
        commit_range: LITE: the commits whose removes were read (first, last); None otherwise.
        last_vacuum_version: The ``latestCommitVersionOutsideOfRetentionWindow`` this run wrote
            to ``_delta_log/_last_vacuum_info`` (None: not written: a dry run, a failure, a
            partition filter, or nothing new).
        retention_requested_hours: The retention as requested, before it was rounded to the
            whole ``retention_hours`` (None: the table's own).
    """

    location: str
    dry_run: bool
    table_version: int
    retention_hours: float
    retention_source: str
    retention_check_overridden: bool
    cutoff_ms: int
    partition_filter: str | None
    partitions_scanned: int | None
    files_listed: int
    symlinks_skipped: int
    spellings_kept: int
    files_found: int
    bytes_found: int
    dirs_found: int
    files_deleted: int
    bytes_deleted: int
    dirs_deleted: int
    delete_failures: int
    identify_s: float
    delete_s: float
    paths: Sequence[VacuumFile]
    by_prefix: tuple[VacuumGroup, ...]
    diagnostics: VacuumDiagnostics | None = None
    mode: str = "full"
    mode_reason: str = "FULL requested"
    dirs_kept: tuple[VacuumKeptDir, ...] = ()
    paths_not_deleted: tuple[str, ...] = ()
    commit_range: tuple[int, int] | None = None
    last_vacuum_version: int | None = None
    retention_requested_hours: float | None = None

    @property
    def retention_text(self) -> str:
        """The retention as every front end prints it (``values.retention_text``)."""
        if self.retention_requested_hours is None:
            return retention_text(self.retention_hours)
        return retention_text(self.retention_requested_hours, applied=self.retention_hours)

    def to_dict(self, *, include_paths: bool = True) -> dict[str, Any]:
        """The result as plain data; ``include_paths=False`` leaves out the path list."""
        return to_dict(self, exclude=() if include_paths else ("paths",))

    def write_json(self, out: TextIO, *, chunk: int = 10_000) -> None:
        """Write ``to_dict()`` as one JSON object, streaming the path list.

        The same document as ``json.dumps(self.to_dict())``, without building a dict per
        selected path and the whole text first (on a table of millions of files, twice the
        paths' memory).

        Args:
            out: A text stream (e.g. ``sys.stdout``).
            chunk: Paths serialised per write.
        """
        head = json.dumps(self.to_dict(include_paths=False))
        out.write(head[:-1] + ', "paths": [')
        for start in range(0, len(self.paths), chunk):
            rows = [
                {"path": f.path, "size_bytes": f.size_bytes, "is_dir": f.is_dir}
                for f in self.paths[start : start + chunk]
            ]
            out.write((", " if start else "") + json.dumps(rows)[1:-1])
        out.write("]}\n")


@dataclass(frozen=True)
class LogFileToDelete:
    """One ``_delta_log`` file log cleanup selected.

    Attributes:
        path: Path relative to the table root (``_delta_log/...``).
        version: The table version it belongs to (None for sidecars).
        kind: ``commit``, ``checkpoint``, ``checksum`` or ``sidecar``.
        size_bytes: Size in bytes.
    """

    path: str
    version: int | None
    kind: str
    size_bytes: int


@dataclass(frozen=True)
class LogCleanupResult:
    """What expired-log cleanup found and did.

    Attributes:
        location: The table location.
        dry_run: True when nothing was deleted.
        skipped_reason: Why nothing was considered (e.g. cleanup disabled by the table), or None.
        retention_days: Log retention used.
        retention_source: ``requested``, ``table property`` or ``default``.
        cutoff_ms: Files whose (monotonic) time is at or before this were expired; midnight UTC.
        last_checkpoint_version: Version named by ``_last_checkpoint`` (None if absent).
        checkpoint_first: Version of the checkpoint written first (in a dry run: that would be
            written), if one was needed.
        checkpoint_not_written: Why a needed checkpoint was not written, if so.
        checkpoint_kept: The checkpoint everything before which was selected (None: none).
        oldest_version_kept: The oldest version that can still be reconstructed afterwards.
        files_found: Files selected.
        bytes_found: Their total size.
        files_deleted: Files deleted (0 for a dry run).
        bytes_deleted: Bytes deleted.
        delete_failures: Selected files that could not be deleted.
        properties_recorded: Table properties written from the model's policy.
        duration_s: Seconds for the whole run.
        files: Every selected file with version and kind.
        checkpoint_writer: Who wrote (in a dry run: would write) ``checkpoint_first``:
            ``delta-rs``, or ``Delta`` (a local Spark with Delta 4.4, for features delta-rs
            cannot checkpoint).
        paths_not_deleted: Selected files that could not be deleted (``delete_failures`` of
            them), oldest first.
    """

    location: str
    dry_run: bool
    table_version: int
    skipped_reason: str | None
    retention_days: float
    retention_source: str
    cutoff_ms: int
    last_checkpoint_version: int | None
    checkpoint_first: int | None
    checkpoint_not_written: str | None
    checkpoint_kept: int | None
    oldest_version_kept: int | None
    files_found: int
    bytes_found: int
    files_deleted: int
    bytes_deleted: int
    delete_failures: int
    properties_recorded: dict[str, str]
    duration_s: float
    files: tuple[LogFileToDelete, ...]
    checkpoint_writer: str | None = None
    paths_not_deleted: tuple[str, ...] = ()

    def to_dict(self, *, include_files: bool = True) -> dict[str, Any]:
        """The result as plain data; ``include_files=False`` leaves out the file list."""
        return to_dict(self, exclude=() if include_files else ("files",))


@dataclass(frozen=True)
class OptimizeResult:
    """What OPTIMIZE planned and committed.

    Attributes:
        location: The table location.
        dry_run: True when only the plan was made.
        zorder_by: Z-order columns (empty for compaction).
        plan: The plan as plain data (partitions with work, bins, files, bytes).
        skipped_reason: Why nothing was committed, if so.
        version_before: Table version planned on.
        commits: Versions of the OPTIMIZE commits written (one per partition call).
        files_added: Files written.
        files_removed: Files compacted away (``dataChange=false`` removes).
        bytes_added: Bytes written.
        bytes_removed: Bytes of the removed files.
        partitions_optimized: Partitions rewritten.
        files_considered: Files the writer considered.
        files_skipped: Files the writer left as they were.
        duration_s: Seconds for planning and execution.
        writer: What rewrote and committed (``delta-rs compact``, ``python_ops z-order +
            delta-rs commit``, ``delta-spark``).
        retries: Commits retried after a conflict that left every input file live.
        failed_partitions: Partitions not committed because of a conflict, with the reason.
        untracked_files: Files written by failed attempts; not part of the table, VACUUM
            removes them after the retention period.
        log_files_deleted: The ``_delta_log`` files that disappeared while Delta's writer ran our
            statement (Delta checkpoints after a commit landing on a multiple of
            ``delta.checkpointInterval`` and then deletes expired log files when
            ``delta.enableExpiredLogCleanup`` is on); empty for delta-rs, whose hook is off.
    """

    location: str
    dry_run: bool
    zorder_by: tuple[str, ...]
    plan: dict[str, Any]
    skipped_reason: str | None
    version_before: int
    commits: tuple[int, ...]
    files_added: int
    files_removed: int
    bytes_added: int
    bytes_removed: int
    partitions_optimized: int
    files_considered: int
    files_skipped: int
    duration_s: float
    writer: str = ""
    retries: int = 0
    failed_partitions: tuple[dict[str, Any], ...] = ()
    untracked_files: tuple[str, ...] = ()
    log_files_deleted: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The result as plain data."""
        return to_dict(self)


@dataclass(frozen=True)
class PurgeResult:
    """What a deletion-vector purge found and did (``python_ops.ops.purge``).

    Attributes:
        location: The table location.
        dry_run: True when nothing was rewritten.
        deleted_ratio: The threshold: partitions with a larger deleted share are purged.
        version_before: The table version read.
        rows: Rows the live files hold (deleted included), from ``numRecords``.
        deleted_rows: Rows deletion vectors delete.
        partitions_due: Each partition above the threshold (values, rows, deleted rows, share,
            reclaimable bytes).
        files_to_rewrite: Files with deletion vectors in those partitions.
        bytes_to_rewrite: Their bytes.
        reclaimable_bytes: Estimated bytes the purge frees once VACUUM removes the old files.
        commit: The REORG commit's version (None: nothing committed).
        files_removed: Files Delta rewrote away.
        files_added: Files Delta wrote.
        bytes_removed: Their bytes (removed).
        bytes_added: Their bytes (added).
        writer: What rewrote and committed (empty when nothing ran).
        skipped_reason: Why nothing was purged, or None.
        duration_s: Seconds for the whole run.
    """

    location: str
    dry_run: bool
    deleted_ratio: float
    version_before: int
    rows: int
    deleted_rows: int
    partitions_due: tuple[dict[str, Any], ...]
    files_to_rewrite: int
    bytes_to_rewrite: int
    reclaimable_bytes: int
    commit: int | None
    files_removed: int
    files_added: int
    bytes_removed: int
    bytes_added: int
    writer: str
    skipped_reason: str | None
    duration_s: float

    def to_dict(self) -> dict[str, Any]:
        """The result as plain data."""
        return to_dict(self)


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
