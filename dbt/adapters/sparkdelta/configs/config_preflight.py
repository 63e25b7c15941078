"""Before a run's first node: every maintenance config problem of the project, at once.

Each model's materialization checks its own config and refuses to build on a bad value (its
table unchanged); but a model downstream of a refused one is skipped, so its own error would
only appear after the first is fixed. Before any node runs, this lists them all in one warning,
and says so when a view or an ephemeral model sets maintenance keys of its own (it has no Delta
table to maintain: the keys do nothing).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from python_ops.errors import MaintenanceError
from python_ops.maintenance import MAINTAINED, PREFIX, RESOURCE_TYPES, node_config, parse_config


def _own_maintenance_keys(node: Any) -> list[str]:
    """The maintenance keys a model sets itself (its ``config()`` call), not inherited ones."""
    own = getattr(node, "config_call_dict", None) or {}
    return sorted(k for k in own if str(k).startswith(PREFIX))


def preflight_messages(nodes: Iterable[Any]) -> list[str]:
    """One message for all config errors, one per view or ephemeral model with maintenance keys.

    Args:
        nodes: dbt nodes (the ones dbt caches relations for); enabled models are checked.

    Returns:
        The warnings to show, in model order (empty when the project's config is sound).
    """
    errors: list[str] = []
    ignored: list[str] = []
    for node in nodes:
        if getattr(node, "resource_type", None) not in RESOURCE_TYPES:
            continue
        config = node_config(node)
        if config.get("enabled") is False:
            continue
        name = str(node.name)
        materialized = config.get("materialized")
        if materialized in MAINTAINED:
            try:
                parse_config(name, config)
            except MaintenanceError as err:  # one item per bad setting (ConfigErrors lists many)
                errors.extend(str(e) for e in getattr(err, "errors", (err,)))
        elif keys := _own_maintenance_keys(node):
            ignored.append(
                f"model '{name}' is materialized as {materialized}, which has no Delta table to "
                f"maintain: its {', '.join(keys)} do nothing. Remove them, or materialize it as "
                "a table or incremental model."
            )
    messages = list(ignored)
    if errors:
        lines = "\n".join(f"  - {e}" for e in errors)
        messages.insert(
            0,
            f"maintenance config: {len(errors)} bad setting(s); each model is refused "
            f"when it builds (its table unchanged). Fix them all now:\n{lines}",
        )
    return messages
