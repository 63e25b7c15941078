"""Spark sessions for the ops: the embedded Sail engine and classic Spark.

``SailEngine`` is the embedded engine, which ``LazySession`` starts on first use;
``classic_session`` is a classic local Spark. Delta's own SQL on an engine is ``delta_sql``.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from typing import Any

from python_ops.delta_sql import mark_no_delta_sql
from python_ops.errors import ConfigError, EngineError

log = logging.getLogger(__name__)
_SESSION_TIMEOUT_S = 30 * 86_400  # the embedded session: the process's lifetime, in practice


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
        # Sail ends a session idle for its timeout ("session ... is not running" on the next
        # request); this server's one session lives as long as the process that uses it
        os.environ.setdefault("SAIL_SPARK__SESSION_TIMEOUT_SECS", str(_SESSION_TIMEOUT_S))
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
            mark_no_delta_sql(self.spark)  # Sail has no Delta SQL: never probe it
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

    For callers with no Spark session of their own (dbt on thrift, http or odbc), and for the
    embedded engine of dbt's own connection: ops and commands that never touch Spark start
    nothing (a run-operation with nothing due answers from the Delta logs and the catalog
    journal alone). ``conf.get`` is answered from ``spark_conf`` without starting the engine,
    so storage settings (``spark.hadoop.fs.s3a.*``) are the same whether or not it has started.
    Thread-safe; ``stop()`` stops the engine if it was started.

    Args:
        spark_conf: Session configuration for the engine (e.g. the profile's storage settings).
        port: The server's TCP port (0: a free one).
        on_start: Called with the new session once the engine has started, before anyone uses
            it (the embedded engine creates its journal's schemas); if it raises, the engine is
            stopped and the error raised.
    """

    def __init__(
        self,
        spark_conf: dict[str, str] | None = None,
        *,
        port: int = 0,
        on_start: Callable[[Any], None] | None = None,
    ) -> None:
        self._conf = dict(spark_conf or {})
        self._port = port
        self._on_start = on_start
        self._engine: SailEngine | None = None
        self._lock = threading.Lock()
        self.starts = 0  # how many times the engine was started (0 or 1)
        mark_no_delta_sql(self)  # it only ever starts Sail, which has no Delta SQL

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
            ConfigError: When its port cannot be bound.
            EngineError: When the engine cannot be started.
        """
        return self.engine().spark

    def engine(self) -> SailEngine:
        """The started engine (its ``url`` and ``spark``), starting it on first call.

        Raises:
            ConfigError: When its port cannot be bound.
            EngineError: When the engine cannot be started.
        """
        with self._lock:
            if self._engine is None:
                engine = SailEngine(port=self._port, spark_conf=self._conf)
                if self._on_start is not None:
                    try:
                        self._on_start(engine.spark)
                    except BaseException:
                        engine.stop()
                        raise
                self._engine = engine
                self.starts += 1
            return self._engine

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
