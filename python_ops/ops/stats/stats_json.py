"""A file's ``add.stats`` JSON from its computed statistics, and what existing stats lack.

The JSON mirrors Delta's stats collector (``StatisticsCollection.statsCollector``):
``numRecords``, ``minValues``/``maxValues`` for the columns with min/max (a struct nests; a
null bound leaves its key out), ``nullCount`` for every statistics column, and ``tightBounds``
when the table supports deletion vectors (true, or false for a file that has one: its bounds
then describe physical rows, some of them deleted, which the protocol calls wide bounds).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from python_ops.ops.stats.columns import StatsField
from python_ops.ops.stats.compute import FileStats
from python_ops.ops.stats.delta_json import dumps


def _bounds(
    fields: Sequence[StatsField], stats: FileStats, parent: tuple[str, ...], high: bool
) -> dict[str, Any] | None:
    out: dict[str, Any] = {}
    any_field = False
    for f in fields:
        path = (*parent, f.stored)
        if f.is_struct:
            nested = _bounds(f.children, stats, path, high)
            if nested is not None:
                out[f.stored] = nested
                any_field = True
        elif f.has_min_max:
            any_field = True
            leaf = stats.leaves[path]
            value = leaf.high if high else leaf.low
            if value is not None:
                out[f.stored] = value
    return out if any_field else None


def _nulls(
    fields: Sequence[StatsField], stats: FileStats, parent: tuple[str, ...]
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in fields:
        path = (*parent, f.stored)
        if f.is_struct:
            out[f.stored] = _nulls(f.children, stats, path)
        else:
            out[f.stored] = stats.leaves[path].null_count
    return out


def stats_json(fields: Sequence[StatsField], stats: FileStats, *, tight_bounds: bool | None) -> str:
    """The ``stats`` string of an ``add`` action.

    Args:
        fields: The statistics columns.
        stats: The file's computed statistics.
        tight_bounds: The ``tightBounds`` flag, or None for tables without deletion vectors.

    Returns:
        Compact JSON in Delta's field order.
    """
    document: dict[str, Any] = {"numRecords": stats.num_records}
    low = _bounds(fields, stats, (), high=False)
    if low is not None:
        document["minValues"] = low
        document["maxValues"] = _bounds(fields, stats, (), high=True)
    if fields:
        document["nullCount"] = _nulls(fields, stats, ())
    if tight_bounds is not None:
        document["tightBounds"] = tight_bounds
    return dumps(document)


def _lacks(
    fields: Sequence[StatsField], doc: Mapping[str, Any], parent: tuple[str, ...], records: Any
) -> list[str]:
    missing = []
    for f in fields:
        path = (*parent, f.stored)
        if f.is_struct:
            missing += _lacks(f.children, doc, path, records)
            continue
        nulls = _get(doc.get("nullCount"), path)
        bounds = [_get(doc.get("minValues"), path), _get(doc.get("maxValues"), path)]
        if f.delta_type == "string":
            bounds.pop()  # Delta keeps no maximum when no prefix bounds it (truncateMaxStringAgg)
        no_count = not isinstance(nulls, int) or isinstance(nulls, bool)
        # an all-null column has no bounds (Delta's to_json drops null values)
        if no_count or (f.has_min_max and nulls != records and None in bounds):
            missing.append(".".join(path))
    return missing


def _get(tree: Any, path: tuple[str, ...]) -> Any:
    for name in path:
        if not isinstance(tree, Mapping):
            return None
        tree = tree.get(name)
    return tree


def missing_columns(stats: str | None, fields: Sequence[StatsField]) -> list[str] | None:
    """The statistics columns a file's ``stats`` lacks (None: no usable stats at all).

    A column lacks statistics when it has no null count, or (for a type with min/max) no min or
    max although not every row is null.
    """
    if not stats:
        return None
    try:
        doc = json.loads(stats)
    except ValueError:
        return None
    if not isinstance(doc, Mapping):
        return None
    records = doc.get("numRecords")
    if not isinstance(records, int) or isinstance(records, bool):
        return None
    return _lacks(fields, doc, (), records)
