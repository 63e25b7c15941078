"""The Spark engines dbt talks to: embedded Sail (default), local Spark with Delta, or attach.

One engine per profile target lives for the whole process and is shared by every dbt thread and
every in-process ``dbtRunner`` invocation (Sail's catalog belongs to one Spark session, so all
threads must use the same session). ``shutdown_engines()`` stops them; it is registered with
``atexit`` and stops the client session *before* the server, because a process hung at exit when
a client session was still open while the server stopped. The embedded engine's catalog outlives
the process in ``catalog_journal``.

May import: ``common`` (``tests/unit/test_layers.py`` holds the order).
"""

from __future__ import annotations

import atexit
import logging
import os

from dbt.adapters.sparkdelta.common import runtime
from dbt.adapters.sparkdelta.engines.attached import AttachedEngine, OpsEngine
from dbt.adapters.sparkdelta.engines.base import Engine, location_from_information
from dbt.adapters.sparkdelta.engines.embedded import EmbeddedEngine
from dbt.adapters.sparkdelta.engines.local import LocalEngine, local_session_conf
from python_ops.maintenance import MODES_HELP, EngineMode, engine_mode

__all__ = [
    "MODES",
    "MODES_HELP",
    "EmbeddedEngine",
    "Engine",
    "LocalEngine",
    "OpsEngine",
    "get_engine",
    "get_ops_engine",
    "local_session_conf",
    "location_from_information",
    "shutdown_engines",
]

log = logging.getLogger(__name__)

MODES = tuple(EngineMode)


def get_engine(
    *,
    mode: EngineMode | str,
    warehouse: str | None,
    connect_url: str | None,
    port: int = 0,
    spark_conf: dict[str, str] | None = None,
) -> Engine:
    """Return the process-wide engine for these settings, starting it on first use.

    Args:
        mode: ``embedded``, ``local`` or ``attach`` (an ``EngineMode``, or its word).
        warehouse: Warehouse directory (embedded and local modes).
        connect_url: Spark Connect URL (attach mode; None for the classic session).
        port: Port of the embedded server (0 = free port).
        spark_conf: Session configuration.

    Returns:
        The engine.

    Raises:
        ConfigError: For an unknown mode or a bad warehouse/port.
        EngineError: When the engine cannot be started or reached.
    """
    mode = engine_mode(mode)
    key = (mode, os.path.abspath(warehouse) if warehouse else None, connect_url)
    with runtime.ENGINES.lock:
        engine = runtime.ENGINES.value.get(key)
        if engine is None:
            if mode is EngineMode.EMBEDDED:
                engine = EmbeddedEngine(warehouse or "warehouse", port=port, spark_conf=spark_conf)
            elif mode is EngineMode.LOCAL:
                engine = LocalEngine(warehouse or "warehouse", spark_conf=spark_conf)
            else:
                engine = AttachedEngine(connect_url, spark_conf=spark_conf)
            runtime.ENGINES.value[key] = engine
        return engine


def get_ops_engine(spark_conf: dict[str, str] | None = None) -> OpsEngine:
    """The process-wide ops engine (its Sail server starts on first use, see ``OpsEngine``).

    Args:
        spark_conf: Session configuration used when it starts.

    Returns:
        The engine.
    """
    key = ("ops", tuple(sorted((spark_conf or {}).items())))
    with runtime.ENGINES.lock:
        engine = runtime.ENGINES.value.get(key)
        if not isinstance(engine, OpsEngine):
            engine = OpsEngine(spark_conf=spark_conf)
            runtime.ENGINES.value[key] = engine
        return engine


def shutdown_engines() -> None:
    """Stop every engine of this process (client sessions first, then servers)."""
    with runtime.ENGINES.lock:
        engines = list(runtime.ENGINES.value.values())
        runtime.ENGINES.value.clear()
    for engine in engines:
        try:
            engine.stop()
        except Exception as err:  # shutting down must not raise at interpreter exit
            log.debug("error while stopping engine: %s", err)


atexit.register(shutdown_engines)
