"""The maintenance advisor: per maintained model, the layout its readers would skip most under.

Every reader node (model, snapshot, test, analysis) of a maintained table is read
(``predicates``): its uses per column are the evidence, its reads (``Scan``) with their
constants are scored (``scoring``): each candidate layout (Z-order on up to three columns) is
simulated on a sample of the table (``layouts``) and the one whose files the readers, weighted by
how often they run, would skip most is recommended. Partition columns and columns without
statistics are listed as excluded, with the reason. When the sample cannot be read the columns
are ranked by predicate kind (``WEIGHTS``) instead. With ``measure``, the files admitted per
lookup on each recommended column is measured now and the ideal after clustering given beside.
"""

from __future__ import annotations

import dataclasses
import math
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from python_ops.advise.layouts import LayoutModel
from python_ops.advise.predicates import PredicateKind, Relation, RelationKey
from python_ops.advise.scoring import ReaderShare, WeightedScan, choose
from python_ops.advise.skipping import expected_after, files_admitted
from python_ops.advise.sources import is_maintained, node_config
from python_ops.delta.state.snapshot import Snapshot
from python_ops.errors import MaintenanceError
from python_ops.ops.optimize.planning.plan import ENGINE_DEFAULT_TARGET_BYTES, stats_columns

MAX_COLUMNS = 3
# Only when a table's sample cannot be read (column mapping): the kinds' rough worth. A join
# skips files only through a constant it carries (scoring), which a kind alone does not tell.
WEIGHTS = {
    PredicateKind.EQUALITY: 3,
    PredicateKind.IN: 3,
    PredicateKind.RANGE: 2,
    PredicateKind.JOIN: 0,
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
        score: The weighted share of the table its readers would skip under a Z-order on it
            alone (``scoring``); unscored, the sum of ``WEIGHTS`` of its (node, kind) uses.
        uses: The uses.
        excluded: Why it is not recommended ('' when it may be).
    """

    column: str
    score: float
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
        reads: Each read of the table: its share scanned now and under ``columns``.
        layout_scores: Each candidate layout's score (weighted share skipped).
        scored: Whether ``columns`` was chosen by scoring layouts on the table's sample.
        tie: Scores closer than this to the best are a tie (``scoring``): ``auto`` keeps its
            last choice while it is within a tie of the best, so a table never flips between
            layouts its sample cannot tell apart (its size changes when it is clustered).
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
    reads: tuple[ReaderShare, ...] = ()
    layout_scores: dict[str, float] = field(default_factory=dict)
    scored: bool = False
    tie: float = 0.0


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
        ranked.append(
            ColumnEvidence(column, float(score), tuple(sorted(evidence, key=str)), excluded)
        )
    ranked.sort(key=lambda c: (-c.score, -len({e.node for e in c.uses}), c.column))
    return tuple(ranked)


def score_layouts(
    advice: ModelAdvice, snapshot: Snapshot, scans: list[WeightedScan], target_bytes: int
) -> ModelAdvice:
    """The advice with its layout chosen by scoring candidates on the table's sample.

    Without a readable sample (column mapping, unreadable files) the kind-ranked columns stay,
    with the reason in ``problem``.
    """
    allowed = [c.column for c in advice.candidates if not c.excluded]
    columns = sorted({p.column for s in scans for p in s.scan.predicates} & set(allowed))
    try:
        model = LayoutModel(snapshot, columns, target_bytes)
    except MaintenanceError as err:
        kept = tuple(c for c in advice.columns if _score_of(advice, c) > 0)
        return _replace(advice, columns=kept, problem=f"layouts not scored: {err}")
    choice = choose(model, scans, allowed)
    candidates = sorted(
        (
            dataclasses.replace(c, score=choice.column_scores.get(c.column, 0.0))
            for c in advice.candidates
        ),
        key=lambda c: (bool(c.excluded), -c.score, -len({e.node for e in c.uses}), c.column),
    )
    return _replace(
        advice,
        columns=choice.layout,
        candidates=tuple(candidates),
        reads=choice.reads,
        layout_scores=choice.layout_scores,
        files_after=model.files_after,
        scored=True,
        tie=choice.tie,
    )


def steady_columns(advice: ModelAdvice, previous: tuple[str, ...] | None) -> tuple[str, ...]:
    """The columns ``auto`` clusters on: the last choice while it ties the best, else the best."""
    if not (advice.scored and previous and advice.columns):
        return advice.columns
    scores = {frozenset(k.split(",")): v for k, v in advice.layout_scores.items()}
    best, kept = scores.get(frozenset(advice.columns)), scores.get(frozenset(previous))
    if best is not None and kept is not None and kept >= best - advice.tie:
        return previous
    return advice.columns


def _score_of(advice: ModelAdvice, column: str) -> float:
    return next((c.score for c in advice.candidates if c.column == column), 0.0)


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
