"""The maintenance bridge: the small objects the adapter's maintenance methods call.

dbt collects ``@available`` methods from the adapter class only, so the maintenance macros'
methods are declared on ``SparkDeltaAdapter`` (impl.py), each a one-line call of one of these,
built once per adapter:

- ``DbtConnection`` (dbt_connection.py): the engine behind dbt's connection, the ops' Spark
  session, where Delta's SQL runs, the catalog macros;
- ``TableLocator`` (locator.py): where a model's table is;
- ``TableOps`` (table_ops.py): one op on one relation (``vacuum``, ``optimize``...);
- ``HistoryCatalog`` (history_catalog.py): the history's store and its catalog registration;
- ``RunOperations`` (run_operations.py): the post-hook and the run-operations;
- ``Invocations``: what the current dbt invocation remembers (warnings given, the history's
  upkeep, schema locations), one ``python_ops.invocation.Invocation`` per invocation id.

"""

from __future__ import annotations

from dbt.adapters.spark.impl import SparkAdapter

from dbt.adapters.sparkdelta.bridge.dbt_connection import DbtConnection
from dbt.adapters.sparkdelta.bridge.history_catalog import HistoryCatalog
from dbt.adapters.sparkdelta.bridge.locator import TableLocator
from dbt.adapters.sparkdelta.operations.run_operations import RunOperations
from dbt.adapters.sparkdelta.operations.table_ops import TableOps
from python_ops.maintenance import Invocations


class MaintenanceParts:
    """The connection, locator, one-table ops, history catalog and run-operations of an adapter.

    Args:
        adapter: The dbt adapter.

    Attributes:
        connection: The connection as the maintenance objects use it.
        locator: Where models' tables are.
        history: The maintenance history's store and registration.
        table_ops: One op on one relation.
        run_operations: The post-hook and the run-operations.
        invocations: The current dbt invocation's memory.
    """

    def __init__(self, adapter: SparkAdapter) -> None:
        self.invocations = Invocations()
        self.connection = DbtConnection(adapter)
        self.locator = TableLocator(adapter, self.connection, self.invocations)
        self.history = HistoryCatalog(adapter, self.connection, self.locator)
        self.table_ops = TableOps(self.connection, self.locator, self.history, self.invocations)
        self.run_operations = RunOperations(
            adapter, self.connection, self.locator, self.history, self.invocations
        )
