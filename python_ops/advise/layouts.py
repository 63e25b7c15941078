"""What each read of a table would admit under a candidate layout, from a sample of its rows.

A layout is the columns a Z-order sorts by. For a candidate, a sample of the table's rows
(about ``SAMPLE_ROWS``, seeded, from up to ``SAMPLE_FILES`` files, each by its size) is sorted
along the Z-order curve of those columns (``zorder_key``, as OPTIMIZE sorts them) within each
partition, and cut into the files OPTIMIZE would write at the model's target size (per
partition, at least one); each cut's smallest and largest value of every column are its
statistics. A read (``Scan``) admits a file when every predicate admits the file's [min, max];
the share of the table it scans is the share of files admitted. The share it scans now comes
from the live files' own ``add.stats``, by bytes. A predicate's selectivity is the share of
sampled rows it keeps.

Values are compared by rank: each column's distinct sampled values are sorted once and every row
and bound becomes a position in that order, so dates, strings and numbers compare alike.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from python_ops.advise.bounds import Bounds
from python_ops.advise.predicates import Scan, ScanPredicate
from python_ops.advise.skipping import _bounds, _comparable
from python_ops.delta.log.actions import AddFile
from python_ops.delta.state.snapshot import Snapshot
from python_ops.errors import MaintenanceError, StorageError
from python_ops.ops.optimize.sorting.zorder import zorder_key
from python_ops.storage import open_storage

if TYPE_CHECKING:
    from numpy.typing import NDArray

SAMPLE_ROWS = 200_000  # rows sorted per candidate layout, at most
SAMPLE_FILES = 64  # files the sample is read from, at most (spread over the table)
Partition = tuple[tuple[str, str | None], ...]
Cuts = dict[str, tuple["NDArray[np.int64]", "NDArray[np.int64]"]]  # column -> files' min, max


def _partition(add: AddFile) -> Partition:
    return tuple(sorted(add.partition_values.items()))


def files_per_partition(snapshot: Snapshot, target_bytes: int) -> dict[Partition, int]:
    """Files OPTIMIZE writes per partition at ``target_bytes`` (at least one each)."""
    size: dict[Partition, int] = defaultdict(int)
    for f in snapshot.files:
        size[_partition(f)] += f.size_bytes
    return {p: max(1, math.ceil(s / target_bytes)) for p, s in size.items()}


def _read(snapshot: Snapshot, columns: Sequence[str]) -> tuple[pa.Table, list[Partition]]:
    """A seeded sample of ``columns`` from up to ``SAMPLE_FILES`` files spread over the table.

    Each file read gives its share of ``SAMPLE_ROWS`` by its size, from only the row groups
    that hold it (ranged reads of the columns' chunks, on object stores too), so about that many
    rows are ever read and kept; each row's partition is beside it.
    """
    import pyarrow.parquet as pq

    files = sorted((f for f in snapshot.files if f.relative_path), key=lambda f: f.path)
    chosen = files[:: max(1, math.ceil(len(files) / SAMPLE_FILES))]
    total = sum(max(1, f.size_bytes) for f in chosen)
    storage = open_storage(snapshot.location)
    rng = random.Random(0)
    pieces: list[pa.Table] = []
    partitions: list[Partition] = []
    for add in chosen:
        quota = math.ceil(SAMPLE_ROWS * max(1, add.size_bytes) / total)
        fs, path = storage.arrow_path(str(add.relative_path))
        try:
            with fs.open_input_file(path) as handle:
                table = _row_groups(pq.ParquetFile(handle), columns, quota)
        except (OSError, KeyError, ValueError) as err:
            raise StorageError(f"cannot read the sample from {add.path}: {err}") from err
        if table.num_rows > quota:
            table = table.take(pa.array(sorted(rng.sample(range(table.num_rows), quota))))
        pieces.append(table)
        partitions += [_partition(add)] * table.num_rows
    if not pieces:
        return pa.table({c: pa.array([], pa.int64()) for c in columns}), []
    return pa.concat_tables(pieces, promote_options="permissive"), partitions


def _row_groups(parquet: Any, columns: Sequence[str], quota: int) -> pa.Table:
    """The columns of enough row groups, evenly spread, to hold ``quota`` rows (ranged reads)."""
    groups, rows = parquet.num_row_groups, parquet.metadata.num_rows
    if groups <= 1 or rows <= quota:
        return parquet.read(columns=list(columns), use_threads=False)
    wanted = min(groups, math.ceil(quota * groups / rows) + 1)
    picked = sorted({round(i * (groups - 1) / max(1, wanted - 1)) for i in range(wanted)})
    return parquet.read_row_groups(picked, columns=list(columns), use_threads=False)


def _plain(values: pa.ChunkedArray) -> pa.Array:
    array = values.combine_chunks()
    if pa.types.is_dictionary(array.type):
        array = array.dictionary_decode()
    if pa.types.is_decimal(array.type):
        array = pc.cast(array, pa.float64())
    return array


class LayoutModel:
    """A table's sample, ready to be cut into files under any candidate layout.

    Args:
        snapshot: The table, read with file statistics.
        columns: The columns predicates use (those not in the table's files are left out).
        target_bytes: OPTIMIZE's target file size for the model.

    Raises:
        MaintenanceError: When the sample cannot be read (column mapping, unreadable files).
    """

    def __init__(self, snapshot: Snapshot, columns: Sequence[str], target_bytes: int) -> None:
        if snapshot.metadata.configuration.get("delta.columnMapping.mode", "none") != "none":
            raise MaintenanceError(
                f"{snapshot.location}: column mapping: data files name columns physically, "
                "the sample is not read"
            )
        self.snapshot = snapshot
        partitioned = set(snapshot.metadata.partition_columns)
        self.partition_columns = tuple(sorted(partitioned))
        names = {f["name"] for f in snapshot.metadata.schema_fields()}
        self.columns = tuple(c for c in columns if c in names and c not in partitioned)
        table, partitions = _read(snapshot, self.columns)
        self.rows = int(table.num_rows)
        self.values = {c: _plain(table.column(c)) for c in self.columns}
        self._uniques = {c: pc.unique(v.drop_null()).sort() for c, v in self.values.items()}
        self._codes = {c: self._code(c) for c in self.columns}
        per_partition = files_per_partition(snapshot, target_bytes)
        groups: dict[Partition, list[int]] = defaultdict(list)
        for i, p in enumerate(partitions):
            groups[p].append(i)
        self._groups = [
            (np.array(g, dtype=np.int64), per_partition.get(p, 1)) for p, g in groups.items()
        ]
        self.files_after = sum(per_partition.values())
        self._cuts: dict[tuple[str, ...], Cuts] = {}

    def _code(self, column: str) -> NDArray[np.int64]:
        codes = pc.index_in(self.values[column], value_set=self._uniques[column])
        return np.asarray(codes.fill_null(-1), dtype=np.int64)

    def code_range(self, predicate: ScanPredicate) -> tuple[int, int] | None:
        """The predicate's bounds as positions among the column's sampled values (None: no)."""
        uniques = self._uniques.get(predicate.column)
        if uniques is None:
            return None
        return _positions(uniques, predicate.bounds)

    def selectivity(self, predicate: ScanPredicate) -> float | None:
        """The share of sampled rows the predicate keeps (None: not evaluated, or no rows)."""
        found = self.code_range(predicate)
        if found is None or self.rows == 0:
            return None
        codes = self._codes[predicate.column]
        low, high = found
        inside = int(np.count_nonzero((codes >= low) & (codes <= high) & (codes >= 0)))
        return inside / self.rows

    def cuts(self, layout: Sequence[str]) -> Cuts:
        """Per column, the [min, max] positions of each file the layout's OPTIMIZE would write."""
        key = tuple(layout)
        if key not in self._cuts:
            self._cuts[key] = self._cut(key)
        return self._cuts[key]

    def _cut(self, layout: tuple[str, ...]) -> Cuts:
        lows: dict[str, list[NDArray[np.int64]]] = defaultdict(list)
        highs: dict[str, list[NDArray[np.int64]]] = defaultdict(list)
        for rows, files in self._groups:
            key = zorder_key([self.values[c].take(pa.array(rows)) for c in layout])
            ordered = rows[np.argsort(key, kind="stable")]
            starts = np.array([part[0] for part in _splits(len(ordered), files)])
            for column, codes in self._codes.items():
                mine = codes[ordered]
                big = np.iinfo(np.int64).max
                lows[column].append(np.minimum.reduceat(np.where(mine < 0, big, mine), starts))
                highs[column].append(np.maximum.reduceat(mine, starts))
        return {c: (np.concatenate(lows[c]), np.concatenate(highs[c])) for c in self._codes}

    def share(self, scan: Scan, cuts: Cuts) -> float:
        """The share of the layout's files ``scan`` admits (every predicate admits the file)."""
        admitted: NDArray[np.bool_] | None = None
        for predicate in scan.predicates:
            found = self.code_range(predicate)
            if found is None or predicate.column not in cuts:
                continue
            low, high = cuts[predicate.column]
            ok = (low <= found[1]) & (high >= found[0])
            admitted = ok if admitted is None else admitted & ok
        if admitted is None or len(admitted) == 0:
            return 1.0
        return float(np.count_nonzero(admitted)) / len(admitted)


def _splits(rows: int, files: int) -> list[NDArray[np.int64]]:
    """Row positions of each of ``files`` cuts of ``rows`` sorted rows (no empty cut)."""
    parts = np.array_split(np.arange(rows, dtype=np.int64), max(1, min(files, rows)))
    return [p for p in parts if len(p)] or [np.zeros(1, dtype=np.int64)]


def _scalar(value: Any, to: pa.DataType) -> pa.Scalar | None:
    try:
        return pa.scalar(value).cast(to)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, OverflowError):
        return None


def _positions(uniques: pa.Array, bounds: Bounds) -> tuple[int, int] | None:
    """[first, last] positions in sorted ``uniques`` that ``bounds`` admits (None: no compare)."""
    low, high = 0, len(uniques) - 1
    if bounds.low is not None:
        scalar = _scalar(bounds.low, uniques.type)
        if scalar is None:
            return None
        below = pc.less_equal if bounds.low_open else pc.less
        low = int(pc.sum(below(uniques, scalar)).as_py() or 0)
    if bounds.high is not None:
        scalar = _scalar(bounds.high, uniques.type)
        if scalar is None:
            return None
        upto = pc.less if bounds.high_open else pc.less_equal
        high = int(pc.sum(upto(uniques, scalar)).as_py() or 0) - 1
    return low, high


def _file_admits(stats: tuple[Any, Any] | None, bounds: Bounds) -> bool:
    if stats is None:
        return True
    low, high = stats
    try:
        if bounds.high is not None:
            top = _comparable(bounds.high)
            if low > top or (bounds.high_open and low == top):
                return False
        if bounds.low is not None:
            bottom = _comparable(bounds.low)
            if high < bottom or (bounds.low_open and high == bottom):
                return False
    except TypeError:
        return True
    return True


def _admitted(snapshot: Snapshot, scan: Scan, columns: Sequence[str] | None) -> list[AddFile]:
    return [
        add
        for add in snapshot.files
        if all(
            _file_admits(_bounds(add, p.column), p.bounds)
            for p in scan.predicates
            if columns is None or p.column in columns
        )
    ]


def files_admitting(snapshot: Snapshot, scan: Scan) -> int:
    """The live files whose statistics admit every predicate of ``scan`` (a reader opens them)."""
    return len(_admitted(snapshot, scan, None))


def share_now(snapshot: Snapshot, scan: Scan, columns: Sequence[str]) -> float:
    """The share of the table's bytes ``scan`` reads now, from the live files' statistics."""
    total = sum(f.size_bytes for f in snapshot.files)
    if total == 0:
        return 1.0
    return sum(f.size_bytes for f in _admitted(snapshot, scan, columns)) / total
