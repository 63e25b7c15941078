"""The embedded engine: Sail's Spark Connect server in this process, with a catalog journal.

Sail's catalog lives as long as its session, so the journal (``catalog_journal``) records every
schema, table and view dbt creates and replays them into the next process's session: schemas at
start, each table or view when the first statement that names it runs (a word of the statement
is its name; a listing of a schema registers the whole schema), so a run-operation on 5 of 1,000
models registers what it touches, not 1,000 tables. A table's location is the one its CREATE
statement gave (every sparkdelta table has a fixed location), recorded without asking the
catalog again.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import threading
from collections import Counter
from typing import Any

from dbt.adapters.sparkdelta.common import maintenance_events
from dbt.adapters.sparkdelta.engines.base import Engine, location_from_information
from dbt.adapters.sparkdelta.engines.catalog_journal import (
    CatalogJournal,
    DdlEvent,
    declared_location,
    parse_ddl,
    strip_leading_comments,
)
from dbt.adapters.sparkdelta.engines.pending import PendingRelations, statement_kind
from python_ops.errors import ConfigError
from python_ops.maintenance import LazySession, is_remote, managed_location, normalize_location

log = logging.getLogger(__name__)


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


_STOP_WAIT_S = 20.0  # how long stopping the engine may take at exit before the process goes on


def normalize_for_sail(statement: str) -> str:
    """Rewrite the few valid Spark SQL spellings Sail 0.7 does not parse into ones it does.

    Only typed timestamp literals with a one-digit zone offset hour are touched (``-0`` becomes
    ``-00``, the same offset); nothing else in the statement changes.
    """
    return _SHORT_OFFSET_LITERAL.sub(r"\g<head>0\g<hour>'", statement)


def prepare_warehouse(warehouse: str) -> str:
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

    The server starts when a statement first needs it (``LazySession``): a command that only
    reads Delta logs and the journal (a run-operation with nothing due, a report) starts no
    server. With a fixed ``port`` it starts at once: the server is then meant for other
    clients too, and a port in use is refused when the connection opens.

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
        self.warehouse = prepare_warehouse(warehouse)
        self.journal = CatalogJournal(self.warehouse)
        self.statements: Counter[str] = Counter()  # what this engine ran, by kind (tests)
        self._pending = PendingRelations(self._register_sql, self.statements)
        self._schemas = self._replay()
        self._sail = LazySession(spark_conf, port=port, on_start=self._create_schemas)
        if port:
            try:
                self._sail.session()
            except BaseException:
                self.journal.close()  # the journal's files are not left held by a failed start
                raise

    @property
    def spark(self) -> Any:
        """The server's session, starting the server on first use."""
        return self._sail.session()

    @property
    def ops_spark(self) -> Any:
        """The session for the ops: starts the server only when an op really uses Spark."""
        return self._sail

    @property
    def started(self) -> bool:
        """True once the Sail server runs."""
        return self._sail.started

    @property
    def url(self) -> str:
        """The server's Spark Connect URL (``sc://127.0.0.1:<port>``), starting it if need be."""
        return self._sail.engine().url

    def sql(self, statement: str) -> Any:
        """Run a statement; record catalog changes of successful DDL in the journal."""
        statement = normalize_for_sail(statement)
        if _PARTITION_OVERWRITE_MODE.match(strip_leading_comments(statement)):
            # dbt-spark sets this before insert_overwrite; Sail has no such setting (it refuses
            # 'spark.*' keys) and the sparkdelta insert_overwrite does not depend on it.
            return self.spark.sql(
                "select 'spark.sql.sources.partitionOverwriteMode' as key, 'DYNAMIC' as value"
            )
        if self._pending:
            self._pending.register_for(statement)
        event = parse_ddl(statement)
        self.statements[event.action if event is not None else statement_kind(statement)] += 1
        if event is not None and event.action == "drop":
            dropped = self.journal.entry(event.schema, event.name)
            df = self.spark.sql(statement)
            self._after_drop(event, dropped)
            return df
        df = self.spark.sql(statement)
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
        self.spark.sql(f"drop table if exists `{schema}`.`{name}`")
        self.spark.sql(
            f"create table if not exists `{schema}`.`{name}`{column_list} using delta"
            f"{comment_clause} location '{location}'"
        )

    def _observe(self, event: DdlEvent) -> None:
        if event.action == "create_view":
            self.journal.record_view(event.schema, event.name, event.statement)
        elif event.action == "create_table":
            given = declared_location(event.statement)
            location = (
                normalize_location(given)
                if given is not None
                else self._location_of(event.schema, event.name)
            )
            if location is None:
                maintenance_events.notice(
                    f"table {event.schema}.{event.name} has no location; it will not survive "
                    "this process"
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
        self.statements["show_table"] += 1
        rows = self.spark.sql(f"show table extended in `{schema}` like '{name}'").collect()
        for row in rows:
            if (location := location_from_information(row["information"])) is not None:
                return location
        return None

    def _replay(self) -> list[str]:
        """Note the journal's relations as pending for the session; its schemas, to create.

        A table whose local location has no Delta log any more is forgotten (with a warning).

        Returns:
            The journal's schemas, created in the session when it starts (``_create_schemas``).
        """
        catalog = self.journal.catalog()
        for key, rel in catalog.relations.items():
            if rel["kind"] == "table":
                location = rel["location"]
                if not is_remote(location) and not os.path.isdir(
                    os.path.join(location, "_delta_log")
                ):
                    maintenance_events.notice(
                        f"table {key[0]}.{key[1]}: no Delta log at {location} (its files are "
                        "gone); the engine forgets it, and the model is reported missing until "
                        "it is built"
                    )
                    self.journal.forget(*key)
                    continue
            self._pending.add(key, rel)
        return list(catalog.schemas)

    def _create_schemas(self, spark: Any) -> None:
        """Create the journal's schemas in the fresh Sail session (``LazySession``'s start)."""
        for schema in self._schemas:
            spark.sql(f"create schema if not exists `{schema}`")

    def _register_sql(self, statement: str) -> None:
        self.spark.sql(statement)

    def stop(self) -> None:
        """Stop Sail, waiting at most 20 s: a session that does not close must not hang the exit.

        The journal's files are released first.
        """
        self.journal.close()
        if not self._sail.started:
            return
        stopper = threading.Thread(target=self._sail.stop, name="sparkdelta-stop", daemon=True)
        stopper.start()
        stopper.join(_STOP_WAIT_S)
        if stopper.is_alive():
            log.warning(
                "the embedded engine did not stop within %.0f s; leaving it to the process's exit",
                _STOP_WAIT_S,
            )
