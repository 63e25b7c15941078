"""Which models a maintenance run-operation (or ``python -m python_ops maintain``) works on.

dbt's node selection, resolved by dbt's own machinery (``dbt.graph``): the same graph
(``Linker.link_graph``) and the same ``ResourceTypeSelector`` over models that ``dbt ls
--resource-type model`` uses, with ``parse_difference`` for ``select``/``exclude`` and the
project's ``selectors.yml`` for ``selector``. Nothing here parses the grammar.

Inside dbt the manifest is the one dbt already built for the invocation (the adapter's macro
resolver); outside dbt (the CLI) it is ``target/manifest.json``, read by dbt's libraries in a
child process (``python -m dbt.adapters.sparkdelta.bridge.selection_cli``, JSON on stdout), so that
``python_ops`` never imports dbt and dbt's process-wide state (flags, events) stays out of it.

A criterion that matches no node, or no model, is an error naming it (and the nearest model
name): a scheduled job with a typo in its selection fails instead of maintaining nothing.
Besides the selected unique ids, a resolution returns warnings: a criterion whose models are
all views or ephemeral (nothing it selects has a Delta table), and a selection that ends up
with no table at all.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dbt_common.exceptions import DbtRuntimeError

from python_ops.maintenance import MAINTAINED, RESOURCE_TYPES


@dataclass(frozen=True)
class Selection:
    """The outcome of a selection.

    Attributes:
        unique_ids: The selected model unique ids; None when no selection was given (all).
        warnings: What the selection does not reach, one sentence each.
        selector: The ``selectors.yml`` selector used (given, or the project's default).
    """

    unique_ids: frozenset[str] | None
    warnings: tuple[str, ...] = ()
    selector: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """As JSON-ready data."""
        ids = None if self.unique_ids is None else sorted(self.unique_ids)
        return {"unique_ids": ids, "warnings": list(self.warnings), "selector": self.selector}


def _as_list(value: Any, name: str) -> list[str] | None:
    """A select/exclude argument as a list of dbt selection strings (None when not given)."""
    if value is None or value == "" or value == []:
        return None
    if isinstance(value, str):
        return [value]
    if isinstance(value, Iterable) and not isinstance(value, Mapping):
        items = list(value)
        if all(isinstance(v, str) for v in items):
            return items
    raise DbtRuntimeError(
        f"{name} must be a dbt selection string or a list of them (e.g. ['+fct_orders', "
        f"'tag:daily']), got {value!r}"
    )


def _criteria(spec: Any, *, leaves: bool) -> list[Any]:
    """The parts of a spec dbt names in its "does not match" warning, on the selecting side.

    On the command line (``select``) those are the space-separated terms (each an intersection
    of comma-separated criteria, ``expect_exists``); dbt's default includes (nothing selected,
    only excluded) expect nothing. In a ``selectors.yml`` definition (``leaves``) every criterion
    counts. What lies under an exclusion only removes, so it is never a criterion here.
    """
    from dbt.graph.selector_spec import SelectionCriteria, SelectionDifference

    if getattr(spec, "expect_exists", False):
        return [spec]
    if isinstance(spec, SelectionCriteria):
        return [spec] if leaves else []
    components = list(spec.components)
    if isinstance(spec, SelectionDifference):
        components = components[:1]
    return [part for c in components for part in _criteria(c, leaves=leaves)]


def _nearest(criterion: Any, names: Sequence[str]) -> str:
    """`` (did you mean 'x'?)`` for a criterion naming a model almost like one, else ''."""
    while hasattr(criterion, "components"):  # a term of several criteria: name its first
        parts = list(criterion.components)
        if not parts:
            return ""
        criterion = parts[0]
    value = getattr(criterion, "value", None)
    if not isinstance(value, str) or not value:
        return ""
    near = difflib.get_close_matches(value.split(".")[-1], names, n=1, cutoff=0.6)
    return f" (did you mean '{near[0]}'?)" if near else ""


def _maintained(node: Any) -> bool:
    return node.config.materialized in MAINTAINED and node.config.enabled


def _kinds(nodes: Sequence[Any]) -> str:
    shown = ", ".join(f"{n.name} ({n.config.materialized})" for n in nodes[:5])
    return shown + (f" and {len(nodes) - 5} more" if len(nodes) > 5 else "")


def select_models(
    manifest: Any,
    *,
    select: Any = None,
    exclude: Any = None,
    selector: str | None = None,
    selectors: Mapping[str, Mapping[str, Any]] | None = None,
    previous_state: Any = None,
) -> Selection:
    """Resolve a dbt selection to model unique ids with dbt's selector, and say what it misses.

    Args:
        manifest: dbt's ``Manifest``.
        select: dbt selection strings (``--select``), a string or a list.
        exclude: dbt selection strings removed from the selection (``--exclude``).
        selector: The name of a selector in ``selectors``; it cannot be combined with
            ``select``/``exclude``.
        selectors: The project's selectors (name to ``{definition, default}``), as dbt's
            ``RuntimeConfig.selectors``; the one with ``default: true`` applies when nothing
            else is given, as in dbt.
        previous_state: dbt's ``PreviousState`` for ``state:`` methods (None: no state).

    Returns:
        The selection; ``unique_ids`` is None when there was nothing to select by.

    Raises:
        DbtRuntimeError: For a bad argument, an unknown selector or a criterion dbt rejects.
    """
    chosen = _as_list(select, "select")
    dropped = _as_list(exclude, "exclude")
    selector, spec = _spec(chosen, dropped, selector, selectors or {})
    if spec is None:
        return Selection(unique_ids=None)
    node_selector = _node_selector(manifest, previous_state)
    selected = frozenset(node_selector.get_selected(spec, warn_on_no_nodes=False))
    warnings = _criterion_warnings(manifest, node_selector, spec, leaves=bool(selector))
    if not warnings:
        models = [manifest.nodes[u] for u in sorted(selected)]
        if not models:
            warnings.append("the selection matches no model")
        elif not any(_maintained(m) for m in models):
            warnings.append(
                f"nothing selected is a table or incremental model: {_kinds(models)}; "
                "views and ephemeral models have no Delta table to maintain"
            )
    return Selection(unique_ids=selected, warnings=tuple(warnings), selector=selector)


def _spec(
    chosen: list[str] | None,
    dropped: list[str] | None,
    selector: str | None,
    selectors: Mapping[str, Mapping[str, Any]],
) -> tuple[str | None, Any]:
    """The selector used (given or the project's default) and dbt's spec; None: select all."""
    from dbt.graph.cli import parse_difference

    if selector and (chosen or dropped):
        raise DbtRuntimeError(
            f"selector '{selector}' cannot be combined with select/exclude: put the whole "
            "selection in selectors.yml or pass select/exclude alone"
        )
    if not selector and not (chosen or dropped):
        selector = next((n for n, s in selectors.items() if s.get("default") is True), None)
        if selector is None:
            return None, None
    if not selector:
        return None, parse_difference(chosen, dropped)
    if selector not in selectors:
        raise DbtRuntimeError(
            f"no selector named '{selector}' in selectors.yml (selectors: "
            f"{', '.join(sorted(selectors)) or 'none'})"
        )
    return selector, selectors[selector]["definition"]


def _node_selector(manifest: Any, previous_state: Any) -> Any:
    """The dbt selector over the manifest's graph, for models and snapshots."""
    from dbt.artifacts.resources.types import NodeType
    from dbt.compilation import Linker
    from dbt.graph.graph import Graph
    from dbt.graph.selector import ResourceTypeSelector

    linker = Linker()
    linker.link_graph(manifest)
    return ResourceTypeSelector(
        graph=Graph(linker.graph),
        manifest=manifest,
        previous_state=previous_state,
        resource_types=[NodeType(t) for t in RESOURCE_TYPES],  # models and snapshots
        include_empty_nodes=True,
    )


def _criterion_warnings(manifest: Any, node_selector: Any, spec: Any, *, leaves: bool) -> list[str]:
    """What each criterion misses: raise for one matching nothing, warn for one with no table."""
    warnings: list[str] = []
    misses: list[str] = []
    model_names = sorted(
        {n.name for n in manifest.nodes.values() if n.resource_type in RESOURCE_TYPES}
    )
    for criterion in _criteria(spec, leaves=leaves):
        direct, _ = node_selector.select_nodes(criterion, warn_on_no_nodes=False)
        models = [
            manifest.nodes[u]
            for u in sorted(direct)
            if u in manifest.nodes and manifest.nodes[u].resource_type in RESOURCE_TYPES
        ]
        if not direct:
            misses.append(
                f"the selection criterion '{criterion.raw}' does not match any enabled nodes"
                + _nearest(criterion, model_names)
            )
        elif not models:
            misses.append(
                f"the selection criterion '{criterion.raw}' matches no model"
                + _nearest(criterion, model_names)
            )
        elif not any(_maintained(m) for m in models):
            warnings.append(
                f"the selection criterion '{criterion.raw}' selects no table or incremental model: "
                f"{_kinds(models)}; views and ephemeral models have no Delta table to maintain"
            )
    if misses:
        # a typo in a scheduled job's selection must fail the job, not maintain nothing quietly
        raise DbtRuntimeError(
            "; ".join(misses) + ". Nothing was maintained: fix the selection (dbt ls --select "
            "shows what a criterion selects)."
        )
    return warnings
