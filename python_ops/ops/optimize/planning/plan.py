"""OPTIMIZE planning, as Delta's ``OptimizeExecutor`` plans: candidates, bins, worth-it rules.

The plan is a value: which partitions, which files, how many output bins and bytes, and why
partitions were left out. Nothing runs until the executor (``python_ops.ops.optimize.execute``)
takes it.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from python_ops.delta.log.actions import AddFile
from python_ops.delta.log.commits import commit_actions, commit_versions
from python_ops.delta.state.snapshot import Snapshot, read_snapshot, require_unambiguous
from python_ops.delta.table.features import Op, Writer
from python_ops.delta.table.partition_scope import parse_scope
from python_ops.delta.table.properties import INDEXED_COLUMNS, STATS_COLUMNS, TARGET_FILE_SIZE
from python_ops.delta.table.protocol import check_protocol
from python_ops.errors import ConfigError
from python_ops.storage import Storage, open_storage
from python_ops.values import checked_number

Filter = tuple[str, str, Any]  # a delta-rs partition filter: (column, operator, value)
# our Z-order commits (python_ops.ops.optimize.sorting.zorder)
OPERATION_MARKER = "python_ops.operation"
# A partition is compacted once it has this many small files (the one default, also of the
# per-model setting maintenance_min_small_files): fewer would rewrite after every small append.
DEFAULT_MIN_SMALL_FILES = 10
ENGINE_DEFAULT_TARGET_BYTES = 100 * 1024 * 1024  # delta-rs's default target file size


@dataclass(frozen=True)
class Bin:
    """Files rewritten together into (about) one target-size file.

    Attributes:
        files: The files in the bin, each named by its identity as Delta keys it
            (``AddFile.identity``: the path as the log spells it, as a URI; never a decoded
            spelling, which two different files to Delta may share).
        bytes: Their total size.
    """

    files: tuple[str, ...]
    bytes: int


@dataclass(frozen=True)
class PartitionPlan:
    """The plan for one partition.

    Attributes:
        partition_values: Partition column to value (empty for an unpartitioned table).
        files: Files in the partition.
        candidates: Files eligible for rewriting (small ones, or all for Z-order).
        bins: Planned bins (empty when it is not worth it).
        skipped_reason: Why nothing is rewritten here, if so.
    """

    partition_values: dict[str, str | None]
    files: int
    candidates: int
    bins: tuple[Bin, ...]
    skipped_reason: str | None

    @property
    def filters(self) -> list[Filter]:
        """Partition filters selecting exactly this partition (for the Delta writer).

        delta-rs cannot encode a null filter value; ``''`` selects the null partition (Delta
        stores empty-string partition values as null, so no other partition can match).
        """
        return [(c, "=", "" if v is None else v) for c, v in self.partition_values.items()]


@dataclass(frozen=True)
class OptimizePlan:
    """What OPTIMIZE would do.

    Attributes:
        location: The table location.
        version: The snapshot version planned on.
        zorder_by: Z-order columns (empty for compaction).
        target_size_bytes: Target file size.
        target_source: ``requested``, ``table property`` or ``engine default``.
        min_small_files: Minimum small files in a partition for compaction to be worth it.
        scope: ``full``, ``incremental`` (partitions changed since the last OPTIMIZE of the same
            kind) or ``everything`` (no earlier OPTIMIZE of this kind in the log).
        since_version: Version of the last OPTIMIZE of the same kind, for incremental scope.
        where: The partition predicate, if any.
        partitions: Plans of the partitions in scope.
        snapshot: The snapshot planned on, handed to the executor (not part of the plan's data).
    """

    location: str
    version: int
    zorder_by: tuple[str, ...]
    target_size_bytes: int
    target_source: str
    min_small_files: int
    scope: str
    since_version: int | None
    where: str | None
    partitions: tuple[PartitionPlan, ...]
    snapshot: Snapshot | None = field(default=None, repr=False, compare=False)

    @property
    def work(self) -> tuple[PartitionPlan, ...]:
        """Partitions with at least one bin to rewrite."""
        return tuple(p for p in self.partitions if p.bins)

    @property
    def files_to_rewrite(self) -> int:
        """Files the plan rewrites."""
        return sum(len(b.files) for p in self.work for b in p.bins)

    @property
    def bytes_to_rewrite(self) -> int:
        """Bytes the plan rewrites."""
        return sum(b.bytes for p in self.work for b in p.bins)

    def describe(self) -> str:
        """A readable summary: one line per partition with work, then totals."""
        kind = f"Z-order by {', '.join(self.zorder_by)}" if self.zorder_by else "compaction"
        lines = [
            f"OPTIMIZE plan for {self.location} at version {self.version}: {kind}, target "
            f"{self.target_size_bytes} bytes ({self.target_source}), scope {self.scope}"
            + (f" since version {self.since_version}" if self.since_version is not None else "")
        ]
        for p in self.work:
            where = ", ".join(f"{k}={v}" for k, v in p.partition_values.items()) or "(table)"
            lines.append(
                f"  {where}: {sum(len(b.files) for b in p.bins)} of {p.files} files into "
                f"{len(p.bins)} bin(s), {sum(b.bytes for b in p.bins)} bytes"
            )
        lines.append(
            f"  total: {len(self.work)} partition(s), {sum(len(p.bins) for p in self.work)} "
            f"bin(s), {self.files_to_rewrite} files, {self.bytes_to_rewrite} bytes"
        )
        return "\n".join(lines)


def _rel(f: AddFile) -> str:
    return f.identity


def _bins(files: list[AddFile], target: int, *, single_bin: bool) -> list[Bin]:
    """Greedy bins over files sorted by size: close a bin when the next file would overflow."""
    if single_bin:
        return (
            [Bin(tuple(_rel(f) for f in files), sum(f.size_bytes for f in files))] if files else []
        )
    bins: list[Bin] = []
    current: list[AddFile] = []
    size = 0
    for f in sorted(files, key=lambda f: (f.size_bytes, f.path)):
        if current and size + f.size_bytes > target:
            bins.append(Bin(tuple(_rel(x) for x in current), size))
            current, size = [], 0
        current.append(f)
        size += f.size_bytes
    if current:
        bins.append(Bin(tuple(_rel(x) for x in current), size))
    return [b for b in bins if len(b.files) > 1]  # a single file gains nothing


def stats_columns(snapshot: Snapshot) -> list[str]:
    """Columns Delta collects min/max statistics for (its data-skipping rule)."""
    config = snapshot.metadata.configuration
    names = [f["name"] for f in snapshot.metadata.schema_fields()]
    if STATS_COLUMNS in config:
        return [c.strip().strip("`") for c in config[STATS_COLUMNS].split(",")]
    limit = int(config.get(INDEXED_COLUMNS, "32"))
    return names if limit < 0 else names[:limit]


def validate_zorder(snapshot: Snapshot, columns: list[str]) -> None:
    """Refuse Z-order columns Delta refuses: partition columns, unknown columns, no stats.

    Raises:
        ConfigError: Naming the column and the valid choices.
    """
    names = [f["name"] for f in snapshot.metadata.schema_fields()]
    partition = set(snapshot.metadata.partition_columns)
    with_stats = set(stats_columns(snapshot)) - partition
    valid = ", ".join(n for n in names if n in with_stats)
    for column in columns:
        if column in partition:
            problem = "is a partition column (Z-order clusters data inside partitions)"
        elif column not in names:
            problem = "is not a column of the table"
        elif column not in with_stats:
            problem = "has no statistics (see delta.dataSkippingNumIndexedCols)"
        else:
            continue
        raise ConfigError(
            setting="zorder_by",
            value=column,
            fix=f"'{column}' {problem}; choose from: {valid}.",
        )


PartitionKey = tuple[tuple[str, str | None], ...]


def _partition_key(action: dict[str, Any]) -> PartitionKey:
    return tuple(sorted((action.get("partitionValues") or {}).items()))


def _is_optimize(info: dict[str, Any] | None, *, zorder: bool) -> bool:
    if info is None or "OPTIMIZE" not in (info.get("operation"), info.get(OPERATION_MARKER)):
        return False
    raw = (info.get("operationParameters") or {}).get("zOrderBy") or "[]"
    columns = json.loads(raw) if isinstance(raw, str) else raw
    return bool(columns) == zorder


def _partitions_in_scope(
    storage: Storage, *, zorder: bool
) -> tuple[int | None, set[PartitionKey] | None]:
    """Partitions data was added to since *their own* last OPTIMIZE of the same kind.

    One pass over the commits, newest first, each read once. A partition an OPTIMIZE commit
    rewrote is settled at that commit; data added to it later puts it back in scope. So a run
    killed between partition commits leaves the unfinished partitions in scope for the next
    run, and a partition the last run skipped (not worth it) is judged again.

    Returns:
        (version of the newest OPTIMIZE of this kind, partitions in scope); (None, None) when
        the log holds no OPTIMIZE of this kind, meaning every partition is in scope.
    """
    settled: set[PartitionKey] = set()
    changed: set[PartitionKey] = set()
    newest: int | None = None
    for version in reversed(commit_versions(storage)):
        actions = commit_actions(storage, version)
        info = next((a["commitInfo"] for a in actions if "commitInfo" in a), None)
        if _is_optimize(info, zorder=zorder):
            newest = version if newest is None else newest
            for action in actions:
                raw = action.get("add") or action.get("remove")
                if raw is not None:
                    settled.add(_partition_key(raw))
            continue
        for action in actions:
            add = action.get("add")
            if add is not None and add.get("dataChange", True):
                key = _partition_key(add)
                if key not in settled:
                    changed.add(key)
    return (newest, changed) if newest is not None else (None, None)


def target_file_size(configuration: Mapping[str, str], requested: int | None) -> tuple[int, str]:
    """The target file size OPTIMIZE bins to, and where it came from.

    Args:
        configuration: The table's properties (``delta.targetFileSize``).
        requested: The caller's size (None: the table property, else the engine default).

    Returns:
        (bytes, ``requested`` | ``table property`` | ``engine default``).

    Raises:
        ConfigError: For a size that is not a whole number of at least 1 byte.
    """
    value: Any
    if requested is not None:
        value, source = requested, "requested"
    elif TARGET_FILE_SIZE in configuration:
        value, source = configuration[TARGET_FILE_SIZE], "table property"
    else:
        value, source = ENGINE_DEFAULT_TARGET_BYTES, "engine default"
    setting = "delta.targetFileSize" if source == "table property" else "target_size_bytes"
    return int(checked_number(value, setting=setting, minimum=1, whole=True)), source


def plan_optimize(
    table: str | Storage,
    *,
    zorder_by: list[str] | None = None,
    where: str | None = None,
    full: bool = False,
    target_size_bytes: int | None = None,
    min_small_files: int = DEFAULT_MIN_SMALL_FILES,
    snapshot: Snapshot | None = None,
    writer: Writer = Writer.DELTA_RS,
) -> OptimizePlan:
    """Plan OPTIMIZE (compaction, or Z-order when ``zorder_by`` is given).

    Args:
        table: Table location or an open ``Storage``.
        zorder_by: Z-order columns; empty or None for compaction.
        where: Predicate on partition columns (``col op literal`` terms joined by AND).
        full: Consider every selected partition, not only those changed since the last
            OPTIMIZE of the same kind.
        target_size_bytes: Target file size; None uses ``delta.targetFileSize``, else the
            engine default (100 MiB).
        min_small_files: Compact a partition only when it has at least this many small files.
        snapshot: The table's latest snapshot when the caller has already read it.
        writer: Who will rewrite the table, for the protocol gate (delta-rs, or Delta's own
            SQL on an engine that has it); the executor asks again for the writer that runs.

    Returns:
        The plan.

    Raises:
        ConfigError: For bad Z-order columns, predicates or sizes.
        UnsupportedFeatureError: When the table uses a feature the rewrite does not support.
        DeltaLogError: When the table's metadata has no schema (a rewrite would lose columns).
    """
    storage = table if isinstance(table, Storage) else open_storage(table)
    snapshot = read_snapshot(storage) if snapshot is None else snapshot
    require_unambiguous(snapshot, "OPTIMIZE")
    meta = snapshot.metadata
    meta.require_schema("OPTIMIZE", storage.root)
    columns = list(zorder_by or [])
    check_protocol(
        snapshot.protocol,
        Op.ZORDER if columns else Op.COMPACTION,
        location=storage.root,
        writer=writer,
    )
    if columns:
        validate_zorder(snapshot, columns)
    target, source = target_file_size(meta.configuration, target_size_bytes)
    min_small_files = int(
        checked_number(min_small_files, setting="min_small_files", minimum=2, whole=True)
    )
    scope = (
        parse_scope(
            where,
            partition_columns=meta.partition_columns,
            schema_fields=meta.schema_fields(),
            setting="where",
        )
        if where is not None
        else None
    )
    since, changed = (None, None) if full else _partitions_in_scope(storage, zorder=bool(columns))
    by_partition: dict[PartitionKey, list[AddFile]] = defaultdict(list)
    for f in snapshot.files:
        if scope is None or scope.matches(f.partition_values):
            by_partition[tuple(sorted(f.partition_values.items()))].append(f)
    plans = [
        _partition_plan(
            key,
            files,
            unchanged=changed is not None and key not in changed,
            columns=columns,
            target=target,
            min_small_files=min_small_files,
            full=full,
        )
        for key, files in sorted(by_partition.items(), key=lambda kv: str(kv[0]))
    ]
    return OptimizePlan(
        location=storage.root,
        version=snapshot.version,
        zorder_by=tuple(columns),
        target_size_bytes=target,
        target_source=source,
        min_small_files=min_small_files,
        scope="full" if full else ("incremental" if since is not None else "everything"),
        since_version=since,
        where=where,
        partitions=tuple(plans),
        snapshot=snapshot,
    )


def _partition_plan(
    key: PartitionKey,
    files: list[AddFile],
    *,
    unchanged: bool,
    columns: list[str],
    target: int,
    min_small_files: int,
    full: bool,
) -> PartitionPlan:
    """One partition's plan: its bins, or why nothing is rewritten there."""
    if unchanged:
        return PartitionPlan(dict(key), len(files), 0, (), "unchanged since its last OPTIMIZE")
    candidates = files if columns else [f for f in files if f.size_bytes < target]
    reason = None
    if not columns and len(candidates) < min_small_files:
        reason = f"{len(candidates)} small file(s), fewer than min_small_files={min_small_files}"
    elif columns and not full and len(files) == 1 and files[0].size_bytes <= target:
        # a partition's only file: its min/max statistics stay what they are (FULL, asked
        # for explicitly, still sorts it within, as Delta's OPTIMIZE ZORDER does)
        reason = "one file: Z-ordering it changes no file's statistics"
    bins = () if reason else tuple(_bins(candidates, target, single_bin=bool(columns)))
    return PartitionPlan(dict(key), len(files), len(candidates), bins, reason)


def plan_summary(plan: OptimizePlan) -> dict[str, Any]:
    """The plan as plain data (partitions with work only)."""
    return {
        "version": plan.version,
        "zorder_by": list(plan.zorder_by),
        "target_size_bytes": plan.target_size_bytes,
        "target_source": plan.target_source,
        "scope": plan.scope,
        "since_version": plan.since_version,
        "where": plan.where,
        "partitions": [
            {
                "partition_values": p.partition_values,
                "bins": [{"files": list(b.files), "bytes": b.bytes} for b in p.bins],
            }
            for p in plan.work
        ],
        "files_to_rewrite": plan.files_to_rewrite,
        "bytes_to_rewrite": plan.bytes_to_rewrite,
    }
