"""Compaction's writes: each planned bin read and written here as one file, nothing committed.

Compaction no longer goes to delta-rs's ``optimize.compact``: it planned from its own snapshot
(6 input files where our plan had 3), re-encoded the paths it removed (``p=café/x`` removed as
``p=caf%C3%A9/x``, another file to Delta: the rows were read twice) and ran its post-commit
log cleanup whatever it was told (deltalake 1.6.6). Each bin is read in file order and written
as one file; ``rewrite_commit`` commits exactly the plan.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping

import pyarrow.parquet as pq

from python_ops.delta.actions import AddFile
from python_ops.delta.stats import delta_stats
from python_ops.ops.optimize.plan import PartitionPlan
from python_ops.ops.optimize.zorder import WrittenFile, read_files
from python_ops.storage import Storage

_DAY_MS = 86_400_000


def write_bins(
    storage: Storage,
    partition: PartitionPlan,
    files: Mapping[str, AddFile],
    stats_columns: list[str],
) -> list[WrittenFile]:
    """Write one file per planned bin of ``partition`` (its rows in file order).

    Args:
        storage: The table's storage.
        partition: The partition's plan (its bins name the input files).
        files: Live files by identity (``AddFile.identity``), as the plan's bins name them.
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
