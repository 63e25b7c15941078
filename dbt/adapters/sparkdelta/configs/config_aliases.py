"""Model configs from dbt-databricks: ``zorder`` and ``liquid_clustered_by`` are aliases here.

dbt passes every model config (``config(...)`` calls and ``+key:`` in ``dbt_project.yml``)
through the credentials' ``translate_aliases`` while it parses the project, so the alias is
resolved there, once: the manifest holds ``maintenance_zorder_by`` and every reader of it (the
post-hook, the run-operations, ``python -m python_ops maintain``) sees the same value. Configs
this adapter cannot honour are kept by dbt and silently ignored, so each is a warning naming the
model and what to use instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from dbt.adapters.events.logging import AdapterLogger
from dbt_common.exceptions import DbtRuntimeError

logger = AdapterLogger("SparkDelta")

# dbt-databricks' key -> ours (same meaning: the Z-order columns of OPTIMIZE; the liquid
# clustering columns of the table)
CONFIG_ALIASES = {
    "zorder": "maintenance_zorder_by",
    "liquid_clustered_by": "maintenance_cluster_by",
}

# configs of other Spark adapters that do nothing here -> what to use instead
UNSUPPORTED_CONFIGS = {
    "auto_liquid_cluster": (
        "automatic liquid clustering (Databricks chooses the columns) is not supported by the "
        "sparkdelta adapter. Name the columns with maintenance_cluster_by (or "
        "liquid_clustered_by)"
    ),
}


def _columns(value: Any) -> Any:
    """Z-order columns compared loosely: ``'a, b'`` and ``['a', 'b']`` are the same."""
    if isinstance(value, str):
        return tuple(c.strip() for c in value.split(",") if c.strip())
    if isinstance(value, (list, tuple)):
        return tuple(str(c).strip() for c in value)
    return value


def translate_config_aliases(config: Mapping[str, Any]) -> dict[str, Any]:
    """Replace dbt-databricks' config names by this adapter's (``zorder``, ``liquid_clustered_by``).

    Args:
        config: One config partial (a ``config()`` call, a ``dbt_project.yml`` level, or the
            profile target).

    Returns:
        The config with aliases renamed.

    Raises:
        DbtRuntimeError: When an alias and its key are both set, to different values.
    """
    result = dict(config)
    for alias, key in CONFIG_ALIASES.items():
        if alias not in result:
            continue
        value = result.pop(alias)
        if key in result and _columns(result[key]) != _columns(value):
            raise DbtRuntimeError(
                f"config '{alias}' ({value!r}) and '{key}' ({result[key]!r}) are both set, to "
                f"different values. '{alias}' is dbt-databricks' name for '{key}' here: keep "
                f"one of them."
            )
        result[key] = value
    return result


def unsupported_config_warnings(nodes: Iterable[tuple[str, Any]]) -> list[str]:
    """One message per model and config key this adapter ignores.

    Args:
        nodes: (model name, resolved config) pairs; a config is a dict or dbt's config object
            (both have ``get``).

    Returns:
        Messages naming the model, the key, its value and what to use instead.
    """
    messages = []
    for name, config in nodes:
        for key, advice in UNSUPPORTED_CONFIGS.items():
            value = config.get(key)
            if value is not None and value is not False:
                messages.append(f"model '{name}': config '{key}' ({value!r}) is ignored: {advice}.")
    return messages


def warn_unsupported_configs(nodes: Iterable[Any]) -> None:
    """A dbt warning per model and config key this adapter ignores (before a run's first node).

    Args:
        nodes: dbt nodes (the ones dbt caches relations for); models are checked.
    """
    models = [
        (str(node.name), node.config)
        for node in nodes
        if getattr(node, "resource_type", None) == "model" and getattr(node, "config", None)
    ]
    for message in unsupported_config_warnings(models):
        logger.warning(message)
