"""The advisor over a whole dbt project: the manifest's readers of each maintained table."""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from python_ops.advise.advisor import (
    MAX_COLUMNS,
    ColumnEvidence,
    Evidence,
    ModelAdvice,
    NodeLocator,
    Unresolved,
    measure,
    project_relations,
    rank_columns,
    score_layouts,
    target_bytes_of,
)
from python_ops.advise.compiled import CompiledSql
from python_ops.advise.predicates import QueryReader
from python_ops.advise.scoring import WeightedScan, reader_weight
from python_ops.advise.sources import is_maintained, readers_of
from python_ops.delta.state.snapshot import Snapshot, read_snapshot
from python_ops.errors import MaintenanceError

TargetSize = Callable[[Mapping[str, Any]], int | None]  # a model node -> its configured target


def _snapshots(
    maintained: Mapping[str, Mapping[str, Any]], locate: NodeLocator, with_stats: Collection[str]
) -> tuple[dict[str, Snapshot], dict[str, str]]:
    snapshots: dict[str, Snapshot] = {}
    problems: dict[str, str] = {}
    for uid, node in maintained.items():
        try:
            location = locate(node)
            if location is None:
                problems[uid] = "its table is not built yet"
                continue
            snapshots[uid] = read_snapshot(location, with_stats=uid in with_stats)
        except MaintenanceError as err:
            problems[uid] = f"its table cannot be read: {err}"
    return snapshots, problems


@dataclass
class _Readings:
    """What the readers say, per maintained model: uses, weighted scans, problems, readers."""

    uses: dict[str, dict[str, set[Evidence]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(set))
    )
    scans: dict[str, list[WeightedScan]] = field(default_factory=lambda: defaultdict(list))
    unresolved: dict[str, list[Unresolved]] = field(default_factory=lambda: defaultdict(list))
    read_by: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))


def _read_all(
    nodes: Mapping[str, Mapping[str, Any]],
    maintained: Mapping[str, Mapping[str, Any]],
    compiled: CompiledSql,
    reader: QueryReader,
) -> _Readings:
    out = _Readings()
    for reader_uid, models in sorted(readers_of(nodes, maintained).items()):
        for model in models:
            out.read_by[model].append(reader_uid)
        source = compiled.resolve(nodes[reader_uid])
        if source.sql is None:
            for model in models:
                out.unresolved[model].append(Unresolved(reader_uid, source.problem))
            continue
        reading = reader.read(source.sql)
        for use in reading.uses:
            if use.model != reader_uid:
                out.uses[use.model][use.column].add(Evidence(reader_uid, str(use.kind)))
        weight = reader_weight(nodes[reader_uid])
        for scan in reading.scans:
            if scan.model != reader_uid:
                out.scans[scan.model].append(WeightedScan(reader_uid, weight, scan))
        for problem in reading.problems:
            for model in models:
                out.unresolved[model].append(Unresolved(reader_uid, problem))
    return out


def _advise_one(
    uid: str,
    node: Mapping[str, Any],
    snapshot: Snapshot | None,
    readings: _Readings,
    target_bytes: int | None,
) -> ModelAdvice:
    ranked: tuple[ColumnEvidence, ...] = rank_columns(readings.uses.get(uid, {}), snapshot)
    advice = ModelAdvice(
        model=str(node.get("name")),
        unique_id=uid,
        location=snapshot.location if snapshot else None,
        columns=tuple(c.column for c in ranked if not c.excluded)[:MAX_COLUMNS],
        candidates=ranked,
        partition_columns=tuple(snapshot.metadata.partition_columns) if snapshot else (),
        readers=tuple(readings.read_by.get(uid, ())),
        unresolved=tuple(readings.unresolved.get(uid, ())),
    )
    scans = readings.scans.get(uid, [])
    if snapshot is None or not ranked:
        return advice
    return score_layouts(advice, snapshot, scans, target_bytes_of(snapshot, target_bytes))


def advise_project(
    manifest: Mapping[str, Any],
    project_dir: str,
    *,
    locate: NodeLocator,
    selected: Collection[str] | None = None,
    measure_skipping: bool = True,
    target_size: TargetSize | None = None,
    target_path: str = "target",
) -> tuple[ModelAdvice, ...]:
    """The advice for each selected maintained model of a compiled project.

    Args:
        manifest: dbt's ``manifest.json``, as a dict (after ``dbt compile``/``run``/``build``).
        project_dir: The project directory (for ``target/compiled`` and ``target/run``).
        locate: A model node to its table's location (None: not built).
        selected: The maintained models' unique ids to advise on (None: all of them).
        measure_skipping: Also measure files admitted per lookup on the recommended columns
            (the layout is chosen from a sample of each table either way).
        target_size: A model node to its configured OPTIMIZE target size (None: unset).
        target_path: dbt's target path, relative to ``project_dir`` (or absolute).

    Returns:
        One advice per selected maintained model, in manifest order.
    """
    nodes: Mapping[str, Mapping[str, Any]] = manifest.get("nodes") or {}
    maintained = {uid: n for uid, n in nodes.items() if is_maintained(n)}
    chosen = [uid for uid in maintained if selected is None or uid in selected]
    snapshots, table_problems = _snapshots(maintained, locate, with_stats=chosen)
    schemas = {
        uid: tuple(f["name"] for f in s.metadata.schema_fields()) for uid, s in snapshots.items()
    }
    compiled = CompiledSql.of(manifest, project_dir, target_path)

    def sql_of(node: Mapping[str, Any]) -> str | None:
        return compiled.resolve(node).sql

    reader = QueryReader(project_relations(nodes, manifest.get("sources") or {}, schemas, sql_of))
    readings = _read_all(nodes, maintained, compiled, reader)
    out = []
    for uid in chosen:
        node = maintained[uid]
        snapshot = snapshots.get(uid)
        configured = target_size(node) if target_size else None
        advice = _advise_one(uid, node, snapshot, readings, configured)
        if table_problems.get(uid):
            advice = dataclasses.replace(advice, problem=table_problems[uid])
        if snapshot is not None and measure_skipping and advice.columns:
            advice = measure(advice, snapshot, target_bytes_of(snapshot, configured))
        out.append(advice)
    return tuple(out)


def recommended_columns(
    manifest: Mapping[str, Any], project_dir: str, *, locate: NodeLocator
) -> dict[str, tuple[str, ...]]:
    """Per maintained model (by name), the columns the advisor recommends (nothing measured).

    The interface for other ops (statistics upkeep: which columns need statistics).

    Args:
        manifest: dbt's ``manifest.json`` as a dict.
        project_dir: The project directory.
        locate: A model node to its table's location (None: not built).

    Returns:
        Model name to its recommended columns (empty when its readers filter on nothing).
    """
    advice = advise_project(manifest, project_dir, locate=locate, measure_skipping=False)
    return {a.model: a.columns for a in advice}
