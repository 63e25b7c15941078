"""The history table's columns, and its rows read as an Arrow table.

The history is the first table a post-hook reads in a dbt process. A table as
``HistoryStore`` writes it (reader version 1: no deletion vectors, no column mapping;
unpartitioned) is read file by file with this package's log reader and Parquet reader
(``plain_table``), only the columns asked for; anything else, and a missing table, goes to
delta-rs, whose read imports ``pyarrow.dataset`` (every pyarrow filesystem, Acero, Substrait:
most of the first post-hook's cost, when it was the only reader).
"""

from __future__ import annotations

from typing import Any

from python_ops.errors import StorageError
from python_ops.storage import delta_storage_options

SCHEMA_FIELDS: tuple[tuple[str, str], ...] = (
    ("invocation_id", "string"),
    ("model", "string"),
    ("table_location", "string"),
    ("op", "string"),
    ("parameters", "string"),
    ("dry_run", "bool"),
    ("status", "string"),
    ("error", "string"),
    ("started_at", "timestamp"),
    ("duration_s", "double"),
    ("files_removed", "int64"),
    ("bytes_removed", "int64"),
    ("files_added", "int64"),
    ("bytes_added", "int64"),
    ("version_before", "int64"),
    ("version_after", "int64"),
    # added for auto clustering (issue 39); older tables gain them on the next append
    ("clustering_columns", "string"),
    ("clustering_evidence", "string"),
    ("files_per_lookup_before", "string"),
    ("files_per_lookup_after", "string"),
    # added for the post-hook's build (issue 38): why the op ran or was skipped, the build
    ("reason", "string"),
    ("build_s", "double"),
    ("build_files_written", "int64"),
    ("build_rows_written", "int64"),
    ("build_versions", "string"),
)
# the columns an older history table may lack (null in its rows): every one after the first 16
ADDED_FIELDS = frozenset(
    {
        "clustering_columns",
        "clustering_evidence",
        "files_per_lookup_before",
        "files_per_lookup_after",
        "reason",
        "build_s",
        "build_files_written",
        "build_rows_written",
        "build_versions",
    }
)


def arrow_schema() -> Any:
    """The history's Arrow schema (``SCHEMA_FIELDS``)."""
    import pyarrow as pa

    types = {
        "string": pa.string(),
        "bool": pa.bool_(),
        "timestamp": pa.timestamp("us", "UTC"),
        "double": pa.float64(),
        "int64": pa.int64(),
    }
    return pa.schema([(name, types[kind]) for name, kind in SCHEMA_FIELDS])


def read_table(
    location: str, names: tuple[str, ...] | None = None, *, version: int | None = None
) -> Any:
    """The history's rows as an Arrow table of ``names`` (all columns: None); None: no table.

    Args:
        location: The history's location.
        names: The columns (None: all).
        version: The version to read (None: the newest).
    """
    table = plain_table(location, names, version=version)
    if table is not None:
        return table
    from deltalake import DeltaTable

    options = delta_storage_options(location)
    if not DeltaTable.is_deltatable(location, storage_options=options):
        return None
    table = DeltaTable(location, version=version, storage_options=options).to_pyarrow_table()
    if names is None:
        return table
    try:
        return _conformed(table, _schema_of(names))
    except (KeyError, ValueError, TypeError, NotImplementedError) as err:
        raise StorageError(
            f"the maintenance history at {location} is not a history table: its columns do "
            f"not hold {', '.join(names)} ({err}); point var 'maintenance_history_location' "
            "at another place, or move that table away"
        ) from err


def _schema_of(names: tuple[str, ...] | None) -> Any:
    """The history schema's fields ``names``, in that order (None: every field)."""
    import pyarrow as pa

    schema = arrow_schema()
    return schema if names is None else pa.schema([schema.field(name) for name in names])


def _conformed(table: Any, wanted: Any) -> Any:
    """``table`` as the ``wanted`` columns and types; an added field it lacks, as nulls.

    Raises:
        KeyError: For a missing column that is not an added field.
        ValueError, TypeError, NotImplementedError: For a column of another type.
    """
    import pyarrow as pa

    for name in ADDED_FIELDS.intersection(wanted.names) - set(table.column_names):
        table = table.append_column(name, pa.nulls(table.num_rows, type=wanted.field(name).type))
    return table.select(wanted.names).cast(wanted)


def plain_rows(location: str) -> list[dict[str, Any]] | None:
    """The history's rows read with this package's log reader, or None to ask delta-rs."""
    table = plain_table(location)
    return table.to_pylist() if table is not None else None


def plain_table(
    location: str, names: tuple[str, ...] | None = None, *, version: int | None = None
) -> Any:
    """The history's columns ``names`` (all: None) read with this package's readers.

    None: a missing table, or one not as ``HistoryStore`` writes it (see the module's
    docstring), which delta-rs reads instead.
    """
    import pyarrow as pa

    from python_ops.delta.state.parquet_file import ParquetBytes
    from python_ops.delta.state.snapshot import read_snapshot
    from python_ops.errors import MaintenanceError
    from python_ops.storage import open_storage

    try:
        storage = open_storage(location)
        snapshot = read_snapshot(storage, version=version)
    except (MaintenanceError, OSError):
        return None  # not there yet, or not a log this reader takes: delta-rs decides
    protocol = snapshot.protocol
    if protocol.get("minReaderVersion") != 1 or snapshot.metadata.partition_columns:
        return None
    wanted = _schema_of(names)
    tables = []
    for add in snapshot.files:
        if add.relative_path is None or add.deletion_vector is not None:
            return None
        try:
            parquet = ParquetBytes(storage.read_bytes(add.relative_path))
            tables.append(_conformed(parquet.read(wanted.names), wanted))
        except (KeyError, ValueError, TypeError, NotImplementedError, OSError):  # a column
            return None  # missing or of another type: delta-rs reads it as the table says
    return pa.concat_tables(tables) if tables else wanted.empty_table()
