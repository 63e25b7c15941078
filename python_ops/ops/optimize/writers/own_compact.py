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

import pyarrow as pa
import pyarrow.parquet as pq

from python_ops.delta.log.actions import AddFile
from python_ops.delta.state.deletion_vectors import deleted_rows, keep_mask
from python_ops.delta.table.stats import delta_stats
from python_ops.errors import StorageError
from python_ops.ops.optimize.planning.plan import PartitionPlan
from python_ops.ops.optimize.sorting.clustered_output import footer_statistics
from python_ops.ops.optimize.sorting.partition_batches import file_schema
from python_ops.ops.optimize.sorting.zorder import WrittenFile
from python_ops.storage import Storage


def read_inputs(storage: Storage, inputs: list[AddFile]) -> pa.Table:
    """The rows of ``inputs`` in file order, each read whole through ``storage`` (its retries).

    Raises:
        StorageError: When an input file is missing or unreadable (nothing was committed).
    """
    tables = []
    for f in inputs:
        assert f.relative_path is not None  # the plan holds files inside the root
        try:
            parquet = pq.ParquetFile(
                pa.BufferReader(storage.read_arrow_buffer(f.relative_path)),
                coerce_int96_timestamp_unit="us",  # Spark's INT96 at microseconds: years 1-9999
            )
            table = parquet.read().cast(file_schema(parquet))
            if f.deletion_vector is not None:  # its deleted rows never come back
                keep = keep_mask(table.num_rows, deleted_rows(storage, f.deletion_vector))
                table = table.filter(pa.array(keep))
        except FileNotFoundError as err:
            raise StorageError(
                f"{storage.root}: live data file '{f.relative_path}' is missing from storage; "
                "the table cannot be rewritten until it is restored (this partition was not "
                "committed)"
            ) from err
        except (OSError, pa.ArrowInvalid) as err:
            raise StorageError(
                f"{storage.root}: live data file '{f.relative_path}' cannot be read as Parquet "
                f"({err}); this partition was not committed"
            ) from err
        tables.append(table)
    return pa.concat_tables(tables, promote_options="permissive")


def write_bins(
    storage: Storage,
    partition: PartitionPlan,
    files: Mapping[str, AddFile],
    stats_columns: list[str],
    written: list[WrittenFile],
) -> None:
    """Write one file per planned bin of ``partition`` (its rows in file order).

    Each file is written whole through ``storage`` (one PUT on an object store, with its
    retries) and appended to ``written`` as soon as it exists, so a caller that meets a
    failure later knows every file to delete.

    Args:
        storage: The table's storage.
        partition: The partition's plan (its bins name the input files).
        files: Live files by identity (``AddFile.identity``), as the plan's bins name them.
        stats_columns: Columns to write statistics for.
        written: Receives the files written, in the partition's directory (nothing is
            committed).

    Raises:
        StorageError: When an input file is missing or unreadable, or a write fails.
    """
    run = uuid.uuid4()
    for index, planned in enumerate(partition.bins):
        inputs = [files[p] for p in planned.files]
        table = read_inputs(storage, inputs)
        if table.num_rows == 0:  # every row deleted (deletion vectors): removed, nothing added
            continue
        assert inputs[0].relative_path is not None  # the plan holds files inside the root
        directory = inputs[0].relative_path.rpartition("/")[0]
        name = f"part-{index:05d}-{run}-c000.zstd.parquet"
        relative = f"{directory}/{name}" if directory else name
        sink = pa.BufferOutputStream()
        pq.write_table(
            table, sink, compression="zstd", coerce_timestamps="us",
            allow_truncated_timestamps=False, write_statistics=footer_statistics(table.schema),
            use_dictionary=footer_statistics(table.schema),
        )  # fmt: skip
        data = sink.getvalue().to_pybytes()
        written.append(
            WrittenFile(relative, len(data), table.num_rows, delta_stats(table, stats_columns))
        )
        storage.replace_file(relative, data)
