"""Engines the adapter does not start: an attached Spark, and the lazy ops engine."""

from __future__ import annotations

from typing import Any

from dbt.adapters.sparkdelta.engines.base import Engine
from python_ops.errors import EngineError
from python_ops.maintenance import LazySession


class AttachedEngine(Engine):
    """An existing Spark: a Spark Connect endpoint, or the process's classic session.

    Args:
        connect_url: ``sc://host:port`` of a Spark Connect server; None for the classic session
            of this process (``SparkSession.builder.getOrCreate()``, e.g. under spark-submit).
        spark_conf: Session configuration to set.

    Raises:
        EngineError: When no session can be opened.
    """

    mode = "attach"

    def __init__(self, connect_url: str | None, *, spark_conf: dict[str, str] | None = None):
        from pyspark.sql import SparkSession

        try:
            builder = SparkSession.builder
            if connect_url:
                builder = builder.remote(connect_url)
            for key, value in (spark_conf or {}).items():
                builder = builder.config(key, value)
            # A Connect session of its own: getOrCreate() would hand back any session this
            # process already has (e.g. the embedded engine's), whatever server it talks to.
            self._spark = builder.create() if connect_url else builder.getOrCreate()
        except Exception as err:  # pyspark raises many types while connecting
            target = connect_url or "the classic Spark session of this process"
            raise EngineError(f"cannot attach to {target}: {err}") from err

    @property
    def spark(self) -> Any:  # noqa: D102
        return self._spark

    def stop(self) -> None:  # noqa: D102
        # The session belongs to whoever started Spark; only a Connect client is ours to close.
        if hasattr(self._spark, "client"):
            self._spark.stop()


class OpsEngine(Engine):
    """The embedded engine for the ops when dbt's connection has no Spark session in-process.

    With ``method: thrift``, ``http`` or ``odbc`` dbt's SQL goes to a cluster, but the ops
    (VACUUM's selection) need a ``SparkSession`` in this process: a Sail server, started on
    first use only (``LazySession``) with the profile's session settings, so storage settings
    (``spark.hadoop.fs.s3a.*``) are the ones the ops read either way. Stopped at exit with the
    other engines.

    Args:
        spark_conf: Session configuration (the profile's ``server_side_parameters``).
    """

    mode = "ops"

    def __init__(self, *, spark_conf: dict[str, str] | None = None) -> None:
        self._lazy = LazySession(spark_conf)

    @property
    def spark(self) -> Any:  # noqa: D102
        return self._lazy

    @property
    def started(self) -> bool:
        """True once the Sail server runs."""
        return self._lazy.started

    def stop(self) -> None:  # noqa: D102
        self._lazy.stop()
