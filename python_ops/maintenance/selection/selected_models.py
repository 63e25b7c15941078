"""Which models a dbt selection keeps: dbt resolved it, this applies it to the targets.

This package never imports dbt, so it does not parse dbt's selection grammar either (a subset
that silently selects nothing for the rest is worse than none). dbt's own selector resolves it
(through the port in ``selection_resolver``); what comes back is a set of unique ids and the
warnings (criteria that reach no table), and ``keep_selected`` applies the ids to the targets.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from python_ops.maintenance.selection.targets import ModelTarget


@dataclass(frozen=True)
class ResolvedSelection:
    """A selection dbt resolved.

    Attributes:
        unique_ids: The selected model unique ids; None means every model (nothing given).
        warnings: What the selection does not reach, one sentence each.
        selector: The ``selectors.yml`` selector used, if any.
    """

    unique_ids: frozenset[str] | None
    warnings: tuple[str, ...] = ()
    selector: str | None = None


def keep_selected(
    targets: Sequence[ModelTarget], unique_ids: Collection[str] | None
) -> list[ModelTarget]:
    """The targets whose unique id is selected (all of them when ``unique_ids`` is None)."""
    if unique_ids is None:
        return list(targets)
    chosen = set(unique_ids)
    return [t for t in targets if t.unique_id in chosen]


def needs_resolution(
    select: Sequence[str] | None,
    exclude: Sequence[str] | None,
    selector: str | None,
    manifest_selectors: dict[str, dict[str, object]] | None = None,
) -> bool:
    """Whether there is a selection to resolve (given, or a ``default: true`` selector)."""
    defaults = any(s.get("default") is True for s in (manifest_selectors or {}).values())
    return bool(select or exclude or selector or defaults)
