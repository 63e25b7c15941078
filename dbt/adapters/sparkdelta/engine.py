"""The Spark engines dbt talks to: embedded Sail (default), local Spark with Delta, or attach.

One engine per profile target lives for the whole process and is shared by every dbt thread and
every in-process ``dbtRunner`` invocation (Sail's catalog belongs to one Spark session, so all
threads must use the same session). ``shutdown_engines()`` stops them; it is registered with
``atexit`` and stops the client session *before* the server, because a process hung at exit when
a client session was still open while the server stopped.
"""

from __future__ import annotations

import atexit
import logging
import os
import re
import shutil
import threading
from abc import ABC, abstractmethod
from typing import Any

from dbt.adapters.sparkdelta.catalog_journal import (
    CatalogJournal,
    DdlEvent,
    parse_ddl,
    strip_leading_comments,
)
from python_ops.errors import ConfigError, EngineError
from python_ops.spark_sessions import LazySession, SailEngine
from python_ops.storage import is_remote, normalize_location

log = logging.getLogger(__name__)

MODES = ("embedded", "local", "attach")
MODES_HELP = (
    "embedded starts Sail in-process; local starts a classic local Spark with the Delta jars "
    "in-process; attach uses connect_url or the running Spark session"
)


def location_from_information(information: str | None) -> str | None:
    """The normalised ``Location:`` of a ``SHOW TABLE EXTENDED`` information block, if any."""
    for line in (information or "").splitlines():
        if line.startswith("Location:"):
            return normalize_location(line.split(":", 1)[1].strip())
    return None


# A typed timestamp literal whose zone offset is a single-digit hour, e.g. TIMESTAMP
# '2020-01-01 00:00:00-0' (valid Spark SQL, used by dbt's own tests). Sail 0.7 refuses it
# ('Invalid timezone "-0"') but accepts the same offset written with two digits.
_SHORT_OFFSET_LITERAL = re.compile(
    r"(?P<head>\btimestamp(?:_ltz|_ntz)?\s*'\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?"
    r"\s*[+-])(?P<hour>\d)'",
    re.IGNORECASE,
)


_PARTITION_OVERWRITE_MODE = re.compile(
    r"^set\s+spark\.sql\.sources\.partitionOverwriteMode\s*=\s*'?dynamic'?\s*;?\s*$",
    re.IGNORECASE,
)


def normalize_for_sail(statement: str) -> str:
    """Rewrite the few valid Spark SQL spellings Sail 0.7 does not parse into ones it does.

    Only typed timestamp literals with a one-digit zone offset hour are touched (``-0`` becomes
    ``-00``, the same offset); nothing else in the statement changes.
    """
    return _SHORT_OFFSET_LITERAL.sub(r"\g<head>0\g<hour>'", statement)


def managed_location(warehouse: str, schema: str, identifier: str) -> str:
    """The location of a table the embedded engine manages: ``<warehouse>/<schema>/<name>``."""
    return os.path.join(warehouse, schema.lower(), identifier.lower())


class Engine(ABC):
    """A Spark session plus what the adapter needs around it."""

    mode: str
    warehouse: str | None = None

    @property
    @abstractmethod
    def spark(self) -> Any:
        """The ``pyspark.sql.SparkSession`` every dbt thread shares."""

    def sql(self, statement: str) -> Any:
        """Run one SQL statement and return its DataFrame."""
        return self.spark.sql(statement)

    def register_table(self, schema: str, name: str, location: str) -> None:
        """Make a Delta table written by path (e.g. by a Python model) known to the catalog.

        Args:
            schema: The table's schema.
            name: The table's name.
            location: Where its Delta log lives.
        """
        self.sql(f"create schema if not exists `{schema}`")
        self.sql(
            f"create table if not exists `{schema}`.`{name}` using delta location '{location}'"
        )

    @abstractmethod
    def stop(self) -> None:
        """Release the session (and the server, for the embedded engine)."""


def _prepare_warehouse(warehouse: str) -> str:
    """The warehouse as an absolute path, created and writable.

    Raises:
        ConfigError: When it cannot be created or is not writable.
    """
    path = os.path.abspath(warehouse)
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as err:
        raise ConfigError(
            setting="warehouse",
            value=warehouse,
            fix=f"The directory cannot be created ({err.strerror}). Point 'warehouse' in "
            "your profile at a writable directory.",
        ) from err
    if not os.access(path, os.W_OK):
        raise ConfigError(
            setting="warehouse",
            value=warehouse,
            fix="The directory is not writable. Point 'warehouse' at a writable directory.",
        )
    return path


class EmbeddedEngine(Engine):
    """Sail's Spark Connect server inside this process, with a persistent catalog journal.

    Args:
        warehouse: Directory holding the managed Delta tables and the catalog journal.
        port: TCP port on 127.0.0.1; 0 picks a free one.
        spark_conf: Session configuration to set (dbt-spark's ``server_side_parameters``).

    Raises:
        ConfigError: When the warehouse cannot be created or the port is in use.
        EngineError: When the server or the session cannot be started.
    """

    mode = "embedded"

    def __init__(self, warehouse: str, *, port: int = 0, spark_conf: dict[str, str] | None = None):
        self.warehouse = _prepare_warehouse(warehouse)
        self.journal = CatalogJournal(self.warehouse)
        self._sail = SailEngine(port=port, spark_conf=spark_conf)
        self.url = self._sail.url
        self._spark = self._sail.spark
        self._replay()

    @property
    def spark(self) -> Any:  # noqa: D102
        return self._spark

    def sql(self, statement: str) -> Any:
        """Run a statement; record catalog changes of successful DDL in the journal."""
        statement = normalize_for_sail(statement)
        if _PARTITION_OVERWRITE_MODE.match(strip_leading_comments(statement)):
            # dbt-spark sets this before insert_overwrite; Sail has no such setting (it refuses
            # 'spark.*' keys) and the sparkdelta insert_overwrite does not depend on it.
            return self._spark.sql(
                "select 'spark.sql.sources.partitionOverwriteMode' as key, 'DYNAMIC' as value"
            )
        event = parse_ddl(statement)
        if event is not None and event.action == "drop":
            dropped = self.journal.entry(event.schema, event.name)
            df = self._spark.sql(statement)
            self._after_drop(event, dropped)
            return df
        df = self._spark.sql(statement)
        if event is not None:
            self._observe(event)
        return df

    def register_table(self, schema: str, name: str, location: str) -> None:  # noqa: D102
        super().register_table(schema, name, location)
        self.journal.record_table(schema.lower(), name.lower(), location)

    def refresh_table(
        self,
        schema: str,
        name: str,
        location: str,
        *,
        columns: str | None = None,
        comment: str | None = None,
    ) -> None:
        """Re-register a Delta table so the catalog shows what its log now says.

        Sail keeps the column list a table was created with; after a change written to the
        Delta log (added columns, comments) the table is registered again at the same location,
        with ``columns`` (a column list matching the log exactly, comments included) or without
        a column list (its schema is then read from the log). The journal entry (same location)
        stays as it is: a new process registers the table from the log.

        Args:
            schema: The table's schema.
            name: The table's name.
            location: Its Delta location.
            columns: Column definitions (``a int not null comment '...'``), or None.
            comment: The table comment, or None.
        """
        column_list = f" ({columns})" if columns else ""
        comment_clause = ""
        if comment:
            escaped = comment.replace("\\", "\\\\").replace("'", "\\'")
            comment_clause = f" comment '{escaped}'"
        self._spark.sql(f"drop table if exists `{schema}`.`{name}`")
        self._spark.sql(
            f"create table if not exists `{schema}`.`{name}`{column_list} using delta"
            f"{comment_clause} location '{location}'"
        )

    def _observe(self, event: DdlEvent) -> None:
        if event.action == "create_view":
            self.journal.record_view(event.schema, event.name, event.statement)
        elif event.action == "create_table":
            location = self._location_of(event.schema, event.name)
            if location is None:
                log.warning(
                    "table %s.%s has no location; it will not survive this process",
                    event.schema,
                    event.name,
                )
                return
            self.journal.record_table(event.schema, event.name, location)
        elif event.action == "rename":
            self.journal.rename(event.schema, event.name, event.new_schema, event.new_name)
        elif event.action == "create_schema":
            self.journal.record_schema(event.schema)
        elif event.action == "drop_schema":
            for entry in self.journal.forget_schema(event.schema):
                self._delete_if_managed(entry)

    def _after_drop(self, event: DdlEvent, entry: dict[str, Any] | None) -> None:
        self.journal.forget(event.schema, event.name)
        if entry is not None:
            self._delete_if_managed(entry)

    def _delete_if_managed(self, entry: dict[str, Any]) -> None:
        """Remove a dropped table's files when the engine manages them (Spark's managed tables).

        Only the exact managed location ``<warehouse>/<schema>/<name>`` is removed; tables at a
        location the user chose (``location_root``) are external and keep their files.
        """
        if entry.get("kind") != "table":
            return
        location = os.path.abspath(entry["location"])
        expected = managed_location(self.warehouse or "", entry["schema"], entry["name"])
        if location == expected and os.path.isdir(location) and not os.path.islink(location):
            shutil.rmtree(location)

    def _location_of(self, schema: str, name: str) -> str | None:
        rows = self._spark.sql(f"show table extended in `{schema}` like '{name}'").collect()
        for row in rows:
            if (location := location_from_information(row["information"])) is not None:
                return location
        return None

    def _replay(self) -> None:
        """Re-create the journal's schemas, tables and views in this fresh Sail session."""
        state = self.journal.load()
        for schema in state["schemas"]:
            self._spark.sql(f"create schema if not exists `{schema}`")
        views = []
        for rel in state["relations"]:
            if rel["kind"] == "view":
                views.append(rel)
                continue
            location = rel["location"]
            if not is_remote(location) and not os.path.isdir(os.path.join(location, "_delta_log")):
                log.warning(
                    "forgetting %s.%s: no Delta log at %s", rel["schema"], rel["name"], location
                )
                self.journal.forget(rel["schema"], rel["name"])
                continue
            # No column list: Sail then reads the schema from the Delta log on every query.
            self._spark.sql(
                f"create table if not exists `{rel['schema']}`.`{rel['name']}` "
                f"using delta location '{location}'"
            )
        # Views may depend on views created later; retry until no pass makes progress.
        pending = views
        while pending:
            failed = []
            for rel in pending:
                try:
                    self._spark.sql(rel["statement"])
                except Exception:  # a dependency is missing (yet); retried below
                    failed.append(rel)
            if len(failed) == len(pending):
                for rel in failed:
                    log.warning("could not re-create view %s.%s", rel["schema"], rel["name"])
                break
            pending = failed

    def stop(self) -> None:  # noqa: D102
        self._sail.stop()


def local_session_conf(warehouse: str, jars: list[str]) -> dict[str, str]:
    """Settings of a classic local Spark with Delta and a persistent catalog in ``warehouse``.

    Delta from ``jars`` (``spark.jars``, Delta's SQL extension and catalog), the small-machine
    sizes of ``python_ops.delta_jars.LOCAL_CONF``, and Spark's own persistent catalog: Hive
    support with an embedded Derby metastore in ``<warehouse>/metastore_db`` (``derby.log`` in
    the warehouse too), so tables survive the process. The driver binds to 127.0.0.1.

    Args:
        warehouse: The warehouse directory, absolute.
        jars: Paths of the Delta jars.

    Returns:
        Spark settings (without the master).
    """
    from python_ops.delta_jars import LOCAL_CONF, session_conf

    return {
        **session_conf(jars),
        **LOCAL_CONF,
        "spark.sql.catalogImplementation": "hive",
        "spark.sql.warehouse.dir": warehouse,
        "spark.hadoop.javax.jdo.option.ConnectionURL": (
            f"jdbc:derby:;databaseName={warehouse}/metastore_db;create=true"
        ),
        "spark.driver.extraJavaOptions": f"-Dderby.system.home={warehouse}",
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
    }


def _uses_spark_connect() -> bool:
    """Whether PySpark in this process is switched to Spark Connect (classic Spark is then out)."""
    return bool(os.environ.get("SPARK_CONNECT_MODE_ENABLED") or os.environ.get("SPARK_REMOTE"))


class LocalEngine(Engine):
    """A classic local Spark (``local[*]``) with Delta Lake's jars inside this process.

    Delta's own engine for every statement (``MERGE``, ``OPTIMIZE``, ``VACUUM``, deletion
    vectors...), and Spark's own persistent catalog (Hive support, embedded Derby metastore in
    ``<warehouse>/metastore_db``): tables survive across processes without a catalog journal.
    Tables live at ``<warehouse>/<schema>/<name>`` as with the embedded engine, so a dropped
    table's files at that location are removed with it (Spark treats a table with a location as
    external and would leave them). The embedded Derby database takes one process at a time.

    Args:
        warehouse: Directory holding the tables, the metastore and ``derby.log``.
        spark_conf: More session settings (the profile's ``server_side_parameters``); they win
            over the engine's own, ``spark.driver.extraJavaOptions`` is appended to.

    Raises:
        ConfigError: When the warehouse cannot be created.
        EngineError: When the Delta jars are missing, this process already uses Spark Connect
            or another classic Spark, or Spark cannot start.
    """

    mode = "local"

    def __init__(self, warehouse: str, *, spark_conf: dict[str, str] | None = None) -> None:
        from python_ops.delta_jars import require_delta_jars

        self.warehouse = _prepare_warehouse(warehouse)
        jars = require_delta_jars()
        conf = local_session_conf(self.warehouse, jars)
        for key, value in (spark_conf or {}).items():
            if key == "spark.driver.extraJavaOptions":
                value = f"{conf[key]} {value}"
            conf[key] = str(value)
        if _uses_spark_connect():
            raise EngineError(
                "mode: local needs classic (JVM) Spark, but PySpark in this process is already "
                "switched to Spark Connect (SPARK_CONNECT_MODE_ENABLED/SPARK_REMOTE), e.g. by an "
                "embedded or attached target used before. Run dbt with mode: local in a process "
                "of its own."
            )
        from pyspark import SparkContext
        from pyspark.sql import SparkSession

        running = SparkContext._active_spark_context
        if running is not None:
            current = running.getConf().get("spark.sql.warehouse.dir")
            if os.path.abspath(str(current or "")) != self.warehouse:
                raise EngineError(
                    f"mode: local with warehouse {self.warehouse}: this process already runs a "
                    f"classic Spark (warehouse {current}); one process has one. Use mode: attach "
                    "to run on that session, or run dbt in a process of its own."
                )
        try:
            builder = SparkSession.builder.master(conf.pop("spark.master", "local[*]"))
            builder = builder.appName("dbt-sparkdelta")
            for key, value in conf.items():
                builder = builder.config(key, value)
            self._spark = builder.enableHiveSupport().getOrCreate()
        except Exception as err:  # py4j and pyspark raise many types while starting
            raise EngineError(
                f"cannot start the local Spark with Delta (warehouse {self.warehouse}): {err}"
            ) from err

    @property
    def spark(self) -> Any:  # noqa: D102
        return self._spark

    def sql(self, statement: str) -> Any:
        """Run a statement; a dropped table (or schema) takes its managed files with it."""
        event = parse_ddl(statement)
        if event is None or event.action not in ("drop", "drop_schema"):
            return self._spark.sql(statement)
        if event.action == "drop":
            doomed = [(event.schema, event.name, self._location_of(event.schema, event.name))]
        else:
            doomed = self._tables_in(event.schema)
        df = self._spark.sql(statement)
        for schema, name, location in doomed:
            expected = managed_location(self.warehouse or "", schema, name)
            if (
                location is not None
                and os.path.abspath(location) == expected
                and os.path.isdir(expected)
                and not os.path.islink(expected)
            ):
                shutil.rmtree(expected)
        return df

    def _location_of(self, schema: str, name: str) -> str | None:
        try:
            rows = self._spark.sql(f"show table extended in `{schema}` like '{name}'").collect()
        except Exception:  # no such schema: nothing to delete
            return None
        for row in rows:
            if (location := location_from_information(row["information"])) is not None:
                return location
        return None

    def _tables_in(self, schema: str) -> list[tuple[str, str, str | None]]:
        try:
            rows = self._spark.sql(f"show table extended in `{schema}` like '*'").collect()
        except Exception:  # no such schema: nothing to delete
            return []
        return [
            (schema, str(row["tableName"]).lower(), location_from_information(row["information"]))
            for row in rows
            if not row["isTemporary"]
        ]

    def stop(self) -> None:  # noqa: D102
        self._spark.stop()


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


_engines: dict[tuple[Any, ...], Engine] = {}
_engines_lock = threading.Lock()


def get_engine(
    *,
    mode: str,
    warehouse: str | None,
    connect_url: str | None,
    port: int = 0,
    spark_conf: dict[str, str] | None = None,
) -> Engine:
    """Return the process-wide engine for these settings, starting it on first use.

    Args:
        mode: ``embedded``, ``local`` or ``attach``.
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
    if mode not in MODES:
        raise ConfigError(
            setting="mode",
            value=mode,
            fix=f"Use one of: {', '.join(MODES)} ({MODES_HELP}).",
        )
    key = (mode, os.path.abspath(warehouse) if warehouse else None, connect_url)
    with _engines_lock:
        engine = _engines.get(key)
        if engine is None:
            if mode == "embedded":
                engine = EmbeddedEngine(warehouse or "warehouse", port=port, spark_conf=spark_conf)
            elif mode == "local":
                engine = LocalEngine(warehouse or "warehouse", spark_conf=spark_conf)
            else:
                engine = AttachedEngine(connect_url, spark_conf=spark_conf)
            _engines[key] = engine
        return engine


def get_ops_engine(spark_conf: dict[str, str] | None = None) -> OpsEngine:
    """The process-wide ops engine (its Sail server starts on first use, see ``OpsEngine``).

    Args:
        spark_conf: Session configuration used when it starts.

    Returns:
        The engine.
    """
    key = ("ops", tuple(sorted((spark_conf or {}).items())))
    with _engines_lock:
        engine = _engines.get(key)
        if not isinstance(engine, OpsEngine):
            engine = OpsEngine(spark_conf=spark_conf)
            _engines[key] = engine
        return engine


def shutdown_engines() -> None:
    """Stop every engine of this process (client sessions first, then servers)."""
    with _engines_lock:
        engines = list(_engines.values())
        _engines.clear()
    for engine in engines:
        try:
            engine.stop()
        except Exception as err:  # shutting down must not raise at interpreter exit
            log.debug("error while stopping engine: %s", err)


atexit.register(shutdown_engines)
