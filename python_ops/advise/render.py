"""The advice in words (the CLI and ``dbt run-operation maintenance_advise``) and as data."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from python_ops.advise.advisor import ModelAdvice


def advice_dict(advice: ModelAdvice) -> dict[str, Any]:
    """One model's advice as plain data (``--json``)."""
    return dataclasses.asdict(advice)


def _figure(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def _share(value: float) -> str:
    return f"{value:.0%}" if value >= 0.01 or value == 0 else f"{value:.1%}"


def _reads_text(advice: ModelAdvice) -> list[str]:
    """Each read: the share of the table it scans now and under the recommended layout."""
    if not advice.reads:
        return []
    layout = ", ".join(advice.columns) if advice.columns else "no clustering"
    lines = [f"  share of the table each read scans, now -> under {layout}:"]
    for r in advice.reads:
        how = "every run" if r.weight == 1 else f"weight {r.weight:g} of a run"
        said = "; ".join(r.predicates + tuple(f"not counted: {i}" for i in r.ignored))
        lines.append(
            f"    {r.reader} ({how}): {_share(r.share_now)} -> {_share(r.share_after)}"
            + (f" ({said})" if said else "")
        )
    return lines


def advice_text(advices: Sequence[ModelAdvice]) -> str:
    """Per model: the recommended columns, each read's share scanned, the evidence, lookups."""
    lines: list[str] = []
    for a in advices:
        head = f"{a.model}: "
        head += f"recommend {', '.join(a.columns)}" if a.columns else "no column to recommend"
        if a.partition_columns:
            head += f" (partitioned by {', '.join(a.partition_columns)})"
        lines.append(head)
        if a.files is not None:
            lines.append(f"  live files {a.files}; after OPTIMIZE about {a.files_after}")
        for name in a.columns:
            lines.append(
                f"  files admitted per lookup on {name}: {_figure(a.admitted_now.get(name))} now, "
                f"about {_figure(a.admitted_after.get(name))} after"
            )
        lines.extend(_reads_text(a))
        for c in a.candidates:
            uses = "; ".join(f"{e.node} ({e.kind})" for e in c.uses)
            why = f" - excluded: {c.excluded}" if c.excluded else ""
            lines.append(f"  {c.column} score {c.score}: {uses}{why}")
        if not a.readers:
            lines.append("  no node reads it")
        if a.problem:
            lines.append(f"  {a.problem}")
        lines.extend(f"  unresolved: {u.node}: {u.reason}" for u in a.unresolved)
    return "\n".join(lines)
