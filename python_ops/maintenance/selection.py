"""dbt-style model selection for maintenance: names, ``tag:`` and folders, with exclusions."""

from __future__ import annotations

from collections.abc import Sequence

from python_ops.maintenance.targets import ModelTarget


def _matches(target: ModelTarget, selector: str, path: str) -> bool:
    if selector.startswith("tag:"):
        return selector[4:] in target.tags
    if selector.startswith("path:") or "/" in selector:
        prefix = selector.removeprefix("path:").rstrip("/")
        return path == prefix or path.startswith(prefix + "/")
    # a model name, or a folder name anywhere in the model's fully qualified name
    return selector == target.name or selector in target.fqn[:-1]


def select_targets(
    targets: Sequence[ModelTarget],
    *,
    select: Sequence[str] | str | None = None,
    exclude: Sequence[str] | str | None = None,
    paths: dict[str, str] | None = None,
) -> list[ModelTarget]:
    """Keep the targets matching any of ``select`` (all when empty) and none of ``exclude``.

    Args:
        targets: The candidate models.
        select: Model names, ``tag:<tag>``, folder names (``marts``) or paths
            (``models/marts``).
        exclude: The same kinds of selectors, removed from the selection.
        paths: Model name to its file path, for path selectors.

    Returns:
        The selected targets, in input order.
    """
    chosen = [select] if isinstance(select, str) else list(select or [])
    dropped = [exclude] if isinstance(exclude, str) else list(exclude or [])
    paths = paths or {}
    out = []
    for t in targets:
        path = paths.get(t.name, "")
        if chosen and not any(_matches(t, s, path) for s in chosen):
            continue
        if any(_matches(t, s, path) for s in dropped):
            continue
        out.append(t)
    return out
