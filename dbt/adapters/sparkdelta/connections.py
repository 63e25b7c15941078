"""Credentials and connection manager: dbt-spark's, plus the embedded, local and attach modes."""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from typing import Any

from dbt.adapters.contracts.connection import Connection, ConnectionState
from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.exceptions.connection import FailedToConnectError
from dbt.adapters.spark.connections import (
    SparkConnectionManager,
    SparkConnectionMethod,
    SparkCredentials,
)
from dbt.adapters.spark.session import Cursor, SessionConnectionWrapper
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.sparkdelta.configs.config_aliases import translate_config_aliases
from dbt.adapters.sparkdelta.configs.engine_limits import explain
from dbt.adapters.sparkdelta.configs.profile_checks import (
    check_engine_port,
    check_profile_keys,
    ignored_connect_url,
)
from dbt.adapters.sparkdelta.engines import Engine, get_engine
from python_ops.errors import MaintenanceError
from python_ops.maintenance import embedded_warehouse, engine_mode

logger = AdapterLogger("SparkDelta")
ADAPTER_TYPE = "sparkdelta"


@dataclass
class SparkDeltaCredentials(SparkCredentials):
    """dbt-spark credentials plus the engine settings of this adapter.

    ``method: session`` (the default) runs in-process; ``mode`` says with which engine:
    ``embedded`` starts Sail with tables under ``warehouse``, ``local`` starts a classic local
    Spark with the Delta jars and Spark's own metastore in ``warehouse`` (same table layout),
    ``attach`` uses ``connect_url`` or the process's running Spark session. Other methods
    (thrift, http, odbc) are dbt-spark's.
    """

    mode: str = "embedded"
    warehouse: str | None = None
    connect_url: str | None = None
    engine_port: int = 0
    location_root: str | None = None  # tables at <location_root>/<schema>/<alias>, e.g. s3://

    @classmethod
    def translate_aliases(cls, kwargs: dict[str, Any], recurse: bool = False) -> dict[str, Any]:
        """Translate aliases; dbt applies this to every model config partial too.

        So ``zorder`` (dbt-databricks' key) becomes ``maintenance_zorder_by`` while dbt parses
        (``config_aliases``).
        """
        translated: dict[str, Any] = super().translate_aliases(
            translate_config_aliases(kwargs), recurse
        )
        return translated

    @classmethod
    def __pre_deserialize__(cls, data: Any) -> Any:
        data = super().__pre_deserialize__(data)
        check_profile_keys(data, (f.name for f in dataclasses.fields(cls)))
        data.setdefault("method", "session")
        if data["method"] == "session":
            data.setdefault("host", "localhost")
        return data

    def __post_init__(self) -> None:
        if self.method == SparkConnectionMethod.SESSION:
            try:
                self.mode = engine_mode(self.mode)
            except MaintenanceError as err:
                raise DbtRuntimeError(str(err)) from err
        check_engine_port(self.engine_port)
        warning = ignored_connect_url(str(self.method), self.mode, self.connect_url)
        if warning is not None:
            logger.warning(warning)
        super().__post_init__()

    @property
    def type(self) -> str:
        """The adapter type profiles name (``type: sparkdelta``)."""
        return ADAPTER_TYPE

    def _connection_keys(self) -> tuple[str, ...]:
        return (
            "method",
            "mode",
            "warehouse",
            "location_root",
            "connect_url",
            "host",
            "port",
            "schema",
        )

    def resolved_warehouse(self) -> str | None:
        """The warehouse directory as an absolute path (relative paths: to the project dir).

        The embedded and local engines have a warehouse of their own (default ``warehouse``);
        with ``mode: attach`` it is the ``warehouse`` setting, and with thrift/http/odbc the
        cluster's metastore places tables (``location_root`` fixes their paths), so None unless
        set.
        """
        in_process = self.method == SparkConnectionMethod.SESSION
        if not in_process or not engine_mode(self.mode).owns_warehouse:
            return self.warehouse
        base = os.getcwd()
        try:
            from dbt.flags import get_flags

            base = getattr(get_flags(), "PROJECT_DIR", None) or base  # type: ignore[no-untyped-call]
        except Exception:  # flags are not set outside a dbt invocation
            pass
        return embedded_warehouse(self.warehouse, base)


def engine_for(creds: SparkDeltaCredentials) -> Engine:
    """The process-wide engine these credentials describe (started on first use).

    Raises:
        FailedToConnectError: With the engine's message (naming the setting and the fix).
    """
    try:
        return get_engine(
            mode=creds.mode,
            warehouse=creds.resolved_warehouse(),
            connect_url=creds.connect_url,
            port=creds.engine_port,
            spark_conf=creds.server_side_parameters,
        )
    except MaintenanceError as err:
        raise FailedToConnectError(str(err)) from err


class EngineCursor(Cursor):
    """dbt-spark's session cursor, running statements on our engine instead of a new builder."""

    def __init__(self, engine: Engine) -> None:
        super().__init__()
        self._engine = engine

    def execute(self, sql: str, *parameters: Any) -> None:  # noqa: D102
        if parameters:
            sql = sql % parameters
        try:
            self._df = self._engine.sql(sql)
        except Exception as exc:  # Spark Connect and classic Spark raise different types
            text = engine_error_text(exc)
            if self._engine.mode == "embedded":  # a known Sail limit: the model's line, Spark's way
                text += explain(sql, text)
            raise DbtRuntimeError(text) from exc


def engine_error_text(exc: BaseException) -> str:
    """The engine's own message for ``exc``, also where pyspark lost it while converting.

    Classic pyspark 4.2 formats a SQL error with query context through Spark's error-class
    table, which does not hold Delta's classes: the conversion itself then fails with
    "An error occurred while calling z:org.apache.spark.SparkThrowableHelper.getMessage ...
    Cannot find main error class 'DELTA_...'", raised while handling the original Java error.
    Delta's exceptions carry their message already; this returns it.

    Args:
        exc: What running a statement raised.

    Returns:
        The message to show: the original Java exception's where the conversion failed.
    """
    text = str(exc)
    original = getattr(exc.__context__, "java_exception", None)
    if "SparkThrowableHelper.getMessage" in text and original is not None:
        try:
            return str(original.getMessage())
        except Exception:  # the JVM is gone: the conversion error is all there is
            return text
    return text


class EngineHandle:
    """The connection handle: hands out cursors bound to the engine."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def cursor(self) -> EngineCursor:
        """A DB-API cursor over the engine's session (dbt's ``handle.cursor()``)."""
        return EngineCursor(self.engine)


class EngineConnectionWrapper(SessionConnectionWrapper):
    """dbt-spark's session wrapper with SQL literals that mean what the Python value means.

    dbt-spark interpolates seed values as ``'<str(value)>'``: an empty CSV cell (``None``)
    became the string ``'None'`` (failing casts to numbers, dates and booleans, and storing
    ``'None'`` in text columns), and a quote or backslash in a value broke the statement.
    """

    @classmethod
    def _fix_binding(cls, value: Any) -> str | float:
        if value is None:
            return "NULL"
        # bool is an int: dbt-spark would bind True as 1.0, and CAST(1.0 AS BOOLEAN) is not
        # something every engine accepts (Sail refuses it).
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, str):
            return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
        fixed: str | float = super()._fix_binding(value)
        return fixed


class SparkDeltaConnectionManager(SparkConnectionManager):
    """dbt-spark's connection manager; ``method: session`` goes through our engines."""

    TYPE = ADAPTER_TYPE

    @classmethod
    def open(cls, connection: Connection) -> Connection:  # noqa: D102
        if connection.state == ConnectionState.OPEN:
            return connection
        creds = connection.credentials
        if creds.method != SparkConnectionMethod.SESSION:
            return super().open(connection)
        engine = engine_for(creds)
        connection.handle = EngineConnectionWrapper(EngineHandle(engine))  # type: ignore[arg-type]
        connection.state = ConnectionState.OPEN
        return connection
