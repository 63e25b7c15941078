"""The maintenance advisor: per maintained model, the columns its readers filter and join on.

Every reader node (model, snapshot, test, analysis) of a maintained table is read
(``predicates``), its uses gathered per model and column, and the columns ranked by evidence:
equality and IN lookups weigh 3, range predicates and join keys 2, each (reader, kind) once.
At most three are recommended for Z-order (or liquid clustering); partition columns and columns
without statistics are listed as excluded, with the reason. With ``measure``, the files
admitted per lookup on each is measured now and the ideal after clustering given beside it.
"""

from __future__ import annotations

import dataclasses
import math
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from python_ops.advise.predicates import PredicateKind, Relation, RelationKey
from python_ops.advise.skipping import expected_after, files_admitted
from python_ops.advise.sources import is_maintained, node_config
from python_ops.delta.snapshot import Snapshot
from python_ops.errors import MaintenanceError
from python_ops.ops.optimize.plan import ENGINE_DEFAULT_TARGET_BYTES, stats_columns

MAX_COLUMNS = 3
WEIGHTS = {
    PredicateKind.EQUALITY: 3,
    PredicateKind.IN: 3,
    PredicateKind.RANGE: 2,
    PredicateKind.JOIN: 2,
}
NodeLocator = Callable[[Mapping[str, Any]], str | None]  # a model node -> its table, if built


@dataclass(frozen=True)
class Evidence:
    """One reader's use of a column: the node and the predicate kind."""

    node: str
    kind: str


@dataclass(frozen=True)
class ColumnEvidence:
    """A column's evidence and rank.

    Attributes:
        column: The column.
        score: The sum of the weights of its distinct (node, kind) uses.
        uses: The uses.
        excluded: Why it is not recommended ('' when it may be).
    """

    column: str
    score: int
    uses: tuple[Evidence, ...]
    excluded: str = ""


@dataclass(frozen=True)
class Unresolved:
    """A reader (or a predicate in it) the advisor could not resolve, and why."""

    node: str
    reason: str


@dataclass(frozen=True)
class ModelAdvice:
    """The advice for one maintained model.

    Attributes:
        model: The model name.
        unique_id: Its dbt unique id.
        location: Its table (None: not built).
        columns: The recommended clustering columns, best first (at most three).
        candidates: Every column readers use, ranked, the excluded ones with their reason.
        partition_columns: The table's partition columns (never recommended).
        readers: Reader nodes read.
        unresolved: What could not be resolved in its readers.
        files: Live files now (None: not measured).
        files_after: Files expected after OPTIMIZE at the target size (None: not measured).
        admitted_now: Files admitted per lookup now, per recommended column.
        admitted_after: The ideal after clustering on ``columns``: F^(1-1/k) per column.
        problem: Why nothing was measured ('' when it was, or was not asked).
    """

    model: str
    unique_id: str
    location: str | None
    columns: tuple[str, ...]
    candidates: tuple[ColumnEvidence, ...]
    partition_columns: tuple[str, ...] = ()
    readers: tuple[str, ...] = ()
    unresolved: tuple[Unresolved, ...] = ()
    files: int | None = None
    files_after: int | None = None
    admitted_now: dict[str, float] = field(default_factory=dict)
    admitted_after: dict[str, float] = field(default_factory=dict)
    problem: str = ""


def project_relations(
    nodes: Mapping[str, Mapping[str, Any]],
    sources: Mapping[str, Mapping[str, Any]],
    schemas: Mapping[str, tuple[str, ...]],
    sql_of: Callable[[Mapping[str, Any]], str | None],
) -> dict[RelationKey, Relation]:
    """Every relation the project's SQL may name: its models, seeds, snapshots and sources."""
    out: dict[RelationKey, Relation] = {}
    for uid, node in nodes.items():
        if node.get("resource_type") not in ("model", "snapshot", "seed"):
            continue
        key = (str(node.get("schema")).lower(), str(node.get("alias") or node.get("name")).lower())
        view = node_config(node).get("materialized") == "view"
        out[key] = Relation(
            uid, is_maintained(node), schemas.get(uid), sql_of(node) if view else None
        )
    for uid, source in sources.items():
        key = (str(source.get("schema")).lower(), str(source.get("identifier")).lower())
        out.setdefault(key, Relation(uid, False))
    return out


def rank_columns(
    uses: Mapping[str, set[Evidence]], snapshot: Snapshot | None
) -> tuple[ColumnEvidence, ...]:
    """The columns readers use, best first; partition and stat-less columns marked excluded."""
    partition = set(snapshot.metadata.partition_columns) if snapshot else set()
    names = {f["name"] for f in snapshot.metadata.schema_fields()} if snapshot else None
    with_stats = set(stats_columns(snapshot)) if snapshot else None
    ranked = []
    for column, evidence in uses.items():
        score = sum(WEIGHTS[PredicateKind(e.kind)] for e in evidence)
        excluded = ""
        if column in partition:
            excluded = "a partition column (files are already split on it)"
        elif names is not None and column not in names:
            excluded = "not a column of the table"
        elif with_stats is not None and column not in with_stats:
            excluded = "no statistics (not among the table's indexed columns)"
        ranked.append(ColumnEvidence(column, score, tuple(sorted(evidence, key=str)), excluded))
    ranked.sort(key=lambda c: (-c.score, -len({e.node for e in c.uses}), c.column))
    return tuple(ranked)


def _files_after(snapshot: Snapshot, target_bytes: int) -> int:
    per_partition: dict[tuple[tuple[str, str | None], ...], int] = defaultdict(int)
    for f in snapshot.files:
        per_partition[tuple(sorted(f.partition_values.items()))] += f.size_bytes
    return sum(max(1, math.ceil(size / target_bytes)) for size in per_partition.values())


def target_bytes_of(snapshot: Snapshot, configured: int | None) -> int:
    """OPTIMIZE's target size: the model's, else ``delta.targetFileSize``, else 100 MiB."""
    if configured:
        return configured
    raw = snapshot.metadata.configuration.get("delta.targetFileSize")
    try:
        return int(raw) if raw else ENGINE_DEFAULT_TARGET_BYTES
    except ValueError:
        return ENGINE_DEFAULT_TARGET_BYTES


def measure(advice: ModelAdvice, snapshot: Snapshot, target_bytes: int) -> ModelAdvice:
    """The advice with files admitted per lookup now and expected after, per column."""
    now: dict[str, float] = {}
    try:
        for column in advice.columns:
            now[column] = round(files_admitted(snapshot, column).admitted, 2)
    except MaintenanceError as err:
        return _replace(advice, problem=f"not measured: {err}", files=len(snapshot.files))
    after_files = _files_after(snapshot, target_bytes)
    ideal = round(expected_after(after_files, len(advice.columns)), 2)
    return _replace(
        advice,
        files=len(snapshot.files),
        files_after=after_files,
        admitted_now=now,
        admitted_after={c: ideal for c in advice.columns},
    )


def _replace(advice: ModelAdvice, **changes: Any) -> ModelAdvice:
    return dataclasses.replace(advice, **changes)
