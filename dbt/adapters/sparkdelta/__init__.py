"""dbt adapter plugin ``sparkdelta``: dbt-spark plus an embedded Sail engine and maintenance ops.

The plugin and the adapter's classes are made on first use (``Plugin`` is what dbt's plugin
loader asks this package for): a submodule run on its own, such as the CLI's selection resolver
(``python -m dbt.adapters.sparkdelta.bridge.selection_cli``), then imports only what it uses,
not the adapter, dbt-spark and pyspark (about 1.5 of its 4.5 CPU-seconds).
"""

from __future__ import annotations

from typing import Any

__all__ = ["Plugin", "SparkDeltaAdapter", "SparkDeltaConnectionManager", "SparkDeltaCredentials"]


def _plugin() -> Any:
    from dbt.adapters.base.plugin import AdapterPlugin

    from dbt.adapters.sparkdelta.connections import SparkDeltaCredentials
    from dbt.adapters.sparkdelta.impl import SparkDeltaAdapter
    from dbt.include import sparkdelta

    return AdapterPlugin(
        adapter=SparkDeltaAdapter,  # type: ignore[arg-type]
        credentials=SparkDeltaCredentials,
        include_path=sparkdelta.PACKAGE_PATH,
        dependencies=["spark"],
    )


def __getattr__(name: str) -> Any:
    """``Plugin`` and the adapter's classes, imported (and kept in this module) on first use."""
    if name == "Plugin":
        value = _plugin()
    elif name == "SparkDeltaAdapter":
        from dbt.adapters.sparkdelta.impl import SparkDeltaAdapter as value
    elif name in ("SparkDeltaConnectionManager", "SparkDeltaCredentials"):
        from dbt.adapters.sparkdelta import connections

        value = getattr(connections, name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value
