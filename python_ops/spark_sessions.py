"""Spark sessions for running the ops outside dbt: the embedded Sail engine or classic Spark."""

from __future__ import annotations

import os
from typing import Any

from python_ops.errors import ConfigError, EngineError


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
