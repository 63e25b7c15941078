"""The table of decisions: every Delta table feature this project knows, and what each op does.

``FEATURES`` is the one table (``support_table`` renders it in docs/right-or-refuse.md): a
feature named there is supported, supported with a rule, or refused, per op (``Op``) and per
writer (``Writer``). Its rules for the writer ops are delta-rs's, the writer this project runs
in-process. When an engine with Delta's own SQL rewrites the table (OPTIMIZE handed to Delta),
the rules are that writer's: every feature Delta 4.4 writes is supported for the rewrite ops,
except the table-level refusals (a catalog-owned or redirected table) that hold for any writer.
The gate that applies the table to a table's protocol is ``protocol``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum


class Op(StrEnum):
    """What an op does to a table, as far as the protocol is concerned."""

    VACUUM = "vacuum"
    CLEANUP_LOGS = "cleanup_logs"
    CHECKPOINT = "checkpoint"
    COMPACTION = "compaction"
    ZORDER = "zorder"
    PROPERTIES = "properties"
    HEALTH = "health"
    STATS = "stats"


class Writer(StrEnum):
    """Who commits a rewrite: the gate asks the writer that will actually run."""

    DELTA_RS = "delta-rs"
    DELTA = "Delta"  # Delta's own SQL on the engine (delta-spark 4.4)


# Every table feature delta-spark 4.4.0 reads and writes (``TableFeature.allSupportedFeaturesMap``
# in delta-io/delta v4.4.0, test-only features left out).
DELTA_WRITES = frozenset(
    {
        "allowColumnDefaults",
        "appendOnly",
        "catalogManaged",
        "changeDataFeed",
        "checkConstraints",
        "checkpointProtection",
        "clustering",
        "columnMapping",
        "coordinatedCommits-preview",
        "deletionVectors",
        "domainMetadata",
        "generatedColumns",
        "geospatial",
        "geospatial-dev",
        "icebergCompatV1",
        "icebergCompatV2",
        "icebergCompatV3",
        "identityColumns",
        "inCommitTimestamp",
        "invariants",
        "materializePartitionColumns",
        "rowTracking",
        "timestampNtz",
        "typeWidening",
        "typeWidening-preview",
        "v2Checkpoint",
        "vacuumProtocolCheck",
        "variantShredding",
        "variantShredding-preview",
        "variantType",
        "variantType-preview",
    }
)
# Refusals that hold whoever writes: the table's log is not (only) the one at its location.
_TABLE_LEVEL_REFUSALS = frozenset(
    {
        "catalogManaged",
        "catalogOwned-preview",
        "redirectReaderWriter-preview",
        "redirectWriterOnly-preview",
    }
)
_UNKNOWN_TO_DELTA = (
    "Delta 4.4 does not know this feature name and refuses to VACUUM, rewrite or commit to "
    "the table (DELTA_UNSUPPORTED_FEATURES_FOR_WRITE); this project refuses what Delta refuses"
)
_DELTA_CLUSTERS = (
    "Delta's OPTIMIZE clusters the table on its clustering columns; the plan's choice of "
    "files does not apply"
)

# Ops whose commit goes through delta-rs (checkpoints, OPTIMIZE, table properties).
WRITER_OPS = (Op.CHECKPOINT, Op.COMPACTION, Op.ZORDER, Op.PROPERTIES)
REWRITE_OPS = (Op.COMPACTION, Op.ZORDER)
# Ops Delta's own writer can run instead of delta-rs: the rewrites (OPTIMIZE, REORG ... PURGE,
# gated as compaction) and checkpoints (``DeltaLog.checkpoint`` on a local classic Spark).
DELTA_WRITER_OPS = (*REWRITE_OPS, Op.CHECKPOINT)
# Liquid clustering under its released and its Databricks Runtime 13.x preview name.
CLUSTERING_FEATURES = ("clustering", "liquid")
# The in-commit-timestamp feature under its released and its Delta 3.x preview name.
IN_COMMIT_TIMESTAMP_FEATURES = ("inCommitTimestamp", "inCommitTimestamp-preview")


class Verdict(StrEnum):
    """A feature's decision for one op."""

    SUPPORTED = "supported"
    RULE = "supported with a rule"
    REFUSED = "refused"


@dataclass(frozen=True)
class Decision:
    """A verdict and the reason (empty for plain support)."""

    verdict: Verdict
    reason: str = ""


@dataclass(frozen=True)
class Feature:
    """One table feature of the Delta protocol and what each op does about it.

    Attributes:
        name: The name as it appears in ``readerFeatures`` / ``writerFeatures``.
        reader: True for reader-writer features, False for writer-only features.
        decisions: Op to decision; an op not listed supports the feature plainly.
    """

    name: str
    reader: bool
    decisions: Mapping[Op, Decision] = field(default_factory=dict)

    def decision(self, op: Op, writer: Writer = Writer.DELTA_RS) -> Decision:
        """The decision for ``op`` when ``writer`` commits it.

        Args:
            op: The op.
            writer: Who rewrites and commits (only the rewrite ops can go to Delta).

        Returns:
            The recorded decision (plain support when none is recorded); for Delta's own
            rewrite, support for every feature Delta 4.4 writes.
        """
        recorded = self.decisions.get(op, Decision(Verdict.SUPPORTED))
        if self.name not in DELTA_WRITES and op is not Op.HEALTH:
            # right or refuse: where Delta 4.4 refuses to change the table (a feature name it
            # does not know: Databricks' preview ``liquid``, ``collations``), ours refuses too
            return Decision(Verdict.REFUSED, _UNKNOWN_TO_DELTA)
        if writer is Writer.DELTA_RS or op not in DELTA_WRITER_OPS:
            return recorded
        if self.name in _TABLE_LEVEL_REFUSALS and recorded.verdict is Verdict.REFUSED:
            return recorded
        if self.name not in DELTA_WRITES:
            return Decision(
                Verdict.REFUSED,
                "Delta 4.4, which would rewrite the table on the engine, does not support it",
            )
        if self.name == "clustering" and op in REWRITE_OPS:
            return Decision(Verdict.RULE, _DELTA_CLUSTERS)
        if recorded.verdict is Verdict.REFUSED:  # a delta-rs limit; Delta writes the feature
            return Decision(Verdict.SUPPORTED)
        return recorded


def _rule(reason: str, *ops: Op) -> dict[Op, Decision]:
    return {op: Decision(Verdict.RULE, reason) for op in ops}


def _refuse(reason: str, *ops: Op) -> dict[Op, Decision]:
    return {op: Decision(Verdict.REFUSED, reason) for op in ops}


_NOT_IN_DELTA_RS = "delta-rs, which commits for these ops here, does not support this feature"
# The statistics op (python_ops.ops.stats) writes its own commit: the same files re-added with
# new stats. A feature is refused for it where that commit, or the statistics, must do more.
_STATS_NOT_HERE = "the statistics commit (python_ops.ops.stats) does not do what this feature asks"
_REWRITE_KEEPS = "rewritten rows already satisfy it; files are replaced with dataChange=false"


def _feature(name: str, *, reader: bool, **groups: dict[Op, Decision]) -> Feature:
    decisions: dict[Op, Decision] = {}
    for group in groups.values():
        decisions.update(group)
    return Feature(name, reader, decisions)


def _writer_unsupported(reason: str = _NOT_IN_DELTA_RS) -> dict[Op, Decision]:
    return _refuse(reason, *WRITER_OPS)


FEATURES: dict[str, Feature] = {
    f.name: f
    for f in (
        _feature("appendOnly", reader=False, rw=_rule(_REWRITE_KEEPS, *REWRITE_OPS)),
        _feature("invariants", reader=False, rw=_rule(_REWRITE_KEEPS, *REWRITE_OPS)),
        _feature("checkConstraints", reader=False, rw=_rule(_REWRITE_KEEPS, *REWRITE_OPS)),
        _feature(
            "changeDataFeed",
            reader=False,
            vacuum=_rule("_change_data files are deleted by age only, as Delta does", Op.VACUUM),
            rw=_rule(
                "dataChange=false rewrites produce no change data, as Delta's OPTIMIZE",
                *REWRITE_OPS,
            ),
        ),
        _feature("generatedColumns", reader=False, rw=_rule(_REWRITE_KEEPS, *REWRITE_OPS)),
        _feature(
            "columnMapping",
            reader=True,
            vacuum=_rule(
                "data files live under random-prefix directories, which are walked; "
                "partition filters are refused",
                Op.VACUUM,
            ),
            rw=_rule(
                "name mode: files are read and written by their physical column names, "
                "statistics keyed and Z-order columns mapped to them; id mode (Parquet field "
                "ids) is rewritten by Delta's own writer",
                *REWRITE_OPS,
            ),
            stats=_rule(
                "Parquet columns are read and statistics keyed by physical name (the schema's "
                "delta.columnMapping.physicalName); in id mode the files' Parquet field ids "
                "must match delta.columnMapping.id",
                Op.STATS,
            ),
        ),
        _feature(
            "identityColumns",
            reader=False,
            rw={
                **_writer_unsupported(),
                **_rule(
                    "a rewrite writes no new identity value: the rows keep theirs, the "
                    "high-water mark in the schema is untouched",
                    *REWRITE_OPS,
                ),
            },
        ),
        _feature(
            "deletionVectors",
            reader=True,
            vacuum=_rule(
                "the deletion-vector file of every live file and unexpired tombstone is kept",
                Op.VACUUM,
            ),
            rw={
                **_refuse(
                    "delta-rs cannot checkpoint or set properties of a table with deletion vectors",
                    Op.CHECKPOINT,
                    Op.PROPERTIES,
                ),
                **_rule(
                    "each input's deletion vector is read as Delta stores it (RoaringBitmapArray, "
                    "size and checksum checked) and its deleted rows are dropped; each remove "
                    "carries its add's DV descriptor",
                    *REWRITE_OPS,
                ),
            },
            stats=_rule(
                "statistics describe a file's physical rows; a file with a deletion vector "
                "keeps it and gets tightBounds=false (wide bounds)",
                Op.STATS,
            ),
        ),
        _feature("timestampNtz", reader=True),
        _feature(
            "domainMetadata",
            reader=False,
            rw=_writer_unsupported(
                "writers must carry the table's domain metadata forward; delta-rs does not here"
            ),
        ),
        _feature(
            "v2Checkpoint",
            reader=True,
            cleanup=_rule(
                "a sidecar is deleted only when no kept checkpoint references it and it is "
                "older than the cutoff",
                Op.CLEANUP_LOGS,
            ),
            rw={
                **_writer_unsupported(
                    "delta-rs writes classic checkpoints only (also after its own commits), "
                    "which a v2-checkpoint table must not get"
                ),
                **_rule(
                    "a rewrite publishes one JSON commit and no checkpoint; the table's (v2) "
                    "checkpoints stay Delta's to write",
                    *REWRITE_OPS,
                ),
            },
            stats=_rule(
                "the files' add actions are read from the checkpoint's sidecars; the op commits "
                "JSON only and writes no checkpoint",
                Op.STATS,
            ),
        ),
        _feature(
            "rowTracking",
            reader=False,
            rw=_writer_unsupported(
                "rewrites must keep each row's id and commit version (baseRowId, "
                "defaultRowCommitVersion); delta-rs does not"
            ),
            stats=_refuse(_STATS_NOT_HERE + " (fresh row ids for files without one)", Op.STATS),
        ),
        *(
            _feature(
                name,
                reader=False,
                rw=_writer_unsupported(
                    "a liquid-clustered table is optimized by clustering on its clustering "
                    "columns; run OPTIMIZE with Delta"
                ),
            )
            # ``liquid``: Databricks Runtime 13.x's preview name of clustering, documented as
            # the same feature (clustering columns in the ``delta.clustering`` domain); Delta
            # 4.4 does not know the name, so its writer refuses it (DELTA_WRITES)
            for name in CLUSTERING_FEATURES
        ),
        _feature(
            "vacuumProtocolCheck",
            reader=True,
            vacuum=_rule(
                "VACUUM runs only when every reader and writer feature of the table is "
                "supported by VACUUM here (this gate)",
                Op.VACUUM,
            ),
            rw=_writer_unsupported(),
        ),
        *(
            _feature(
                name,
                reader=False,
                cleanup=_rule(
                    "expiry uses each commit's inCommitTimestamp from the enablement version "
                    "on, not file times",
                    Op.CLEANUP_LOGS,
                ),
                health=_rule("commit times are the commits' inCommitTimestamp", Op.HEALTH),
                rw={
                    **_writer_unsupported(
                        "every commit must carry a monotonic inCommitTimestamp; delta-rs does "
                        "not write one here"
                    ),
                    **(
                        _rule(
                            "each rewrite's commit carries inCommitTimestamp = max(now, the "
                            "previous commit's + 1 ms), commitInfo first",
                            *REWRITE_OPS,
                        )
                        if name == "inCommitTimestamp"
                        else {}
                    ),
                },
                stats=_refuse(_STATS_NOT_HERE + " (an inCommitTimestamp)", Op.STATS),
            )
            for name in IN_COMMIT_TIMESTAMP_FEATURES
        ),
        _feature(
            "checkpointProtection",
            reader=False,
            cleanup=_rule(
                "no commit or checkpoint below delta.requireCheckpointProtectionBeforeVersion "
                "is deleted",
                Op.CLEANUP_LOGS,
            ),
            rw=_writer_unsupported(),
        ),
        *(
            _feature(
                name,
                reader=True,
                all=_refuse(
                    "the catalog owns the log: commits it has ratified may not be published "
                    "in _delta_log yet; maintain the table through its catalog",
                    Op.VACUUM,
                    Op.CLEANUP_LOGS,
                    Op.STATS,
                    *WRITER_OPS,
                ),
                health=_rule("reports the published log, which may lag the catalog", Op.HEALTH),
            )
            for name in ("catalogManaged", "catalogOwned-preview")
        ),
        *(
            _feature(
                name,
                reader=reader,
                all=_refuse(
                    "the table is redirected: its current log and data live at another "
                    "location; maintain the table there",
                    *Op,
                ),
            )
            for name, reader in (
                ("redirectReaderWriter-preview", True),
                ("redirectWriterOnly-preview", False),
            )
        ),
        _feature(
            "timestampNanos",
            reader=True,
            rw=_refuse(
                "rewriting nanosecond timestamps through delta-rs has not been verified here",
                *REWRITE_OPS,
            ),
            stats=_refuse(_STATS_NOT_HERE + " (nanosecond timestamp bounds)", Op.STATS),
        ),
        _feature(
            "materializePartitionColumns",
            reader=False,
            rw=_writer_unsupported(
                "rewritten files must also hold the partition columns; delta-rs writes them without"
            ),
        ),
        *(
            _feature(
                name,
                reader=True,
                rw=_writer_unsupported(
                    "data files may hold older, narrower types that a rewrite must widen; "
                    "delta-rs does not here"
                ),
                stats=_refuse(_STATS_NOT_HERE + " (bounds of widened types)", Op.STATS),
            )
            for name in ("typeWidening", "typeWidening-preview")
        ),
        *(
            _feature(
                name,
                reader=True,
                rw=_writer_unsupported(),
                stats=_refuse(_STATS_NOT_HERE + " (variant statistics)", Op.STATS),
            )
            for name in ("variantType", "variantType-preview", "variantShredding-preview")
        ),
        *(
            _feature(
                name,
                reader=False,
                rw=_writer_unsupported(
                    "statistics of collated strings must follow each column's collation"
                ),
                stats=_refuse(
                    "statistics of collated strings must follow each column's collation", Op.STATS
                ),
            )
            for name in ("collations", "collations-preview")
        ),
        *(
            _feature(
                name,
                reader=False,
                vacuum=_refuse(
                    "UniForm keeps Iceberg metadata beside the data that the Delta log does "
                    "not reference; VACUUM it with Delta",
                    Op.VACUUM,
                ),
                rw=_writer_unsupported(
                    "every commit must also update the Iceberg metadata; delta-rs does not"
                ),
                stats=_refuse(_STATS_NOT_HERE + " (Iceberg metadata)", Op.STATS),
            )
            for name in (
                "icebergCompatV1",
                "icebergCompatV2",
                "icebergCompatV3",
                "icebergWriterCompatV1",
                "icebergWriterCompatV3",
            )
        ),
        _feature(
            "allowColumnDefaults",
            reader=False,
            rw=_writer_unsupported(),
        ),
    )
}


def support_table() -> str:
    """docs/right-or-refuse.md's table: every known feature x op, rendered from ``FEATURES``.

    Returns:
        A Markdown table; a footnote list gives each rule and refusal reason.
    """
    ops = list(Op)
    header = "| feature | kind | " + " | ".join(op.value for op in ops) + " |"
    lines = [header, "|---|---|" + "---|" * len(ops)]
    notes: dict[str, int] = {}
    marks = {Verdict.SUPPORTED: "yes", Verdict.RULE: "rule", Verdict.REFUSED: "refused"}
    for feature in sorted(FEATURES.values(), key=lambda f: f.name.lower()):
        cells = []
        for op in ops:
            decision = feature.decision(op)
            cell = marks[decision.verdict]
            if decision.reason:
                number = notes.setdefault(decision.reason, len(notes) + 1)
                cell += f" [{number}]"
            cells.append(cell)
        kind = "reader+writer" if feature.reader else "writer"
        lines.append(f"| `{feature.name}` | {kind} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.extend(f"{n}. {reason}" for reason, n in notes.items())
    return "\n".join(lines)
