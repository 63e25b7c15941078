"""Everything the adapter shares across dbt invocations and threads, in one place.

A dbt process (``dbtRunner`` in a test, an orchestrator's worker) runs several invocations with
one adapter class; what one invocation remembers is ``MaintenanceParts.invocations``
(``python_ops.invocation``). What lives here outlives invocations, each for the reason given:

- ``ENGINES``: the engine per profile settings (a Sail server, a local JVM Spark): starting one
  costs seconds, and every thread of every invocation must use the same session. Stopped at
  exit (``engines.shutdown_engines``).
- ``HISTORY_STORES``: one maintenance-history store per location (it caches the last runs and
  holds the post-hook's deferred rows until the command ends).
- ``NO_DELTA_TABLES``: connections whose engine refused to register a Delta table (Spark
  without delta-spark): a property of the engine, asked once.
- ``LOG_BRIDGE``: how many maintenance calls have the ``python_ops`` loggers routed to dbt's
  events now, and the loggers' settings to restore when the last ends.

Each is a ``Shared`` value with its own lock (``python_ops.runtime``'s rule: no other module
keeps state at module level; ``tests/unit/test_runtime.py`` enforces it for the adapter too).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from python_ops.maintenance import HistoryStore, Shared


@dataclass
class LogBridge:
    """The ``python_ops`` loggers while maintenance sends them to dbt's events.

    Attributes:
        users: Maintenance calls inside ``python_ops_logs_to_dbt`` now (a command's hold
            counts as one).
        saved: The logger's (level, propagate) before the first.
        held: The current dbt command holds the bridge (``hold_python_ops_logs``).
    """

    users: int = 0
    saved: tuple[int, bool] = (logging.NOTSET, True)
    held: bool = False


ENGINES: Shared[dict[tuple[Any, ...], Any]] = Shared("engines per profile", {})
HISTORY_STORES: Shared[dict[str, HistoryStore]] = Shared("history stores per location", {})
NO_DELTA_TABLES: Shared[set[tuple[Any, ...]]] = Shared("engines without Delta tables", set())
LOG_BRIDGE: Shared[LogBridge] = Shared("python_ops logs routed to dbt", LogBridge())
