"""Compaction whose commit deletes nothing: our bins written here, committed with the hook off.

delta-rs's ``optimize.compact`` runs its post-commit hook's expired-log cleanup whatever
``post_commithook_properties`` says (deltalake 1.6.6, measured: 19 appends, a checkpoint at
version 10, commit files aged 40 days; ``compact(post_commithook_properties=
PostCommitHookProperties(cleanup_expired_logs=False))`` deleted commits 0-9, while
``create_write_transaction`` with the same properties deleted nothing). A compaction must do
only what it was asked, so when that hook would find expired log files
(``hook_would_clean``), each bin is read and written here (rows in file order, one output file
per bin) and the partition's rewrite is committed through the transaction API
(``commit_rewrite``) with the hook off, exactly as the Z-order path commits.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping

import pyarrow.parquet as pq

from python_ops.delta.actions import AddFile
from python_ops.delta.log_files import LogFileKind
from python_ops.delta.properties import ENABLE_EXPIRED_LOG_CLEANUP, LOG_RETENTION, resolve_retention
from python_ops.delta.snapshot import Snapshot
from python_ops.delta.stats import delta_stats
from python_ops.errors import ConfigError
from python_ops.ops.optimize.plan import PartitionPlan
from python_ops.ops.optimize.zorder import WrittenFile, read_files
from python_ops.storage import Storage

_DAY_MS = 86_400_000


def hook_would_clean(snapshot: Snapshot, *, now_ms: int | None = None) -> bool:
    """Whether delta-rs's post-commit log cleanup could delete anything from this table's log.

    It deletes log files below the newest checkpoint older than ``now -
    delta.logRetentionDuration`` unless the table sets ``delta.enableExpiredLogCleanup=false``.
    The check errs on the safe side: a day of margin, any versioned file below the newest
    checkpoint in the listing.

    Args:
        snapshot: The table's snapshot (its log listing).
        now_ms: The current time in ms (None: now).

    Returns:
        True when a commit through ``optimize.compact`` could delete log files.
    """
    configuration = snapshot.metadata.configuration
    if configuration.get(ENABLE_EXPIRED_LOG_CLEANUP, "true").lower() == "false":
        return False
    checkpoints = [
        f.version
        for f in snapshot.log_files
        if f.kind is LogFileKind.CHECKPOINT and f.version is not None
    ]
    if not checkpoints:
        return False
    newest = max(checkpoints)
    now = int(time.time() * 1000) if now_ms is None else now_ms
    try:
        retention = resolve_retention(configuration, LOG_RETENTION)
    except ConfigError:  # a property delta-rs may read differently: take the safe path
        return True
    cutoff = retention.cutoff_ms(now) + _DAY_MS
    return any(
        f.version is not None and f.version < newest and f.modification_time_ms <= cutoff
        for f in snapshot.log_files
    )


def write_bins(
    storage: Storage,
    partition: PartitionPlan,
    files: Mapping[str | None, AddFile],
    stats_columns: list[str],
) -> list[WrittenFile]:
    """Write one file per planned bin of ``partition`` (its rows in file order).

    Args:
        storage: The table's storage.
        partition: The partition's plan (its bins name the input files).
        files: Live files by table-relative path.
        stats_columns: Columns to write statistics for.

    Returns:
        The files written, in the partition's directory; nothing is committed.

    Raises:
        StorageError: When an input file is missing or unreadable.
    """
    run = uuid.uuid4()
    written = []
    for index, planned in enumerate(partition.bins):
        inputs = [files[p] for p in planned.files]
        table = read_files(storage, inputs)
        assert inputs[0].relative_path is not None  # the plan holds files inside the root
        directory = inputs[0].relative_path.rpartition("/")[0]
        name = f"part-{index:05d}-{run}-c000.zstd.parquet"
        relative = f"{directory}/{name}" if directory else name
        fs, path = storage.arrow_path(relative)
        pq.write_table(
            table,
            path,
            filesystem=fs,
            compression="zstd",
            coerce_timestamps="us",
            allow_truncated_timestamps=False,
        )
        size = int(fs.get_file_info(path).size)
        written.append(
            WrittenFile(relative, size, table.num_rows, delta_stats(table, stats_columns))
        )
    return written
