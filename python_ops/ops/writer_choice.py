"""Which writer runs a write: delta-rs where it supports the table, else Delta's own.

delta-rs (in-process, no JVM) writes every table whose features it supports. Otherwise Delta
4.4 writes it: the engine's own Delta when the engine has one (``DeltaSql.has_delta``), else
a local Spark with Delta started in a child process on first need
(``python_ops.delta.writing.local_writer``).
When neither can (no Java, no jars, turned off), delta-rs's refusal stands and says what would
run the op; when Delta 4.4 itself does not support the table, its refusal is the answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from python_ops.delta.state.snapshot import Snapshot
from python_ops.delta.table.features import Op, Writer
from python_ops.delta.table.protocol import check_protocol
from python_ops.delta.writing.local_writer import require_start_allowed, unavailable_reason, writer
from python_ops.delta_sql import DeltaSql
from python_ops.errors import UnsupportedFeatureError


def delta_writer_for(
    snapshot: Snapshot, op: Op, sql: DeltaSql | None, location: str
) -> tuple[Writer, DeltaSql | None]:
    """The writer that will run ``op`` on the table, and the Delta SQL it runs through.

    Args:
        snapshot: The table's snapshot (its protocol).
        op: The write (``Op.COMPACTION``, ``Op.ZORDER``; purges are gated as compaction).
        sql: The engine's Delta SQL, if any (asked whether it has Delta only when needed).
        location: The table location.

    Returns:
        (``Writer.DELTA_RS``, ``sql`` unchanged) when delta-rs supports the table, else
        (``Writer.DELTA``, the engine's or the local writer's ``DeltaSql``).

    Raises:
        UnsupportedFeatureError: When Delta 4.4 does not support the table either, or no
            Delta writer is available here (the reason names what is missing).
        EngineError: When the engine cannot say whether it has Delta.
        JvmDeferredError: When the local writer would start where starts are deferred.
    """
    try:
        check_protocol(snapshot.protocol, op, location=location, writer=Writer.DELTA_RS)
        _require_name_mapping(snapshot, op, location)
        return Writer.DELTA_RS, sql
    except UnsupportedFeatureError as refusal:
        check_protocol(snapshot.protocol, op, location=location, writer=Writer.DELTA)
        if sql is not None and sql.has_delta(location):
            return Writer.DELTA, sql
        missing = unavailable_reason()
        if missing is not None:
            raise UnsupportedFeatureError(
                table=location,
                feature=refusal.feature,
                op=refusal.op,
                reason=f"{refusal.reason}. Delta's own writer (a local Spark with Delta 4.4, "
                f"or an engine with Delta) would run it, but here {missing}",
            ) from refusal
        require_start_allowed()
        return Writer.DELTA, writer().sql()


def writer_gate(snapshot: Snapshot, op: Op, location: str) -> Writer:
    """The writer a rewrite of the table needs, from its protocol alone (nothing is asked).

    For a plan, before anything runs: which Delta would run it (the engine's, or the local
    writer started for it) is asked only when the plan has work (``delta_writer_for``).

    Args:
        snapshot: The table's snapshot (its protocol).
        op: The write (``Op.COMPACTION``, ``Op.ZORDER``).
        location: The table location.

    Returns:
        ``Writer.DELTA_RS`` when delta-rs supports the table, else ``Writer.DELTA``.

    Raises:
        UnsupportedFeatureError: When Delta 4.4 does not support the table either.
    """
    try:
        check_protocol(snapshot.protocol, op, location=location, writer=Writer.DELTA_RS)
        _require_name_mapping(snapshot, op, location)
        return Writer.DELTA_RS
    except UnsupportedFeatureError:
        check_protocol(snapshot.protocol, op, location=location, writer=Writer.DELTA)
        return Writer.DELTA


def keeps_empty_partition_values(
    snapshot: Snapshot,
    op: Op,
    partitions: Sequence[Mapping[str, str | None]],
    location: str,
) -> bool:
    """Whether the rewrite must stay here because Delta's writer would change a partition value.

    Measured on Delta 4.4: its OPTIMIZE (compaction and Z-order) rewrites a file whose partition
    value is the empty string (another engine wrote it so: Sail does) with that value null, and
    Delta then reads null where it read ``''``. Our writer copies each add's partition values
    byte for byte. So a rewrite of such a partition never goes to Delta's writer.

    Args:
        snapshot: The table's snapshot.
        op: The rewrite (``Op.COMPACTION``, ``Op.ZORDER``; purges as compaction).
        partitions: The partition values of the partitions to rewrite.
        location: The table location.

    Returns:
        False when no partition has an empty-string value; True when one has and our writer
        supports the table (it runs here instead).

    Raises:
        UnsupportedFeatureError: When one has and only Delta's writer supports the table:
            refused before anything is written, naming the partition.
    """
    empty = [dict(p) for p in partitions if any(v == "" for v in p.values())]
    if not empty:
        return False
    try:
        check_protocol(snapshot.protocol, op, location=location, writer=Writer.DELTA_RS)
        _require_name_mapping(snapshot, op, location)
    except UnsupportedFeatureError as refusal:
        raise UnsupportedFeatureError(
            table=location,
            feature=refusal.feature,
            op=str(op),
            reason=f"{refusal.reason}; and Delta 4.4's writer would rewrite the empty-string "
            f"partition value of {empty[0]} as null, changing the rows Delta reads. Leave that "
            "partition out (a partition condition) or rewrite the value first",
        ) from refusal
    return True


def _require_name_mapping(snapshot: Snapshot, op: Op, location: str) -> None:
    """Column mapping in ``id`` mode is Delta's to rewrite (files must carry field ids).

    Raises:
        UnsupportedFeatureError: For ``id`` mode, naming the feature.
    """
    if snapshot.metadata.column_mapping_mode() == "id":
        raise UnsupportedFeatureError(
            table=location,
            feature="columnMapping",
            op=str(op),
            reason="column mapping in id mode: the rewritten files must carry the schema's "
            "Parquet field ids, which Delta's own writer keeps",
        )


def checkpoint_writer(snapshot: Snapshot, location: str) -> tuple[Writer | None, str | None]:
    """Who may write a checkpoint of the table: delta-rs, Delta (locally), or nobody and why.

    Args:
        snapshot: The table's snapshot.
        location: The table location.

    Returns:
        (writer, None), or (None, why no checkpoint may be written).

    Raises:
        JvmDeferredError: When only the local writer could and starts are deferred here.
    """
    if snapshot.metadata.schema_missing:
        return None, "no checkpoint written: the table's metaData action has no schemaString"
    try:
        check_protocol(snapshot.protocol, Op.CHECKPOINT, location=location)
        return Writer.DELTA_RS, None
    except UnsupportedFeatureError as refusal:
        try:
            check_protocol(snapshot.protocol, Op.CHECKPOINT, location=location, writer=Writer.DELTA)
        except UnsupportedFeatureError as err:
            return None, f"no checkpoint written: table feature '{err.feature}': {err.reason}"
        missing = unavailable_reason()
        if missing is not None:
            return None, (
                f"no checkpoint written: table feature '{refusal.feature}': {refusal.reason}; "
                f"Delta's own writer (a local Spark with Delta 4.4) would write it, but here "
                f"{missing}"
            )
        require_start_allowed()
        return Writer.DELTA, None
