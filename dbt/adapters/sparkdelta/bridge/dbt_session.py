"""A maintenance session as dbt runs it: its environment and its events, from dbt's side.

``python_ops.maintenance.MaintenanceSession`` owns the sequence (begin the command, maintain,
make the history ready, its upkeep, warnings); this module fills its two ports: what the ops
run with (dbt's connection, the history's place) and where its words go (dbt's events, the
catalog). dbt's errors met while building the environment are maintenance's setup failures.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from dbt_common.exceptions import DbtRuntimeError
from typing_extensions import override

from dbt.adapters.sparkdelta.bridge.dbt_connection import DbtConnection
from dbt.adapters.sparkdelta.bridge.history_catalog import HistoryCatalog
from dbt.adapters.sparkdelta.common import maintenance_events
from python_ops.errors import MaintenanceError
from python_ops.maintenance import (
    AdviceFor,
    DeltaSql,
    HistoryStore,
    Invocation,
    MaintenanceSession,
    ModelTarget,
    OpsEnvironment,
    SessionEvents,
    VacuumEngine,
)

T = TypeVar("T")


def _as_setup_failure(call: Callable[[], T]) -> T:
    """``call()``, a dbt error in it raised as maintenance's own (a failure to start)."""
    try:
        return call()
    except DbtRuntimeError as err:
        raise MaintenanceError(str(err).strip()) from err


class DbtEnvironment(OpsEnvironment):
    """What the ops run with, through dbt's connection (``OpsEnvironment``).

    Args:
        connection: The adapter's connection.
        history: The history catalog.
        history_node: The ``maintenance_history()`` mapping (schema, name, location), or None
            when nothing is recorded (a one-table op).
        names: Table location to the relation dbt's catalog knows it by (Delta's SQL names it
            so; rendered when Delta's SQL is asked for).
        advice: The advisor's columns for models with ``auto`` clustering (``advisor_bridge``).
    """

    def __init__(
        self,
        connection: DbtConnection,
        history: HistoryCatalog,
        history_node: Mapping[str, Any] | None,
        names: Mapping[str, object],
        advice: AdviceFor | None = None,
    ) -> None:
        self._connection = connection
        self._history = history
        self._history_node = history_node
        self._names = dict(names)
        self._advice = advice

    @override
    def spark(self) -> Any:
        return _as_setup_failure(self._connection.ops_spark)

    @override
    def delta_sql(self) -> DeltaSql | None:
        return self._connection.delta_sql({k: str(v) for k, v in self._names.items()})

    @override
    def vacuum_engine(self) -> VacuumEngine:
        return self._connection.vacuum_engine()

    @override
    def history(self) -> HistoryStore | None:
        node = self._history_node
        if node is None:
            return None
        return _as_setup_failure(lambda: self._history.store(node))

    @override
    def advice_for(self) -> AdviceFor | None:
        return self._advice


class DbtEvents(SessionEvents):
    """Where a session's words go in dbt (``SessionEvents``).

    Args:
        history: The history catalog (registered when the history is ready).
        history_node: The ``maintenance_history()`` mapping, or None.
        node: The model just built (the post-hook's), for dbt's warning events.
    """

    def __init__(
        self, history: HistoryCatalog, history_node: Mapping[str, Any] | None, node: Any = None
    ) -> None:
        self._history = history
        self._history_node = history_node
        self._node = node

    @override
    def warn(self, message: str, target: ModelTarget | None) -> None:
        maintenance_events.warn(message, node=self._node if target is not None else None)

    @override
    def history_ready(self) -> None:
        if self._history_node is not None:
            self._history.register(self._history_node)


def dbt_session(
    invocation: Invocation,
    connection: DbtConnection,
    history: HistoryCatalog,
    history_node: Mapping[str, Any] | None,
    *,
    names: Mapping[str, object],
    node: Any = None,
    advice: AdviceFor | None = None,
) -> MaintenanceSession:
    """A maintenance session whose environment and events are dbt's.

    Args:
        invocation: dbt's invocation (its id and what it remembers).
        connection: The adapter's connection.
        history: The history catalog.
        history_node: The ``maintenance_history()`` mapping, or None (nothing recorded).
        names: Table location to its catalog relation (or name).
        node: The model just built (the post-hook's), if any.
        advice: The advisor's columns for models with ``auto`` clustering.

    Returns:
        The session.
    """
    return MaintenanceSession(
        invocation,
        DbtEnvironment(connection, history, history_node, names, advice),
        DbtEvents(history, history_node, node),
    )
