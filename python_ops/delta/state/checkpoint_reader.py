"""A checkpoint's files read as actions: Parquet (classic, multi-part, v2 and its sidecars) or JSON.

The snapshot reader (``snapshot.reconstruct``) replays what this yields. A checkpoint's ``add``
and ``remove`` rows come back parsed column by column where nothing needs a per-row judgement,
or as path columns (``file_columns.checkpoint_columns``) for the readers that want paths only;
the other actions (``protocol``, ``metaData``, ``sidecar``) as single-key dicts. Also what log
cleanup asks of checkpoints: the sidecars a v2 checkpoint references and the version
``_last_checkpoint`` names.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from typing import Any

from python_ops.delta.log.actions import AddFile, relativize, require_str
from python_ops.delta.log.commits import At, json_lines
from python_ops.delta.log.file_identity import delta_identity
from python_ops.delta.log.json_text import loads_bytes
from python_ops.delta.log.log_files import LAST_CHECKPOINT, LOG_DIR, LogFile
from python_ops.delta.state.file_columns import (
    PATH_LEAVES,
    SPECIAL_PATH,
    FileColumns,
    checkpoint_columns,
    rows_where,
    well_formed_adds,
)
from python_ops.errors import DeltaLogError
from python_ops.storage import Storage

log = logging.getLogger(__name__)

_ADD_FIELDS = (
    "path",
    "size",
    "modificationTime",
    "partitionValues",
    "deletionVector",
    "clusteringProvider",
)
_REMOVE_FIELDS = ("path", "deletionTimestamp", "size", "deletionVector")
_ROWS_PER_CHUNK = 65_536
# A checkpoint of at most this many rows is decoded in one read of every action's leaves: a
# table's first checkpoints (Sail and Delta write one every 10 commits) hold a few rows, and
# the column-at-a-time reads for big ones cost a post-hook about 2.5 ms on such a file
# (0.8 ms in one read). Above it the action columns are read one at a time, in batches.
_SMALL_CHECKPOINT_ROWS = 4_096


def _numbers(rows: Any, start: int, count: int) -> Sequence[int]:
    """Row numbers ``start`` to ``start + count`` of ``rows_where``'s (a range or an Array)."""
    if isinstance(rows, range):
        return rows[start : start + count]
    numbers: list[int] = rows.slice(start, count).to_pylist()
    return numbers


def _optional_chunk(column: Any, start: int, rows: int) -> list[Any]:
    """One chunk of an optional column's values (all None where the column is absent)."""
    if column is None:
        return [None] * min(_ROWS_PER_CHUNK, rows - start)
    values: list[Any] = column.slice(start, _ROWS_PER_CHUNK).to_pylist()
    return values


def _well_formed_adds(column: Any, root: str) -> list[tuple[int, AddFile]] | None:
    """A checkpoint's ``add`` rows parsed column by column, or None to parse row by row.

    The column-wise path takes only what needs no per-row judgement (``well_formed_adds``);
    anything else (including every malformed row) goes through ``AddFile.parse``, which names
    the problem.
    """
    import pyarrow.compute as pc

    checked = well_formed_adds(column)
    if checked is None:
        return None
    adds, indexes, fields = checked
    size = adds.field(fields["size"])
    mtime = adds.field(fields["modificationTime"])
    values = adds.field(fields["partitionValues"])
    paths = adds.field(fields["path"])
    stats = adds.field(fields["stats"]) if "stats" in fields else None
    providers = adds.field(fields["clusteringProvider"]) if "clusteringProvider" in fields else None
    # A plain relative path is its own relative path; anything that may need decoding or
    # normalising goes through relativize.
    special = pc.or_(pc.match_substring_regex(paths, SPECIAL_PATH), pc.is_null(paths))
    # Files of one partition share one (never mutated) partition-values dict, and rows become
    # objects a chunk at a time: a big checkpoint's Python lists are never all alive at once.
    shared: dict[tuple[tuple[str, str | None], ...], dict[str, str | None]] = {}
    out: list[tuple[int, AddFile]] = []
    for start in range(0, len(adds), _ROWS_PER_CHUNK):
        chunk_stats = _optional_chunk(stats, start, len(adds))
        chunk_providers = _optional_chunk(providers, start, len(adds))
        for index, path, odd, size_bytes, mtime_ms, pairs, stat, provider in zip(
            _numbers(indexes, start, _ROWS_PER_CHUNK),
            paths.slice(start, _ROWS_PER_CHUNK).to_pylist(),
            special.slice(start, _ROWS_PER_CHUNK).to_pylist(),
            size.slice(start, _ROWS_PER_CHUNK).to_pylist(),
            mtime.slice(start, _ROWS_PER_CHUNK).to_pylist(),
            values.slice(start, _ROWS_PER_CHUNK).to_pylist(),
            chunk_stats,
            chunk_providers,
            strict=True,
        ):
            key = tuple(pairs)
            partition = shared.get(key)
            if partition is None:
                partition = shared[key] = dict(pairs)
            out.append(
                (
                    index,
                    AddFile(
                        path=path,
                        relative_path=relativize(path, root) if odd else path,
                        size_bytes=size_bytes,
                        modification_time_ms=mtime_ms,
                        partition_values=partition,
                        deletion_vector=None,
                        stats=stat,
                        clustering_provider=provider,
                        uri=delta_identity(path, root) if odd else path,
                    ),
                )
            )
    return out


def read_parquet_actions(
    data: Any,
    where: str,
    *,
    with_stats: bool = False,
    root: str | None = None,
    columns: list[FileColumns] | None = None,
) -> Iterator[tuple[At, dict[str, Any]]]:
    """Yield (location, single-key action dict) from a checkpoint or sidecar parquet file.

    With ``root`` (the table root, for relative paths), well-formed ``add`` rows come back
    already parsed: an ``AddFile`` under ``"add"``. With ``columns`` (and ``root``), the file's
    ``add`` and ``remove`` rows are appended to it as path columns when ``checkpoint_columns``
    takes them, and only the other actions are yielded. Where the process decodes on Arrow's
    threads (``parquet_file.decode_on_threads``), the other actions are read on a thread of
    their own meanwhile: the path column is one column, which one core decodes.

    Args:
        data: The file's bytes (an Arrow buffer or ``bytes``).
        where: The file's location, for error messages and each action's ``At``.
        with_stats: Also read ``add.stats``.
        root: The table root: ``add`` rows come back parsed, paths relative to it.
        columns: Where ``add``/``remove`` rows go as path columns (with ``root``).

    Yields:
        (location, single-key action dict) pairs.

    Raises:
        DeltaLogError: When the file is not a readable Parquet checkpoint, or an action
            column is not a struct.
    """
    from python_ops.delta.state import parquet_file
    from python_ops.delta.state.parquet_file import ParquetBytes

    try:
        pf = ParquetBytes(data)
    except Exception as err:  # pyarrow raises ArrowInvalid and OSError subtypes
        raise DeltaLogError(f"{where}: not a readable parquet checkpoint ({err})") from err
    del data  # ParquetBytes holds its own copy: the bytes go before the columns are decoded
    schema = pf.schema_arrow
    wanted: dict[str, tuple[str, ...] | None] = {
        "add": (*_ADD_FIELDS, "stats") if with_stats else _ADD_FIELDS,
        "remove": _REMOVE_FIELDS,
        "metaData": None,
        "protocol": None,
        "sidecar": None,
    }
    for kind in wanted:
        if kind in schema.names and not hasattr(schema.field(kind).type, "num_fields"):
            raise DeltaLogError(f"{where}: column '{kind}' is not a struct")
    if columns is None or root is None:
        if pf.num_rows <= _SMALL_CHECKPOINT_ROWS:
            yield from _small_file_rows(pf, where, wanted)
            return
        for kind, subfields in wanted.items():
            yield from _kind_rows(pf, where, kind, subfields, root)
        return
    files = [k for k in ("add", "remove") if k in schema.names]
    others = {k: v for k, v in wanted.items() if k not in ("add", "remove")}
    pending = None
    if parquet_file.decoding_on_threads():
        from concurrent.futures import ThreadPoolExecutor

        pool = ThreadPoolExecutor(max_workers=1)
        twin = pf.twin()  # a reader of its own over the same memory
        pending = pool.submit(
            lambda: [row for k, v in others.items() for row in _kind_rows(twin, where, k, v, root)]
        )
        pool.shutdown(wait=False)
    picked = [f"{k}.{leaf}" for k in files for leaf in PATH_LEAVES[k]]
    found = checkpoint_columns(pf.read(picked), root)
    if found is not None:
        columns.append(found)
    else:  # a row the column-wise read leaves to the row-wise parser
        for kind in files:
            yield from _kind_rows(pf, where, kind, wanted[kind], root)
    if pending is not None:
        yield from pending.result()
    else:
        for kind, subfields in others.items():
            yield from _kind_rows(pf, where, kind, subfields, root)


def _fields_read(schema: Any, kind: str, subfields: tuple[str, ...] | None) -> list[str]:
    """The fields of the ``kind`` struct to read: ``subfields`` the file has (None: all)."""
    struct_type = schema.field(kind).type
    present = [struct_type.field(i).name for i in range(struct_type.num_fields)]
    return [f for f in (subfields or present) if f in present]


def _small_file_rows(
    pf: Any, where: str, wanted: dict[str, tuple[str, ...] | None]
) -> Iterator[tuple[At, dict[str, Any]]]:
    """``_kind_rows`` for every kind of a small file, from one read of all their leaves.

    The same rows, in the same order (kind by kind, by row number), as one ``_kind_rows`` per
    kind; ``add`` rows come as dicts, which the replay parses as it parses a big file's rows
    the column-wise reader leaves to it: on a few rows, Arrow's kernels cost more than that.
    """
    schema = pf.schema_arrow
    kinds = {k: _fields_read(schema, k, v) for k, v in wanted.items() if k in schema.names}
    table = pf.read([f"{k}.{n}" for k, names in kinds.items() for n in names])
    for kind, names in kinds.items():
        if not names:
            continue
        for row, values in enumerate(table.column(kind).to_pylist()):
            if values is None or ("path" in values and values["path"] is None):
                continue
            yield (where, "row", row), {kind: values}


def _valid_rows(
    column: Any, where: str, kind: str, first: int
) -> Iterator[tuple[At, dict[str, Any]]]:
    """The rows of one action's struct column that hold the action, numbered from ``first``."""
    valid = column.is_valid()  # most rows hold another action: skip them in Arrow
    if not valid.true_count:
        return
    chosen, rows = rows_where(column, valid)
    for row, values in zip(_numbers(rows, 0, len(chosen)), chosen.to_pylist(), strict=True):
        if values is None or ("path" in values and values["path"] is None):
            continue
        yield (where, "row", first + row), {kind: values}


def _kind_rows(
    pf: Any, where: str, kind: str, subfields: tuple[str, ...] | None, root: str | None
) -> Iterator[tuple[At, dict[str, Any]]]:
    """The rows of one action column of a checkpoint file, as single-key action dicts."""
    schema = pf.schema_arrow
    if kind not in schema.names:
        return
    names = _fields_read(schema, kind, subfields)
    # how many rows hold this action, from one leaf's levels: a column of nulls is skipped
    # and the rest read only up to its last action (Delta writes protocol and metaData as
    # rows 0 and 1: at 1,000,000 rows 84 ms of batches, about 12 with this; delta-rs
    # writes them last, which the leaf read costs about 6 ms more)
    holding = _rows_holding(pf, schema, kind, names)
    if not holding:
        return
    leaves_read = [f"{kind}.{n}" for n in names]  # the chosen leaves only: not add.stats
    if kind == "add" and root is not None:
        parsed = _well_formed_adds(pf.read(leaves_read).column(kind), root)
        if parsed is not None:
            for row, add in parsed:
                yield (where, "row", row), {kind: add}
            return
    for first, batch in pf.batches(leaves_read):
        if not holding:
            break  # every row that holds this action has been read
        column = batch.column(kind)
        holding -= len(column) - column.null_count
        yield from _valid_rows(column, where, kind, first)


def _rows_holding(pf: Any, schema: Any, kind: str, names: list[str]) -> int:
    """How many rows of a checkpoint file hold a ``kind`` action (its struct is not null).

    Read from one leaf: the struct's validity is in every leaf's definition levels, so the
    cheapest leaf (a fixed-width field directly under the struct, if any) tells it exactly.
    """
    import pyarrow as pa

    struct_type = schema.field(kind).type
    direct = [n for n in names if "." not in n]
    fixed = [n for n in direct if pa.types.is_primitive(struct_type.field(n).type)]
    leaf = (fixed or direct or names)[0] if names else None
    if leaf is None:
        return 0
    column = pf.read([f"{kind}.{leaf}"]).column(kind)
    return int(len(column) - column.null_count)


def last_checkpoint_version(storage: Storage) -> int | None:
    """The version ``_last_checkpoint`` names, or None when it is absent or unreadable.

    An unreadable ``_last_checkpoint`` is only a hint lost: readers list the log instead, and
    log cleanup deletes nothing without a readable one.

    Args:
        storage: The table's storage.

    Returns:
        The version, or None.
    """
    try:
        data = loads_bytes(storage.read_bytes(f"{LOG_DIR}/{LAST_CHECKPOINT}"))
    except FileNotFoundError:
        return None
    except (ValueError, UnicodeDecodeError):  # JSONDecodeError is a ValueError
        log.warning("%s: unreadable %s; treating it as absent", storage.root, LAST_CHECKPOINT)
        return None
    version = data.get("version") if isinstance(data, dict) else None
    if isinstance(version, bool) or not isinstance(version, int) or version < 0:
        log.warning(
            "%s: %s has no valid version; treating it as absent", storage.root, LAST_CHECKPOINT
        )
        return None
    return version


def checkpoint_sidecars(storage: Storage, part: LogFile) -> list[str]:
    """The sidecar file names a (v2) checkpoint file references (empty for other formats).

    Args:
        storage: The table's storage.
        part: The checkpoint file.

    Returns:
        Sidecar names relative to ``_delta_log/_sidecars``.
    """
    if part.checkpoint_format != "v2":
        return []
    return [
        require_str(action["sidecar"], "path", "sidecar")
        for _, action in checkpoint_actions(storage, part)
        if action.get("sidecar") is not None
    ]


def checkpoint_actions(
    storage: Storage,
    part: LogFile,
    *,
    with_stats: bool = False,
    parse_adds: bool = False,
    columns: list[FileColumns] | None = None,
) -> Iterator[tuple[At, dict[str, Any]]]:
    """The actions of one checkpoint file (a JSON v2 top file, or Parquet).

    Args:
        storage: The table's storage.
        part: The checkpoint file.
        with_stats: Also read ``add.stats``.
        parse_adds: Well-formed ``add`` rows come back parsed (``AddFile``), paths relative to
            the table root.
        columns: As ``read_parquet_actions``: ``add``/``remove`` rows as path columns here.

    Returns:
        (location, single-key action dict) pairs.

    Raises:
        DeltaLogError: When the file is not a readable checkpoint.
    """
    where = f"{storage.root}/{part.path}"
    if part.name.endswith(".json"):
        return json_lines(storage.read_bytes(part.path), where)
    data = storage.read_arrow_buffer(part.path)  # the Parquet reader's own memory: no copy
    root = storage.root if parse_adds else None
    return read_parquet_actions(data, where, with_stats=with_stats, root=root, columns=columns)
