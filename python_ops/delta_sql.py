"""Delta's own SQL on an engine: asked once whether the engine has it, then its statements.

``DeltaSql`` asks an engine once whether it has Delta (``DESCRIBE HISTORY``, a statement only
Delta knows) and runs Delta's statements on it; ``StatementSession`` gives those statements a
session of their own, so their settings never reach another thread's statement;
``session_sql`` keeps one ``DeltaSql`` per Spark session.
"""

from __future__ import annotations

import atexit
import logging
import re
import threading
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from python_ops import runtime
from python_ops.errors import EngineError, MaintenanceError

log = logging.getLogger(__name__)


Rows = list[dict[str, Any]]
PROBE = "DESCRIBE HISTORY {table} LIMIT 1"
# What an engine without Delta's SQL answers the probe. Measured: Spark 4.2 without delta-spark
# "[PARSE_SYNTAX_ERROR] Syntax error at or near 'LIMIT'" (without the LIMIT it would parse
# DESCRIBE HISTORY as a table named HISTORY: "[TABLE_OR_VIEW_NOT_FOUND] The table or view
# `HISTORY` cannot be found"), Sail "invalid argument: found HISTORY at 9:16 expected
# 'FUNCTION', ...". Not measured here: Spark before 3.4 words it "mismatched input 'LIMIT'".
# Only these answers mean "no Delta"; any other failure of the probe (Delta's own "is not a
# Delta table", no access, unreachable) is an error, never a silent switch of writer.
_NO_DELTA_ANSWERS = re.compile(
    r"PARSE_SYNTAX_ERROR|mismatched input 'LIMIT'|found HISTORY\b"
    r"|table or view `HISTORY` cannot be found",
    re.IGNORECASE,
)
# Sail's parser answers the probe so ("found HISTORY at 9:16 expected ..."): a Sail server, which
# never has Delta's SQL. That is no news to anyone who runs one, so it is said at DEBUG only.
_SAIL_ANSWER = re.compile(r"\bfound HISTORY\b", re.IGNORECASE)
# Session settings read over SQL (``SET key``) answer this for a key that is not set.
_UNDEFINED = "<undefined>"


def mark_no_delta_sql(spark: Any) -> None:
    """Record that a session's engine has no Delta SQL (the embedded Sail engine).

    ``session_sql`` then answers "no Delta" for it without sending a probe.

    Args:
        spark: The session (or a ``LazySession``).
    """
    with runtime.DELTA_SQL.lock:
        runtime.DELTA_SQL.value.no_delta.add(spark)


def says_no_delta(err: BaseException) -> bool:
    """Whether a failed probe is the engine's clear "I have no Delta SQL" answer.

    Args:
        err: What the probe raised.

    Returns:
        True for a parse error of ``DESCRIBE HISTORY`` (Spark without Delta, Sail).
    """
    return bool(_NO_DELTA_ANSWERS.search(str(err)))


def _say_no_delta(where: str, err: BaseException) -> None:
    """Log an engine's "no Delta" answer: at DEBUG for Sail, visibly for a Spark without Delta.

    Sail never has Delta's SQL, so an attached Sail server's answer is an expected fact. A
    Spark that cannot parse ``DESCRIBE HISTORY`` was configured by the user and lacks
    delta-spark, which is news: said at INFO, with what it means and the fix (the parser's
    own words at DEBUG).
    """
    if _SAIL_ANSWER.search(str(err)):
        log.debug(
            "%s is a Sail server, which has no Delta SQL (%s); OPTIMIZE runs through delta-rs "
            "in this process",
            where,
            _first_line(err),
        )
        return
    log.debug("%s: the Delta probe's answer: %s", where, _first_line(err))
    log.info(
        "%s has no Delta SQL (it cannot parse DESCRIBE HISTORY: delta-spark is not loaded "
        "there); OPTIMIZE runs through delta-rs in this process. For Delta's own OPTIMIZE on "
        "it, start it with the Delta jars and "
        "spark.sql.extensions=io.delta.sql.DeltaSparkSessionExtension",
        where,
    )


def _first_line(err: BaseException) -> str:
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    return lines[0][:300] if lines else type(err).__name__


class DeltaSql:
    """Delta's own SQL on an engine: a Spark session, or a client connection to a cluster.

    ``has_delta`` asks the engine once whether it has Delta, with a statement only Delta knows
    (``DESCRIBE HISTORY <table> LIMIT 1`` on a Delta table), and keeps the answer for the
    engine (``key``): no JVM classes are looked for, so classic Spark, Spark Connect, a thrift
    server and Databricks answer the same way. Only an engine's parse error of the probe
    (Spark without delta-spark, Sail) means "no Delta"; any other failure raises.

    ``run_with_settings`` runs one statement with session settings that hold for that statement
    only, under a lock per engine; on a Spark session, on a session of its own
    (``StatementSession``), so threads sharing the session never see those settings.
    Settings go through ``conf`` (a ``spark.conf``: ``get``/``set``/``unset``) when
    given, else through ``SET key=value`` / ``RESET key`` statements (a SQL-only connection).

    Args:
        execute: Runs one statement and returns its rows as dicts (column name to value).
        where: The engine, in words (results and logs say where Delta's OPTIMIZE ran).
        key: Identifies the engine for an answer kept process-wide (a connection's settings);
            None keeps it in this object (one object per engine, e.g. ``session_sql``).
        names: Table location to the SQL name the engine knows it by; other locations are
            named by path (``delta.`<location>```).
        conf: The session's ``spark.conf`` (None: settings through SQL statements).
        has_delta: The answer when it is known without asking (False for Sail), else None.
        session: Keeps one connection open around ``run_with_settings``'s statements, so the
            settings and the statement share a session (e.g. dbt's connection on a worker
            thread, which otherwise opens and closes a connection per statement).
        isolated: Runs ``run_with_settings``'s statement on a session of its own, whose
            settings ``conf`` then holds (``StatementSession``); None: on ``execute``'s.
    """

    def __init__(
        self,
        execute: Callable[[str], Rows],
        *,
        where: str,
        key: Any = None,
        names: Mapping[str, str] | None = None,
        conf: Any = None,
        has_delta: bool | None = None,
        session: Callable[[], AbstractContextManager[Any]] | None = None,
        isolated: Callable[[str], Rows] | None = None,
    ) -> None:
        self._execute = execute
        self._isolated = isolated
        self._session = session
        self.where = where
        self._key = key
        self._answer: list[bool | None] = [has_delta]  # shared with ``named`` copies
        self._known = has_delta
        self.names = dict(names or {})
        self._conf = conf
        if key is None:
            self._settings_lock = threading.RLock()
        else:
            with runtime.DELTA_SQL.lock:  # one settings lock per engine, process-wide
                locks = runtime.DELTA_SQL.value.settings_locks
                self._settings_lock = locks.setdefault(key, threading.RLock())

    def named(self, names: Mapping[str, str]) -> DeltaSql:
        """The same engine (and answer) with tables named as the caller's catalog knows them.

        Args:
            names: Table location to SQL name (e.g. ``shop.fct_orders``).

        Returns:
            A ``DeltaSql`` sharing this one's engine, cached answer and settings lock.
        """
        copy = DeltaSql(
            self._execute,
            where=self.where,
            key=self._key,
            names=names,
            conf=self._conf,
            has_delta=self._known,
            session=self._session,
            isolated=self._isolated,
        )
        copy._answer = self._answer
        copy._settings_lock = self._settings_lock
        return copy

    @classmethod
    def forget_answers(cls) -> None:
        """Forget every engine's cached answer (the next ``has_delta`` asks again)."""
        with runtime.DELTA_SQL.lock:
            runtime.DELTA_SQL.value.answers.clear()

    def table(self, location: str) -> str:
        """How a statement names the table at ``location``.

        Args:
            location: The table location.

        Returns:
            Its catalog name when known, else ``delta.`<location>```.
        """
        name = self.names.get(location)
        if name is not None:
            return name
        return "delta.`" + location.replace("`", "``") + "`"

    def execute(self, statement: str) -> Rows:
        """Run one statement.

        Args:
            statement: The SQL statement.

        Returns:
            Its rows as dicts.
        """
        log.debug("Delta SQL on %s: %s", self.where, statement)
        return self._execute(statement)

    def has_delta(self, location: str) -> bool:
        """Whether the engine has Delta's SQL (asked once per engine, on a Delta table).

        Args:
            location: A Delta table the engine can read (the probe reads its latest commit).

        Returns:
            True when the engine answered the probe, False when it could not parse it.

        Raises:
            EngineError: When the probe failed for another reason (no such table, no access,
                the engine unreachable): whether the engine has Delta is then unknown, and
                nothing is cached.
        """
        if self._known is not None:
            return self._known
        shared = runtime.DELTA_SQL
        with shared.lock:
            known = self._answer[0] if self._key is None else shared.value.answers.get(self._key)
        if known is not None:
            return known
        table = self.table(location)
        try:
            self.execute(PROBE.format(table=table))
            answer = True
        except Exception as err:  # every client raises its own types for a refused statement
            if not says_no_delta(err):
                raise EngineError(
                    f"cannot tell whether {self.where} has Delta's SQL: 'DESCRIBE HISTORY "
                    f"{table}' failed: {_first_line(err)}. Nothing was run; fix the access to "
                    "the table (or its name) and run again."
                ) from err
            _say_no_delta(self.where, err)
            answer = False
        with shared.lock:
            self._answer[0] = answer
            if self._key is not None:
                shared.value.answers[self._key] = answer
        return answer

    def run_with_settings(self, statement: str, settings: Mapping[str, str | None]) -> Rows:
        """Run one statement with session settings that hold for it only.

        Each setting is read, set (None: unset) and, after the statement (also when it fails),
        restored: to its previous value, or unset when it had none. The engine's settings lock
        is held throughout, and the connection (``session``) kept open.

        Args:
            statement: The SQL statement.
            settings: Setting name to value (None: unset while the statement runs).

        Returns:
            The statement's rows.

        Raises:
            EngineError: When a setting cannot be read, set or restored, or the statement
                fails (the engine's error chained).
        """
        with self._settings_lock, self._session() if self._session else nullcontext():
            previous: dict[str, str | None] = {}
            try:
                for key, value in settings.items():
                    previous[key] = self._get_setting(key)
                    self._put_setting(key, value)
            except MaintenanceError:  # ours already (a deferred start of the local writer)
                self._restore(previous, failed=True)
                raise
            except Exception as err:
                self._restore(previous, failed=True)
                raise EngineError(f"cannot set {key} on {self.where}: {_first_line(err)}") from err
            try:
                if self._isolated is not None:
                    log.debug("Delta SQL on %s (own session): %s", self.where, statement)
                    rows = self._isolated(statement)
                else:
                    rows = self.execute(statement)
            except MaintenanceError:  # ours already (a deferred start, the local writer's)
                self._restore(previous, failed=True)
                raise
            except Exception as err:  # the engine's own error, named: never a traceback
                self._restore(previous, failed=True)
                raise EngineError(
                    f"{self.where} failed the statement {statement[:200]!r}: {_first_line(err)}"
                ) from err
            self._restore(previous, failed=False)
            return rows

    def _restore(self, previous: Mapping[str, str | None], *, failed: bool) -> None:
        problems = []
        for key, value in previous.items():
            try:
                self._reset_setting(key, value)
            except Exception as err:  # keep restoring the others
                problems.append(f"{key} ({_first_line(err)})")
        if problems and not failed:
            raise EngineError(
                f"the statement ran on {self.where}, but these session settings could not be "
                f"restored: {', '.join(problems)}"
            )
        if problems:
            log.error("session settings not restored on %s: %s", self.where, problems)

    def _get_setting(self, key: str) -> str | None:
        if self._conf is not None:
            value = self._conf.get(key, None)
            return None if value is None else str(value)
        rows = self.execute(f"SET {key}")
        value = next((r.get("value") for r in rows if r.get("key") == key), None)
        return None if value is None or value == _UNDEFINED else str(value)

    def _put_setting(self, key: str, value: str | None) -> None:
        if self._conf is not None:
            if value is None:
                self._conf.unset(key)
            else:
                self._conf.set(key, value)
        elif value is None:
            self.execute(f"RESET {key}")
        else:
            self.execute(f"SET {key}={value}")

    def _reset_setting(self, key: str, previous: str | None) -> None:
        if self._conf is not None:
            self._put_setting(key, previous)
            return
        # Over SQL "not set" and "set to the default" look alike (SET shows the default):
        # RESET returns the key to the session's initial value; set it again if that differs.
        self.execute(f"RESET {key}")
        if previous is not None and self._get_setting(key) != previous:
            self.execute(f"SET {key}={previous}")


class StatementSession:
    """A session of its own over a Spark session's engine, for Delta's statements with settings.

    dbt's threads share one ``SparkSession`` (``mode: local`` / ``attach``): settings set on its
    ``spark.conf`` for our OPTIMIZE (``optimize.*``, the ``userMetadata`` marker) would hold
    for every other thread's statement in that window, whatever lock orders our own calls. A
    session of its own has its own SQL conf by construction: classic Spark's ``newSession()``
    (the same SparkContext, catalog and cache), Spark Connect's ``cloneSession()`` (a
    server-side session of its own). Made on first use, once.

    Args:
        spark: The shared ``SparkSession`` (classic or Connect).
    """

    def __init__(self, spark: Any) -> None:
        self._spark = spark
        self._own: Any = None
        self._lock = threading.Lock()
        self.conf = _OwnConf(self)

    @property
    def session(self) -> Any:
        """The session of its own (made now on first use).

        Raises:
            EngineError: When the engine cannot make one: nothing was run.
        """
        with self._lock:
            if self._own is None:
                connect = type(self._spark).__module__.startswith("pyspark.sql.connect")
                try:
                    if connect:  # the server knows a session from its first request on
                        self._spark.conf.get("spark.sql.session.timeZone", None)
                    self._own = self._spark.cloneSession() if connect else self._spark.newSession()
                    if connect:  # runs before the clone's own exit handler (atexit is LIFO)
                        atexit.register(_close_clone_of_stopped, self._spark, self._own)
                except Exception as err:  # each client raises its own types
                    raise EngineError(
                        f"cannot open a session of its own on {_describe_session(self._spark)} "
                        f"for Delta's statements ({_first_line(err)}); nothing was run. Their "
                        "settings must not reach other threads' statements on the shared session."
                    ) from err
            return self._own

    def execute(self, statement: str) -> Rows:
        """Run one statement on the session of its own; its rows as dicts."""
        return [row.asDict(recursive=True) for row in self.session.sql(statement).collect()]


def _close_clone_of_stopped(parent: Any, clone: Any) -> None:
    """At exit: close a cloned Connect session whose parent was stopped, without a request.

    A Connect client's own exit handler sends a request to the server (clean its ML cache,
    release the session) and retries it with backoff for minutes when the server is gone; a
    parent stopped before exit (``SailEngine.stop``: client first, then server) had the server
    stopped too, so the clone's channel is only closed. A clone of a live parent is left to
    its own handler, which releases its server-side session.
    """
    try:
        if parent.client.is_closed and not clone.client.is_closed:
            clone.client.close()
    except Exception:  # an exit handler must not raise
        log.debug("could not close a cloned Spark Connect session at exit", exc_info=True)


class _OwnConf:
    """``spark.conf`` of a ``StatementSession``'s session (``get``/``set``/``unset``)."""

    def __init__(self, owner: StatementSession) -> None:
        self._owner = owner

    def get(self, key: str, default: Any = None) -> Any:
        return self._owner.session.conf.get(key, default)

    def set(self, key: str, value: str) -> None:
        self._owner.session.conf.set(key, value)

    def unset(self, key: str) -> None:
        self._owner.session.conf.unset(key)


def session_sql(spark: Any) -> DeltaSql:
    """Delta SQL on a Spark session (classic or Connect); one per session, answer cached.

    A session of the embedded Sail engine (``mark_no_delta_sql``) is known to have no Delta
    SQL: it is never probed (and a ``LazySession`` is not started by asking).

    Args:
        spark: A ``SparkSession`` (or a ``LazySession``).

    Returns:
        The session's ``DeltaSql``.
    """
    shared = runtime.DELTA_SQL
    with shared.lock:
        found: DeltaSql | None = shared.value.per_session.get(spark)
        if found is None:
            if spark in shared.value.no_delta:

                def execute(statement: str) -> Rows:
                    return [row.asDict(recursive=True) for row in spark.sql(statement).collect()]

                found = DeltaSql(execute, where="the embedded Sail engine", has_delta=False)
            else:

                def execute(statement: str) -> Rows:
                    return [row.asDict(recursive=True) for row in spark.sql(statement).collect()]

                own = StatementSession(spark)  # settings and their statement only
                found = DeltaSql(
                    execute, where=_describe_session(spark), conf=own.conf, isolated=own.execute
                )
            shared.value.per_session[spark] = found
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
