"""Spark sessions for the ops, and Delta's own SQL on an engine.

The embedded Sail engine (``SailEngine``; ``LazySession`` starts it on first use), classic Spark,
and ``DeltaSql``: asks an engine once whether it has Delta and runs Delta's statements on it.
"""

from __future__ import annotations

import logging
import os
import threading
import weakref
from collections.abc import Callable, Mapping
from typing import Any

from python_ops.errors import ConfigError, EngineError

log = logging.getLogger(__name__)


class SailEngine:
    """A Sail Spark Connect server on 127.0.0.1 in this process, with one client session.

    Args:
        port: TCP port; 0 picks a free one.
        spark_conf: Session configuration to set.

    Raises:
        ConfigError: When the port cannot be bound.
        EngineError: When the server or the session cannot be started.
    """

    def __init__(self, *, port: int = 0, spark_conf: dict[str, str] | None = None) -> None:
        os.environ.setdefault("RUST_LOG", "error")  # Sail logs every session at INFO otherwise
        from pysail.spark import SparkConnectServer

        self._server = SparkConnectServer(ip="127.0.0.1", port=port)
        try:
            self._server.start(background=True)
        except OSError as err:
            raise ConfigError(
                setting="engine_port",
                value=port,
                fix=f"127.0.0.1:{port} cannot be bound ({err}). Set 'engine_port: 0' to use a "
                "free port, or stop the process using it.",
            ) from err
        address = self._server.listening_address
        if address is None:
            raise EngineError("the embedded Sail server did not start listening")
        self.url = f"sc://{address[0]}:{address[1]}"
        try:
            from pyspark.sql import SparkSession

            builder = SparkSession.builder.remote(self.url)
            for key, value in (spark_conf or {}).items():
                builder = builder.config(key, value)
            self.spark: Any = builder.create()
        except Exception as err:  # pyspark raises many types while connecting
            self._server.stop()
            raise EngineError(f"cannot open a Spark session on the embedded engine: {err}") from err

    def stop(self) -> None:
        """Stop the client session first, then the server (the other order can hang at exit)."""
        try:
            self.spark.stop()
        finally:
            self._server.stop()


def classic_session(app_name: str = "python_ops") -> Any:
    """The process's classic (JVM) Spark session, started locally when there is none.

    Args:
        app_name: Application name for a new session.

    Returns:
        A ``pyspark.sql.SparkSession``.
    """
    from pyspark.sql import SparkSession

    return SparkSession.builder.master("local[*]").appName(app_name).getOrCreate()


class LazySession:
    """A Spark session that starts the embedded engine on first real use, once.

    For callers with no Spark session of their own (dbt on thrift, http or odbc): ops that never
    touch Spark start nothing. ``conf.get`` is answered from ``spark_conf`` without starting
    the engine, so storage settings (``spark.hadoop.fs.s3a.*``) are the same whether or not it
    has started. Thread-safe; ``stop()`` stops the engine if it was started.

    Args:
        spark_conf: Session configuration for the engine (e.g. the profile's storage settings).
    """

    def __init__(self, spark_conf: dict[str, str] | None = None) -> None:
        self._conf = dict(spark_conf or {})
        self._engine: SailEngine | None = None
        self._lock = threading.Lock()
        self.starts = 0  # how many times the engine was started (0 or 1)

    @property
    def started(self) -> bool:
        """True once the engine runs."""
        return self._engine is not None

    @property
    def conf(self) -> Any:
        """The session's conf: the real one once started, else the settings it will start with."""
        if self._engine is not None:
            return self._engine.spark.conf
        return _PendingConf(self._conf)

    def session(self) -> Any:
        """The engine's ``SparkSession``, starting the engine on first call.

        Raises:
            EngineError: When the engine cannot be started.
        """
        with self._lock:
            if self._engine is None:
                self._engine = SailEngine(spark_conf=self._conf)
                self.starts += 1
            return self._engine.spark

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.session(), name)

    def stop(self) -> None:
        """Stop the engine if it was started (client session first, then server)."""
        with self._lock:
            engine, self._engine = self._engine, None
        if engine is not None:
            engine.stop()


class _PendingConf:
    """``spark.conf`` of a session not started yet: the settings it will be started with."""

    def __init__(self, conf: dict[str, str]) -> None:
        self._conf = conf

    def get(self, key: str, default: Any = None) -> Any:
        return self._conf.get(key, default)


Rows = list[dict[str, Any]]
PROBE = "DESCRIBE HISTORY {table} LIMIT 1"


class DeltaSql:
    """Delta's own SQL on an engine: a Spark session, or a client connection to a cluster.

    ``has_delta`` asks the engine once whether it has Delta, with a statement only Delta knows
    (``DESCRIBE HISTORY <table> LIMIT 1`` on a Delta table), and keeps the answer for the
    engine (``key``): no JVM classes are looked for, so classic Spark, Spark Connect, a thrift
    server and Databricks answer the same way. Engines without Delta's SQL (Sail, Spark without
    delta-spark) refuse to parse it.

    Args:
        execute: Runs one statement and returns its rows as dicts (column name to value).
        where: The engine, in words (results and logs say where Delta's OPTIMIZE ran).
        key: Identifies the engine for an answer kept process-wide (a connection's settings);
            None keeps it in this object (one object per engine, e.g. ``session_sql``).
        names: Table location to the SQL name the engine knows it by; other locations are
            named by path (``delta.`<location>```).
    """

    _answers: dict[Any, bool] = {}  # noqa: RUF012 (one answer per engine, process-wide)
    _answers_lock = threading.Lock()

    def __init__(
        self,
        execute: Callable[[str], Rows],
        *,
        where: str,
        key: Any = None,
        names: Mapping[str, str] | None = None,
    ) -> None:
        self._execute = execute
        self.where = where
        self._key = key
        self._answer: list[bool | None] = [None]  # shared with ``named`` copies
        self.names = dict(names or {})

    def named(self, names: Mapping[str, str]) -> DeltaSql:
        """The same engine (and answer) with tables named as the caller's catalog knows them.

        Args:
            names: Table location to SQL name (e.g. ``shop.fct_orders``).

        Returns:
            A ``DeltaSql`` sharing this one's engine and cached answer.
        """
        copy = DeltaSql(self._execute, where=self.where, key=self._key, names=names)
        copy._answer = self._answer
        return copy

    @classmethod
    def forget_answers(cls) -> None:
        """Forget every engine's cached answer (the next ``has_delta`` asks again)."""
        with cls._answers_lock:
            cls._answers.clear()

    def table(self, location: str) -> str:
        """How a statement names the table at ``location``."""
        name = self.names.get(location)
        if name is not None:
            return name
        return "delta.`" + location.replace("`", "``") + "`"

    def execute(self, statement: str) -> Rows:
        """Run one statement; its rows as dicts."""
        log.debug("Delta SQL on %s: %s", self.where, statement)
        return self._execute(statement)

    def has_delta(self, location: str) -> bool:
        """Whether the engine has Delta's SQL (asked once per engine, on a Delta table).

        Args:
            location: A Delta table the engine can read (the probe reads its latest commit).

        Returns:
            True when the engine answered the probe.
        """
        with self._answers_lock:
            known = self._answer[0] if self._key is None else self._answers.get(self._key)
        if known is not None:
            return known
        try:
            self.execute(PROBE.format(table=self.table(location)))
            answer = True
        except Exception as err:  # every client raises its own types for a refused statement
            log.info(
                "%s has no Delta SQL (%s); OPTIMIZE runs through delta-rs in this process",
                self.where,
                str(err).strip().splitlines()[0][:200] if str(err).strip() else type(err).__name__,
            )
            answer = False
        with self._answers_lock:
            self._answer[0] = answer
            if self._key is not None:
                self._answers[self._key] = answer
        return answer


_session_sql: weakref.WeakKeyDictionary[Any, DeltaSql] = weakref.WeakKeyDictionary()
_session_sql_lock = threading.Lock()


def session_sql(spark: Any) -> DeltaSql:
    """Delta SQL on a Spark session (classic or Connect); one per session, answer cached.

    Args:
        spark: A ``SparkSession``.

    Returns:
        The session's ``DeltaSql``.
    """
    with _session_sql_lock:
        found = _session_sql.get(spark)
        if found is None:

            def execute(statement: str) -> Rows:
                return [row.asDict(recursive=True) for row in spark.sql(statement).collect()]

            found = DeltaSql(execute, where=_describe_session(spark))
            _session_sql[spark] = found
        return found


def _describe_session(spark: Any) -> str:
    # a classic session's ``client`` raises PySparkRuntimeError (not AttributeError)
    connect = type(spark).__module__.startswith("pyspark.sql.connect")
    client = getattr(spark, "client", None) if connect else None
    if client is not None:  # Spark Connect
        url = getattr(getattr(client, "_builder", None), "url", None)
        netloc = getattr(url, "netloc", None)
        return f"Spark Connect {netloc}" if netloc else "Spark Connect"
    return "the classic Spark session"
