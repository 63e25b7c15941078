"""The statistics plan: which columns a table's files must have statistics for, which lack them.

Watched columns are the caller's (``--columns``; under ``maintenance_stats: auto`` the advisor's
columns) plus the table's indexed columns (Delta's statistics columns). A watched column outside
the indexed ones would get statistics no Delta reader reads, so the plan also names the
``delta.dataSkippingStatsColumns`` value that adds it (today's indexed columns first).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from python_ops.delta.log.actions import AddFile
from python_ops.delta.state.snapshot import Snapshot, read_snapshot, require_unambiguous
from python_ops.delta.table.features import Op
from python_ops.delta.table.protocol import check_protocol, table_features
from python_ops.errors import ConfigError, StatsUnsupportedError
from python_ops.ops.stats.columns import (
    STATS_COLUMNS,
    StatsField,
    check_supported_types,
    data_fields,
    indexed_fields,
    listable,
    resolve_watched,
    string_prefix_length,
    widened_stats_columns,
)
from python_ops.ops.stats.stats_json import missing_columns
from python_ops.storage import Storage

JSON_STATS_IN_CHECKPOINTS = "delta.checkpoint.writeStatsAsJson"


@dataclass(frozen=True)
class StatsPlan:
    """What the statistics op will do on one table version.

    Attributes:
        snapshot: The snapshot planned on (with statistics).
        watched: The watched top-level columns (partition columns left out).
        partition_columns_named: Watched columns that are partition columns (no stats needed).
        fields: The statistics columns after the op (the tree written per file).
        stats_columns_before: ``delta.dataSkippingStatsColumns`` now (None: unset).
        stats_columns_after: The value the op sets, None when it sets none.
        files_due: Live files whose statistics lack a statistics column (or have none).
        files_without_stats: Of those, files with no usable statistics at all.
        string_prefix: ``delta.dataSkippingStringPrefixLength``.
        tight_bounds_flag: The table supports deletion vectors (``tightBounds`` is written).
        features_ruled: Table features whose rule applies (protocol gate).
    """

    snapshot: Snapshot
    watched: tuple[str, ...]
    partition_columns_named: tuple[str, ...]
    fields: tuple[StatsField, ...]
    stats_columns_before: str | None
    stats_columns_after: str | None
    files_due: tuple[AddFile, ...]
    files_without_stats: int
    string_prefix: int
    tight_bounds_flag: bool
    features_ruled: tuple[str, ...]

    @property
    def has_work(self) -> bool:
        """Whether a commit is needed."""
        return bool(self.files_due) or self.stats_columns_after is not None


def _check_watched_types(watched: Sequence[str], fields: Sequence[StatsField]) -> None:
    by_name = {f.name: f for f in fields}
    for name in watched:
        field = by_name[name]
        if not listable(field):
            raise ConfigError(
                setting="columns",
                value=name,
                fix=f"column '{name}' is of type {field.delta_type}: Delta keeps no min/max for "
                "it and refuses it in delta.dataSkippingStatsColumns; watch columns of numeric, "
                "date, timestamp or string types (or structs of them)",
            )


def plan_stats(
    location: str | Storage,
    *,
    columns: Sequence[str] = (),
    snapshot: Snapshot | None = None,
    set_stats_columns: bool = True,
) -> StatsPlan:
    """Plan the statistics op on the table's latest version.

    Args:
        location: The table (a location, or its open storage).
        columns: Watched columns besides the table's indexed ones.
        snapshot: The snapshot to plan on (read with statistics when None).
        set_stats_columns: Widen ``delta.dataSkippingStatsColumns`` to the watched columns.

    Returns:
        The plan; nothing is written.

    Raises:
        UnsupportedFeatureError: A table feature the statistics commit refuses.
        ConfigError: A watched column the table lacks or whose type cannot be watched.
        StatsUnsupportedError: A statistics column type this op cannot compute.
    """
    if snapshot is None or snapshot.checkpoint_version is not None:  # checkpoint: no stats read
        snapshot = read_snapshot(location, with_stats=True)
    require_unambiguous(snapshot, "COMPUTE STATS")
    ruled = check_protocol(snapshot.protocol, Op.STATS, location=snapshot.location)
    snapshot.metadata.require_schema("stats", snapshot.location)
    schema = json.loads(snapshot.metadata.schema_string)
    parts = snapshot.metadata.partition_columns
    config = snapshot.metadata.configuration
    if config.get(JSON_STATS_IN_CHECKPOINTS, "true").lower() == "false":
        raise StatsUnsupportedError(
            f"{snapshot.location}: {JSON_STATS_IN_CHECKPOINTS} is false, so the table's "
            "checkpoints keep statistics only as stats_parsed, which this op does not read: "
            "every checkpointed file would look as if it had none. Nothing was written."
        )
    watched, named_parts = resolve_watched(columns, schema, parts)
    _check_watched_types(watched, data_fields(schema, parts))
    indexed = indexed_fields(schema, parts, config)
    after = widened_stats_columns(indexed, watched) if set_stats_columns else None
    fields = indexed_fields(schema, parts, {**config, STATS_COLUMNS: after}) if after else indexed
    check_supported_types(fields, location=snapshot.location)
    due = []
    bare = 0
    for f in snapshot.files:
        lacking = missing_columns(f.stats, fields)
        if lacking is None:
            bare += 1
        if lacking is None or lacking:
            due.append(f)
    features = table_features(snapshot.protocol, location=snapshot.location)
    return StatsPlan(
        snapshot=snapshot,
        watched=tuple(watched),
        partition_columns_named=tuple(named_parts),
        fields=tuple(fields),
        stats_columns_before=config.get(STATS_COLUMNS),
        stats_columns_after=after,
        files_due=tuple(due),
        files_without_stats=bare,
        string_prefix=string_prefix_length(config),
        tight_bounds_flag="deletionVectors" in features.all,
        features_ruled=ruled,
    )
