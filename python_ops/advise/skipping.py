"""Files admitted per lookup: how many live files a reader must open to find one value.

For a column: a sample of its values is read from the table's data files (the rows of a few
files spread over the table, a seeded random sample of them), and for each value the live files
whose ``add.stats`` min/max admit it are counted (a file without min/max for the column is
admitted: a reader must open it). The mean over the sample is the figure: F for a table whose
files all span the whole range, about 1 for a table sorted on the column.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from python_ops.delta.log.actions import AddFile
from python_ops.delta.state.snapshot import Snapshot
from python_ops.errors import MaintenanceError, StorageError
from python_ops.storage import open_storage

SAMPLE_VALUES = 64  # values looked up per column
SAMPLE_FILES = 8  # files their values are read from


@dataclass(frozen=True)
class Admitted:
    """Files admitted per lookup on one column, measured.

    Attributes:
        column: The column.
        files: Live files of the table.
        admitted: Mean files whose min/max admit a sampled value.
        values: Values sampled.
        without_stats: Live files with no min/max for the column (always admitted).
    """

    column: str
    files: int
    admitted: float
    values: int
    without_stats: int


def _bounds(add: AddFile, column: str) -> tuple[Any, Any] | None:
    if not add.stats:
        return None
    try:
        stats = json.loads(add.stats)
    except ValueError:
        return None
    low = (stats.get("minValues") or {}).get(column)
    high = (stats.get("maxValues") or {}).get(column)
    return None if low is None or high is None else (low, high)


def _comparable(value: Any) -> Any:
    """A Python value in the form Delta's JSON statistics hold it."""
    if isinstance(value, dt.datetime):
        text = value.astimezone(dt.UTC) if value.tzinfo else value
        return text.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3]
    if isinstance(value, dt.date):
        return value.isoformat()
    return value


def _admits(bounds: tuple[Any, Any], value: Any) -> bool:
    low, high = bounds
    try:
        if isinstance(value, str) and isinstance(low, str) and isinstance(high, str):
            # string statistics may be truncated prefixes: compare on what they hold
            return low[: len(value)] <= value and value[: len(high)] <= high
        return bool(low <= value <= high)
    except TypeError:
        return True  # not comparable: a reader could not skip it either


def sample_values(snapshot: Snapshot, column: str, *, count: int = SAMPLE_VALUES) -> list[Any]:
    """A seeded sample of the column's non-null values, from a few files spread over the table.

    Raises:
        StorageError: When a data file cannot be read.
    """
    import pyarrow.parquet as pq

    files = sorted((f for f in snapshot.files if f.relative_path), key=lambda f: f.path)
    if not files:
        return []
    step = max(1, len(files) // SAMPLE_FILES)
    storage = open_storage(snapshot.location)
    values: list[Any] = []
    for add in files[::step][:SAMPLE_FILES]:
        try:
            data = storage.read_bytes(str(add.relative_path))
            table = pq.read_table(io.BytesIO(data), columns=[column], use_threads=False)
        except (OSError, KeyError, ValueError) as err:
            raise StorageError(f"cannot read {column} from {add.path}: {err}") from err
        values += [v for v in table.column(0).to_pylist() if v is not None]
    rng = random.Random(0)
    return rng.sample(values, min(count, len(values)))


def files_admitted(
    snapshot: Snapshot, column: str, values: Sequence[Any] | None = None
) -> Admitted:
    """Mean live files whose statistics admit a sampled value of ``column``.

    Args:
        snapshot: The table, read with file statistics.
        column: A column that is not a partition column.
        values: The values to look up (None: ``sample_values``).

    Returns:
        The measurement.

    Raises:
        MaintenanceError: When the sample cannot be read (column mapping, unreadable files).
    """
    if snapshot.metadata.configuration.get("delta.columnMapping.mode", "none") != "none":
        raise MaintenanceError(
            f"{snapshot.location}: column mapping: data files name columns physically, the "
            "sample is not read"
        )
    sample = list(values) if values is not None else sample_values(snapshot, column)
    bounds = [_bounds(f, column) for f in snapshot.files]
    known = [b for b in bounds if b is not None]
    unknown = len(bounds) - len(known)
    if not sample:
        return Admitted(column, len(bounds), float(len(bounds)), 0, unknown)
    total = 0
    for raw in sample:
        value = _comparable(raw)
        total += unknown + sum(1 for b in known if _admits(b, value))
    return Admitted(column, len(bounds), total / len(sample), len(sample), unknown)


def expected_after(files: int, columns: int) -> float:
    """Files a lookup on one of ``columns`` Z-ordered columns admits, ideally: F^(1-1/k)."""
    if files <= 1 or columns <= 0:
        return float(min(files, 1))
    return max(1.0, math.pow(files, 1 - 1 / columns))
