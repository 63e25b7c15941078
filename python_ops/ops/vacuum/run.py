"""VACUUM: delete files a Delta table no longer references, as Delta's ``VacuumCommand.gc`` does.

The steps follow docs/spec.md section 1: compute the cutoff from the retention, read the
protected paths from the snapshot (live files, tombstones newer than the cutoff, their
deletion-vector files and all their parent directories), list storage with the hidden-name
rules, select with the counting rule (``selection``: Arrow compute in this process, or the
same program on the Spark DataFrame API), then delete in bounded chunks. No engine is started for
a table this process can list; the DataFrame program runs where a Spark session is asked for
(``engine="spark"``) or the listing runs on its executors; no Delta jars are needed.

With ``cluster_listing`` on a storage Spark tasks can reopen (S3, local disks the executors share)
the listing and the deletes run in Spark tasks (``cluster``): the listing stays on the
cluster for the selection on Spark, and only the selected paths and counts reach the driver.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from python_ops.delta.commits import commits_shared
from python_ops.delta.file_paths import FilePaths, read_file_paths
from python_ops.delta.partitions import matching_partition_dirs
from python_ops.delta.protocol import Op, check_protocol
from python_ops.delta.snapshot import Snapshot
from python_ops.errors import ConfigError
from python_ops.ops.audit import audit_record
from python_ops.ops.lean_arrow import release_freed_memory
from python_ops.ops.results import (
    VacuumDiagnostics,
    VacuumFile,
    VacuumKeptDir,
    VacuumResult,
)
from python_ops.ops.vacuum import handoff
from python_ops.ops.vacuum.cluster import delete_on_cluster, select_on_cluster
from python_ops.ops.vacuum.delete import delete_selected, group_by_prefix
from python_ops.ops.vacuum.file_stats import stat_unprotected
from python_ops.ops.vacuum.inventory import inventory_entries
from python_ops.ops.vacuum.kept import still_there
from python_ops.ops.vacuum.listing import Listing, list_visible
from python_ops.ops.vacuum.lite import lite_candidates, lite_selection
from python_ops.ops.vacuum.mode import choose_mode, next_state
from python_ops.ops.vacuum.retention import vacuum_retention
from python_ops.ops.vacuum.selection import (
    SelectedPaths,
    select_on_spark,
    selected_rows,
)
from python_ops.ops.vacuum.state import write_last_vacuum_info
from python_ops.storage import Storage, open_storage
from python_ops.values import checked_number

log = logging.getLogger("python_ops.ops.vacuum")  # the wing's name, as before the split


def protected_paths(snapshot: Snapshot, cutoff_ms: int) -> set[str]:
    """Paths VACUUM must keep: live files, unexpired tombstones, their DV files and parents.

    Args:
        snapshot: The table snapshot.
        cutoff_ms: Tombstones deleted at or after this time are still protected.

    Returns:
        Relative paths (files and directories).
    """
    return set(FilePaths(snapshot).protected(cutoff_ms).to_pylist())


def _selection_on_spark(
    engine: str, spark: Any, *, cluster_listing: bool, model: str | None
) -> bool:
    """Whether the selection runs on Spark (validating the choice before anything is read)."""
    if engine not in ENGINES:
        raise ConfigError(
            setting="engine", value=engine, fix=f"Choose one of: {', '.join(ENGINES)}.", model=model
        )
    wants_spark = engine == "spark" or (engine == "auto" and cluster_listing)
    if (wants_spark or cluster_listing) and spark is None:
        raise ConfigError(
            setting="engine" if engine == "spark" else "cluster_listing",
            value=engine if engine == "spark" else cluster_listing,
            fix="It runs on a Spark session: pass spark=<session>, or use the in-process "
            "engine without cluster listing.",
            model=model,
        )
    return wants_spark


ENGINES = ("auto", "in_process", "spark")

# Freed pages are handed back between phases only after this many entries: on a small table
# there is little to hand back, and ``malloc_trim`` walks the whole heap of a host process
# (about 4 ms in a 300 MB one), which a post-hook's due check on every model must not pay.
_HAND_BACK_FROM_ENTRIES = 50_000


def _hand_back(entries: int) -> None:
    if entries >= _HAND_BACK_FROM_ENTRIES:
        release_freed_memory()


def vacuum(
    table: str | Storage,
    *,
    spark: Any = None,
    retention_hours: float | None = None,
    dry_run: bool = True,
    partition_filter: str | None = None,
    allow_short_retention: bool = False,
    max_workers: int = 8,
    now_ms: int | None = None,
    on_progress: Callable[[int, int], None] | None = None,
    progress_interval_s: float = 5.0,
    model: str | None = None,
    cluster_listing: bool = False,
    snapshot: Snapshot | FilePaths | None = None,
    engine: str = "auto",
    audit: bool = True,
    mode: str = "full",
    full_interval_days: float = 7.0,
    listing_handoff: str = "none",
    inventory: str | None = None,
) -> VacuumResult:
    """Delete (or, by default, only report) files the table no longer references.

    Args:
        table: Table location (path or URI) or an open ``Storage``.
        spark: A Spark session, for ``engine="spark"`` and ``cluster_listing`` (None: none).
        retention_hours: Keep files newer than this; None uses the table's
            ``delta.deletedFileRetentionDuration`` (default 168 hours).
        dry_run: Report only (the default); pass False to delete.
        partition_filter: SQL predicate on partition columns restricting listing and deletion
            to the matching partition directories.
        allow_short_retention: Allow a retention below the table's minimum (logged as a warning
            every time).
        max_workers: Parallel deletion calls.
        now_ms: The current time in ms since the epoch (None = now).
        on_progress: Called with (files done, files total) during deletion (with deletes in
            Spark tasks, once all files are done).
        progress_interval_s: Seconds between progress reports.
        model: The dbt model, for error messages.
        cluster_listing: List the table and delete in Spark tasks on the session's executors
            instead of on local threads (for very large tables), where the storage can be
            reopened in tasks (S3; local disks the executors share, see ``storage.local``):
            with the selection on Spark the listing never comes to the driver. Elsewhere the
            listing runs on driver threads. ``result.diagnostics`` says where tasks ran.
        snapshot: The table's latest snapshot if the caller has just read it, or its paths
            (``read_file_paths``); None reads the paths.
        engine: Where the selection runs: ``in_process`` (Arrow compute, no engine),
            ``spark`` (the DataFrame program on ``spark``), or ``auto``: on ``spark`` when the
            listing runs on its executors (``cluster_listing``), else in process.
        audit: Write the run's audit record (off only for a dry run that is not an op run,
            such as the due check's estimate; a real run is always recorded).
        mode: ``full`` lists storage (finds untracked files too); ``lite`` reads the removes
            of the commits since the last vacuum from the log and lists nothing
            (``lite``); ``auto`` runs LITE when it can be complete and the last FULL run
            is recent, else FULL (``vacuum_mode``). ``result.mode_reason`` says why.
        full_interval_days: ``auto``: run FULL when the last FULL run recorded in
            ``_delta_log/_last_vacuum_info`` started this many days ago or more.
        listing_handoff: ``keep``: keep this run's listing for the next run on the same
            snapshot version (a due check's dry run); ``take``: use a listing kept so, if any,
            instead of listing again (``handoff``: one listing per decision); ``none``.
        inventory: An inventory report of the table's storage (Parquet or a Delta table with
            Delta's inventory columns) used instead of a listing, as Delta's ``VACUUM ...
            USING INVENTORY`` (``inventory``); the run is FULL.

    Returns:
        What was found and deleted, with every selected path.

    Raises:
        ConfigError: For a bad retention, partition filter or mode (LITE takes no partition
            filter).
        RetentionTooShortError: For a retention below the table's minimum without override.
        LiteVacuumUnavailableError: For ``mode="lite"`` when the log no longer reaches back to
            where LITE must start (run FULL); nothing is deleted.
        TableNotFoundError: When there is no Delta table at the location.
        DeltaLogError: When the log cannot be read.
        UnsupportedFeatureError: When the table uses a feature VACUUM does not support
            (checked before anything is listed).
    """
    checked_number(max_workers, setting="max_workers", minimum=1, whole=True, model=model)
    if inventory is not None:
        if mode == "lite" or cluster_listing:
            raise ConfigError(
                setting="inventory",
                value=inventory,
                fix="an inventory replaces a FULL run's listing: not with mode lite or "
                "cluster_listing.",
                model=model,
            )
        mode = "full"
    if listing_handoff not in ("none", "keep", "take"):
        raise ConfigError(
            setting="listing_handoff", value=listing_handoff, fix="Use none, keep or take."
        )
    on_spark = _selection_on_spark(engine, spark, cluster_listing=cluster_listing, model=model)
    storage = table if isinstance(table, Storage) else open_storage(table, spark=spark)
    started = time.perf_counter()
    params = {
        "retention_hours": retention_hours,
        "dry_run": dry_run,
        "partition_filter": partition_filter,
        "mode": mode,
        "inventory": inventory,
    }
    with commits_shared(mode != "full"):  # LITE reads commits the snapshot replayed: once
        try:
            # Without a snapshot in hand, read the log's paths only: no object per checkpoint row.
            if snapshot is None:
                paths = read_file_paths(storage)
            else:
                paths = snapshot if isinstance(snapshot, FilePaths) else FilePaths(snapshot)
            snapshot = paths.head
            _hand_back(sum(len(c.live) + len(c.removed) for c in paths.columns))
            check_protocol(snapshot.protocol, Op.VACUUM, location=storage.root)
            retention, overridden = vacuum_retention(
                snapshot, retention_hours, allow_short_retention=allow_short_retention, model=model
            )
            now = int(time.time() * 1000) if now_ms is None else now_ms
            cutoff = retention.cutoff_ms(now)
            choice = choose_mode(
                storage,
                snapshot,
                mode=mode,
                cutoff_ms=cutoff,
                now_ms=now,
                partition_filter=partition_filter,
                full_interval_days=full_interval_days,
                model=model,
            )
            roots: list[str] = [""]
            if partition_filter is not None:
                roots = matching_partition_dirs(storage, snapshot, partition_filter, model=model)
            on_cluster = cluster_listing and storage.lists_on_executors and bool(roots)
            diagnostics: VacuumDiagnostics | None = None
            selected: Sequence[VacuumFile]
            if choice.mode == "lite":  # the log's removes: nothing is listed
                candidates = lite_candidates(storage, choice.window, snapshot.location)
                # a few candidates checked against the log's paths: no protected set is built
                selected, symlinks = lite_selection(storage, candidates, paths, cutoff)
                files_listed = 0
                del candidates, paths
            elif on_cluster:
                protected = paths.protected(cutoff)
                found = select_on_cluster(
                    spark,
                    storage,
                    partition_columns=snapshot.metadata.partition_columns,
                    roots=roots,
                    protected=protected,
                    cutoff_ms=cutoff,
                    on_spark=on_spark,
                )
                selected = found.selected
                files_listed, symlinks = found.files_listed, found.symlinks_skipped
                diagnostics = found.diagnostics
            else:
                protected = paths.protected(cutoff)
                key = (storage.root, snapshot.version, partition_filter)
                handed = handoff.take(key) if listing_handoff == "take" else None
                if handed is not None and storage.names_before_stats:
                    # listed against the due check's protected set: stat what this run's no
                    # longer protects (a tombstone expired in between)
                    entries, links = stat_unprotected(storage, handed.entries, protected)
                    handed = handoff.KeptListing(
                        entries, handed.files_listed, handed.symlinks_skipped + links
                    )
                if inventory is not None:  # the report stands in for the listing
                    report = inventory_entries(
                        inventory,
                        root=storage.root,
                        partition_columns=snapshot.metadata.partition_columns,
                        roots=roots,
                        linked=storage.behind_links,
                        model=model,
                        cutoff_ms=cutoff,
                    )
                    handed = handoff.KeptListing(report.table, report.taken, report.links_kept)
                if handed is None:
                    listing = (
                        list_visible(
                            storage,
                            partition_columns=snapshot.metadata.partition_columns,
                            roots=roots,
                            max_workers=storage.listing_concurrency,
                            split_hints=protected,  # where to cut one big prefix into key ranges
                            protected=protected,  # a protected file needs no stat (local disks)
                        )
                        if roots
                        else Listing((), 0, 0)  # a partition filter that matches nothing
                    )
                    handed = handoff.KeptListing(
                        listing.table(), listing.files_listed, listing.symlinks_skipped
                    )
                    del listing
                    _hand_back(handed.files_listed)
                    if listing_handoff == "keep":
                        handoff.keep(key, handed)
                files_listed, symlinks = handed.files_listed, handed.symlinks_skipped
                table_of_entries = handed.entries
                del handed, paths  # only the Arrow table and the protected set are needed now
                if on_spark:
                    selected = select_on_spark(spark, table_of_entries, protected, cutoff)
                else:
                    rows = selected_rows(table_of_entries, protected, cutoff)
                    del protected  # gone before the selection becomes objects
                    _hand_back(table_of_entries.num_rows)
                    del table_of_entries
                    selected = SelectedPaths(rows, ordered=True)
                    del rows
            identify_s = time.perf_counter() - started
            deleted: tuple[int, int, int, list[VacuumKeptDir], list[str]] = (0, 0, 0, [], [])
            delete_started = time.perf_counter()
            if not dry_run and selected and diagnostics is not None:  # on the cluster
                counts = delete_on_cluster(
                    spark, storage, selected, threads=max_workers, on_progress=on_progress
                )
                kept, failed = (
                    still_there(storage, selected, cutoff_ms=cutoff)
                    if counts.failures
                    else ([], [])
                )
                deleted = (counts.files, counts.bytes, counts.dirs, kept, failed)
                diagnostics = dataclasses.replace(
                    diagnostics, num_delete_tasks=counts.tasks, delete_pids=counts.pids
                )
            elif not dry_run and selected:
                deleted = delete_selected(
                    storage,
                    selected,
                    max_workers=max_workers,
                    on_progress=on_progress,
                    progress_interval_s=progress_interval_s,
                    cutoff_ms=cutoff,
                )
            written = None
            # only after a real whole-table run deleted everything it selected (never more claimed)
            if not dry_run and not deleted[4] and partition_filter is None:
                state = next_state(choice, now_ms=now)
                if state is not None and write_last_vacuum_info(storage, state):
                    written = state.version
            groups = group_by_prefix(selected)  # one pass: the totals are the groups' sums
            result = VacuumResult(
                location=storage.root,
                dry_run=dry_run,
                table_version=snapshot.version,
                retention_hours=retention.hours,
                retention_source=retention.source,
                retention_check_overridden=overridden,
                cutoff_ms=cutoff,
                partition_filter=partition_filter,
                partitions_scanned=None if partition_filter is None else len(roots),
                files_listed=files_listed,
                symlinks_skipped=symlinks,
                files_found=sum(g.files for g in groups),
                bytes_found=sum(g.bytes for g in groups),
                dirs_found=sum(g.dirs for g in groups),
                files_deleted=deleted[0],
                bytes_deleted=deleted[1],
                dirs_deleted=deleted[2],
                delete_failures=len(deleted[4]),
                identify_s=identify_s,
                delete_s=time.perf_counter() - delete_started,
                paths=selected if isinstance(selected, SelectedPaths) else tuple(selected),
                by_prefix=groups,
                diagnostics=diagnostics,
                mode=choice.mode,
                mode_reason=choice.reason,
                dirs_kept=tuple(deleted[3]),
                paths_not_deleted=tuple(deleted[4]),
                commit_range=choice.window.commit_range if choice.mode == "lite" else None,
                last_vacuum_version=written,
            )
        except Exception as err:
            if audit or not dry_run:
                audit_record(
                    "vacuum", storage.root, "failed", {**params, "model": model, "error": str(err)}
                )
            raise
    if audit or not dry_run:
        audit_record(
            "vacuum",
            storage.root,
            "succeeded",
            {"model": model, **result.to_dict(include_paths=False)},
        )
    return result
