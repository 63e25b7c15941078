"""What the maintenance bridge reaches through dbt's connection: SQL, sessions, catalog macros.

One small object the adapter holds: which engine is behind the connection (an in-process
session, or a cluster over thrift/http/odbc), the Spark session the ops use, where Delta's own
SQL runs, and the catalog macros (``catalog_lookups.sql``) run on this thread's connection.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from dbt.adapters.spark.impl import SparkAdapter

from dbt.adapters.sparkdelta.engines import Engine, get_ops_engine
from python_ops.maintenance import DeltaSql, EngineMode, Rows, VacuumEngine, session_sql


class DbtConnection:
    """The adapter's connection, as the maintenance bridge uses it.

    Args:
        adapter: The dbt adapter (for its connections, credentials and macros).
    """

    def __init__(self, adapter: SparkAdapter) -> None:
        self._adapter = adapter

    @property
    def credentials(self) -> Any:
        """The profile target's credentials."""
        return self._adapter.config.credentials

    def key(self) -> tuple[Any, ...]:
        """The engine behind dbt's connection, for answers kept per connection."""
        c = self.credentials
        return ("dbt", str(c.method), c.host, c.port, c.cluster, c.endpoint, c.mode, c.connect_url)

    def session_engine(self) -> Engine | None:
        """The in-process engine of ``method: session`` (None for thrift, http, odbc)."""
        handle = self._adapter.connections.get_thread_connection().handle
        engine = getattr(getattr(handle, "handle", None), "engine", None)
        return engine if isinstance(engine, Engine) else None

    def ops_spark(self) -> Any:
        """The Spark session the ops use: the connection's own, else the embedded ops engine.

        With thrift/http/odbc there is no session in this process: the ops get the process-wide
        embedded engine, which starts (once) only when an op really uses Spark.
        """
        engine = self.session_engine()
        if engine is not None:
            return engine.ops_spark
        return get_ops_engine(dict(self.credentials.server_side_parameters)).spark

    def vacuum_engine(self) -> VacuumEngine:
        """Where VACUUM's selection runs: on the Spark the profile attaches to, else ``auto``.

        ``auto`` selects in this process (Arrow); an attached Spark (Connect or classic) is a
        cluster the user chose for the work, so the selection's DataFrame program runs there.
        """
        engine = self.session_engine()
        attached = engine is not None and engine.mode == EngineMode.ATTACH
        return VacuumEngine.SPARK if attached else VacuumEngine.AUTO

    def one_connection(self) -> AbstractContextManager[Any]:
        """This thread's dbt connection, opened for the block when it has none (a worker).

        A thread's connection may have been closed since (dbt releases a worker's connection
        after each statement block, and a failed statement closes it): it is re-armed in place
        to reopen on its next statement, never used closed ("Transport not open") and never
        released inside a block that must keep one session for its settings.
        """
        connections = self._adapter.connections
        conn = connections.get_if_exists()
        if conn is not None:
            if conn.state != "open":
                connections.set_connection_name(conn.name)  # reopens on first use
            return nullcontext()
        return self._adapter.connection_named("sparkdelta maintenance")  # a worker thread

    def rows(self, statement: str) -> Rows:
        """Run one statement over dbt's connection (any thread); its rows as dicts."""
        with self.one_connection():
            _, table = self._adapter.execute(statement, fetch=True)
        return [dict(zip(table.column_names, row, strict=True)) for row in table]

    def macro(self, name: str, **kwargs: Any) -> Any:
        """Run one of the adapter's catalog macros on this thread's connection.

        Raises:
            DbtRuntimeError: When its statement fails (dbt's database error).
        """
        with self.one_connection():
            return self._adapter.execute_macro(name, kwargs=kwargs)

    def delta_sql(self, names: Mapping[str, str] | None = None) -> DeltaSql:
        """Where Delta's own SQL runs: the connection's session, else dbt's connection.

        Whether it has Delta is asked once per engine (``DeltaSql.has_delta``).

        Args:
            names: Table location to the name the catalog knows it by.

        Returns:
            The runner of Delta's statements.
        """
        engine = self.session_engine()
        if engine is not None:
            return session_sql(engine.ops_spark).named(names or {})
        creds = self.credentials
        return DeltaSql(
            self.rows,
            where=f"the {creds.method} connection to {creds.host}",
            key=self.key(),
            names=names,
            session=self.one_connection,  # session settings and OPTIMIZE on one connection
        )
