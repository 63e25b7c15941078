"""The local engine: a classic local Spark with Delta Lake's jars in this process."""

from __future__ import annotations

import os
import shutil
from typing import Any

from dbt.adapters.sparkdelta.engines.base import Engine, location_from_information
from dbt.adapters.sparkdelta.engines.catalog_journal import parse_ddl
from dbt.adapters.sparkdelta.engines.embedded import prepare_warehouse
from python_ops.errors import EngineError
from python_ops.maintenance import managed_location


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
    from python_ops.maintenance import LOCAL_CONF, session_conf

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


#: Log4j levels the local session sets for Hive's loggers as it starts. A Delta table is not a
#: Hive table: its rebuild makes Hive's metastore refuse the schema change (an ERROR with a
#: stack trace of about 140 lines from ``HiveAlterHandler``, and the same trace again in
#: ``HiveExternalCatalog``'s WARN) before Spark stores the table in its own format, as it
#: should; and the metastore warns about settings it does not know. None of it is anything a
#: dbt user can act on, so it stays out of dbt's console. Every other logger keeps Spark's
#: levels (or those of the user's own ``log4j2.properties``).
QUIET_LOGGERS = {
    "org.apache.hadoop.hive.metastore.HiveAlterHandler": "OFF",
    "org.apache.spark.sql.hive.HiveExternalCatalog": "ERROR",
    "org.apache.hadoop.hive.conf.HiveConf": "ERROR",
    "org.apache.hadoop.hive.ql.session.SessionState": "ERROR",
    "org.apache.hadoop.hive.metastore.ObjectStore": "ERROR",
}


#: Loggers whose start-up lines no dbt user can act on: the JVM found no native Hadoop
#: library (it uses Java's, as it should), and ``CREATE SCHEMA IF NOT EXISTS`` found the
#: schema's directory already there. Set from the JVM's first line, by ``startup_log_options``.
QUIET_AT_START = {
    # Spark's own default levels (``log4j2-defaults.properties``), kept as they are
    "org.sparkproject.jetty": "WARN",
    "org.sparkproject.jetty.util.component.AbstractLifeCycle": "ERROR",
    "org.apache.hadoop.hive.metastore.RetryingHMSHandler": "FATAL",
    "org.apache.parquet.CorruptStatistics": "ERROR",
    "parquet.CorruptStatistics": "ERROR",
    # and ours
    "org.apache.hadoop.util.NativeCodeLoader": "ERROR",
    "org.apache.spark.sql.execution.datasources.v2.CreateNamespaceExec": "ERROR",
}
LOG4J_FILE = "log4j2-sparkdelta.properties"


def startup_log_options(warehouse: str, extra_java_options: str) -> str:
    """A log4j 2 file for the JVM's start: Spark's default console at WARN, the quiet loggers.

    Spark's own default (``log4j2-defaults.properties``) logs at WARN from a shell and says so
    in three lines; with it the JVM's start also warns that no native Hadoop library was found.
    This file is Spark's default console layout at WARN with ``QUIET_AT_START`` and
    ``QUIET_LOGGERS`` quieter, written to the warehouse beside ``derby.log``. A user's own
    configuration wins: a ``log4j2.properties`` in ``SPARK_CONF_DIR``, or a
    ``-Dlog4j2.configurationFile`` in the profile's ``spark.driver.extraJavaOptions``.

    Args:
        warehouse: The warehouse directory (absolute, existing).
        extra_java_options: The driver's Java options so far.

    Returns:
        The Java option naming the file, or "" when the user configures logging.
    """
    conf_dir = os.environ.get("SPARK_CONF_DIR")
    if "log4j" in extra_java_options or (
        conf_dir and os.path.exists(os.path.join(conf_dir, "log4j2.properties"))
    ):
        return ""
    lines = [
        "rootLogger.level = warn",
        "rootLogger.appenderRef.stderr.ref = console",
        "appender.console.type = Console",
        "appender.console.name = console",
        "appender.console.target = SYSTEM_ERR",
        "appender.console.layout.type = PatternLayout",
        "appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex",
    ]
    quiet = {**QUIET_AT_START, **QUIET_LOGGERS}
    for n, (name, level) in enumerate(sorted(quiet.items())):
        lines += [f"logger.q{n}.name = {name}", f"logger.q{n}.level = {level.lower()}"]
    path = os.path.join(warehouse, LOG4J_FILE)
    with open(path, "w", encoding="utf-8") as out:
        out.write("# written by dbt-sparkdelta's mode: local at each start\n")
        out.write("\n".join(lines) + "\n")
    return f"-Dlog4j2.configurationFile=file:{path}"


def quiet_hive_logs(spark: Any) -> None:
    """Set ``QUIET_LOGGERS``' levels in the session's JVM (log4j 2's ``Configurator``)."""
    jvm = spark._jvm
    level = jvm.org.apache.logging.log4j.Level
    configurator = jvm.org.apache.logging.log4j.core.config.Configurator
    for name, value in QUIET_LOGGERS.items():
        configurator.setLevel(name, level.toLevel(value))


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
        from python_ops.maintenance import require_delta_jars

        self.warehouse = prepare_warehouse(warehouse)
        jars = require_delta_jars()
        conf = local_session_conf(self.warehouse, jars)
        for key, value in (spark_conf or {}).items():
            if key == "spark.driver.extraJavaOptions":
                value = f"{conf[key]} {value}"
            conf[key] = str(value)
        java = conf["spark.driver.extraJavaOptions"]
        conf["spark.driver.extraJavaOptions"] = (
            f"{java} {startup_log_options(self.warehouse, java)}".strip()
        )
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
        # the driver binds to 127.0.0.1 already: say so, and Spark does not warn at start that
        # the host name resolves to a loopback address (a user's own SPARK_LOCAL_IP wins)
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        try:
            builder = SparkSession.builder.master(conf.pop("spark.master", "local[*]"))
            builder = builder.appName("dbt-sparkdelta")
            for key, value in conf.items():
                builder = builder.config(key, value)
            self._spark = builder.enableHiveSupport().getOrCreate()
            quiet_hive_logs(self._spark)  # before the first statement reaches the metastore
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
