"""The layout chosen by what its readers would skip: each read's share of the table, weighted.

For one maintained table, every read of it (``Scan``: the predicates one scope of a reader
holds every row to) is weighed by how often its reader runs (``reader_weight``). A predicate
counts by what it keeps of the sampled rows (its selectivity): one that keeps ``NEAR_FULL`` or
more of the table skips next to nothing under any layout and counts nothing, nor does one whose
constant cannot be compared with the column. A candidate layout's score is the weighted share
of the table its reads skip, ``sum(weight * (1 - share admitted))``; the layout recommended has
the highest score, and of layouts within a tie of it the one with fewest columns: a column
that adds no skipping is not added, since every Z-order column dilutes the others. A tie is a
difference of less than one file per weighted read (``1 / F`` of the readers' total weight, F
the files OPTIMIZE would write; at least ``TIE``): finer than that, a sample cut into F files
cannot tell layouts apart. Of tied layouts with as many columns, the one more (weighted)
reads filter on wins (a layout on ``ship_date`` over one on ``receipt_date``, a column a few
days later that skips about as well), then the higher score.
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from python_ops.advise.layouts import LayoutModel, share_now
from python_ops.advise.predicates import Scan

NEAR_FULL = 0.9  # a predicate keeping this share of the rows or more counts nothing
TIE = 0.01  # scores at least this close (a share of the readers' total weight) are a tie
MAX_CANDIDATES = 4  # columns whose combinations (up to MAX_LAYOUT of them) are scored
MAX_LAYOUT = 3
# How often a reader runs, by its ``meta: {maintenance_reader_frequency: ...}`` (dbt's place for
# a project's own keys: a ``maintenance_*`` config key is a maintenance setting, checked as one)
# or its tags, in runs of the project's usual job: a model built on every run counts 1, a weekly
# report 1/7.
FREQUENCIES = {"every_run": 1.0, "hourly": 1.0, "daily": 1.0, "weekly": 1 / 7, "monthly": 1 / 30}


@dataclass(frozen=True)
class WeightedScan:
    """One read of the table by one reader, and how often that reader runs."""

    reader: str
    weight: float
    scan: Scan


@dataclass(frozen=True)
class ReaderShare:
    """What one read of the table scans now and under the recommended layout.

    Attributes:
        reader: The reader node.
        weight: How often it runs (1: every run).
        predicates: The predicates counted, in words (column, kind, bounds, rows kept).
        ignored: The predicates not counted, and why.
        share_now: The share of the table's bytes it reads now (live files' statistics).
        share_after: The share of the files it would read under the recommended layout.
    """

    reader: str
    weight: float
    predicates: tuple[str, ...]
    ignored: tuple[str, ...]
    share_now: float
    share_after: float


@dataclass(frozen=True)
class Choice:
    """The layout chosen for one table and what it was chosen over."""

    layout: tuple[str, ...]
    score: float
    column_scores: dict[str, float]
    layout_scores: dict[str, float]
    reads: tuple[ReaderShare, ...]
    tie: float = 0.0


def reader_weight(node: Mapping[str, Any]) -> float:
    """How often a reader runs, relative to the project's usual job (1: on every run)."""
    config = node.get("config") or {}
    meta = {**(node.get("meta") or {}), **(config.get("meta") or {})}
    said = meta.get("maintenance_reader_frequency")
    if isinstance(said, (int, float)) and not isinstance(said, bool) and said >= 0:
        return float(said)
    names = [str(said)] if said else []
    names += [str(t) for t in (node.get("tags") or config.get("tags") or [])]
    for name in names:
        found = FREQUENCIES.get(name.strip().lower().replace(" ", "_").replace("-", "_"))
        if found is not None:
            return found
    return 1.0


def counted(model: LayoutModel, scan: Scan) -> tuple[Scan, list[str], list[str]]:
    """The scan with only the predicates that count, the counted and the ignored in words."""
    keep, said, ignored = [], [], []
    for p in scan.predicates:
        what = f"{p.column} {p.kind} {p.bounds.describe()}"
        if p.column in model.partition_columns:
            ignored.append(f"{what}: a partition column (pruned whatever the layout)")
            continue
        if p.column not in model.columns:
            ignored.append(f"{what}: not a column that may be clustered on (see its exclusion)")
            continue
        kept = model.selectivity(p)
        if kept is None:
            ignored.append(f"{what}: its constant does not compare with the column's values")
        elif kept >= NEAR_FULL:
            ignored.append(f"{what}: keeps {kept:.1%} of the rows (near-full: counts nothing)")
        else:
            keep.append(p)
            said.append(f"{what} keeps {kept:.1%}")
    return Scan(scan.model, tuple(keep)), said, ignored


def _layouts(singles: Mapping[str, float]) -> list[tuple[str, ...]]:
    best = sorted(singles, key=lambda c: (-singles[c], c))[:MAX_CANDIDATES]
    out: list[tuple[str, ...]] = []
    for size in range(1, MAX_LAYOUT + 1):
        out += list(itertools.combinations(best, size))
    return out


def _filtered_by(layout: Sequence[str], scans: Sequence[WeightedScan]) -> float:
    """The weight of the reads that filter on a column of ``layout`` themselves."""
    return sum(s.weight for s in scans if any(p.column in layout for p in s.scan.predicates))


def _score(model: LayoutModel, layout: Sequence[str], scans: Sequence[WeightedScan]) -> float:
    cuts = model.cuts(layout)
    return sum(s.weight * (1 - model.share(s.scan, cuts)) for s in scans)


def choose(model: LayoutModel, scans: Sequence[WeightedScan], allowed: Collection[str]) -> Choice:
    """The layout whose files the weighted reads would skip most (fewest columns on a tie).

    Args:
        model: The table's sample.
        scans: Every read of the table, weighted.
        allowed: The columns that may be clustered on (not partition or stat-less columns).

    Returns:
        The choice (an empty layout when no layout makes any read skip more than a tie).
    """
    kept = [WeightedScan(s.reader, s.weight, counted(model, s.scan)[0]) for s in scans]
    kept = [s for s in kept if s.scan.predicates and s.weight > 0]
    used = sorted({p.column for s in kept for p in s.scan.predicates} & set(allowed))
    singles = {c: _score(model, (c,), kept) for c in used}
    scores = {layout: _score(model, layout, kept) for layout in _layouts(singles)}
    tie = max(TIE, 1 / max(1, model.files_after)) * sum(s.weight for s in kept)
    best = max(scores.values(), default=0.0)
    layout: tuple[str, ...] = ()
    if best > tie:
        near = [lay for lay, v in scores.items() if v >= best - tie]
        layout = min(near, key=lambda lay: (len(lay), -_filtered_by(lay, kept), -scores[lay]))
    reads = _reads(model, scans, layout)
    return Choice(
        layout=layout,
        score=round(scores.get(layout, 0.0), 4),
        column_scores={c: round(v, 4) for c, v in singles.items()},
        layout_scores={",".join(k): round(v, 4) for k, v in scores.items()},
        reads=reads,
        tie=round(tie, 4),
    )


def _reads(
    model: LayoutModel, scans: Sequence[WeightedScan], layout: tuple[str, ...]
) -> tuple[ReaderShare, ...]:
    cuts = model.cuts(layout) if layout else None
    out = []
    for s in scans:
        scan, said, ignored = counted(model, s.scan)
        after = model.share(scan, cuts) if cuts is not None else None
        now = share_now(model.snapshot, scan, model.columns)
        out.append(
            ReaderShare(
                s.reader,
                round(s.weight, 4),
                tuple(said),
                tuple(ignored),
                round(now, 4),
                round(now if after is None else after, 4),
            )
        )
    return tuple(out)
