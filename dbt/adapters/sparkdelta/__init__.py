"""dbt adapter plugin ``sparkdelta``: dbt-spark plus an embedded Sail engine and maintenance ops."""

from dbt.adapters.base.plugin import AdapterPlugin

from dbt.adapters.sparkdelta.connections import (
    SparkDeltaConnectionManager,
    SparkDeltaCredentials,
)
from dbt.adapters.sparkdelta.impl import SparkDeltaAdapter
from dbt.include import sparkdelta

Plugin = AdapterPlugin(
    adapter=SparkDeltaAdapter,  # type: ignore[arg-type]
    credentials=SparkDeltaCredentials,
    include_path=sparkdelta.PACKAGE_PATH,
    dependencies=["spark"],
)

__all__ = ["Plugin", "SparkDeltaAdapter", "SparkDeltaConnectionManager", "SparkDeltaCredentials"]
