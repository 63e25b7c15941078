"""Delta's own writer on this machine, started only when a table needs it.

Where delta-rs cannot write a table (deletion vectors, identity columns, in-commit timestamps,
type widening, ...) and the engine has no Delta of its own (the embedded Sail engine, the
command line), Delta 4.4 on a local classic Spark rewrites and checkpoints it. The Spark
runs in a child Python process (``python -m python_ops.delta.writing.local_writer_worker``): classic
Spark cannot start in a process PySpark has switched to Spark Connect (the embedded engine's
dbt process), and a child works the same from the command line. It is started on the first
request (``writer()``), reused for the rest of the run and stopped at exit.

The child answers one JSON request per line: ``sql`` (one statement, its rows) and
``checkpoint`` (Delta's ``DeltaLog.forTable(spark, path).checkpoint()``, JVM API that no SQL
statement reaches). Settings for one statement go through ``SET``/``RESET`` (``DeltaSql``).
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import IO, Any

from python_ops import runtime
from python_ops.delta_jars import find_delta_jars, missing_jars_hint
from python_ops.delta_sql import DeltaSql, Rows
from python_ops.errors import EngineError, JvmDeferredError

log = logging.getLogger(__name__)

WHERE = "Delta 4.4 on a local Spark (started for this run)"
#: ``off`` (or ``0``/``false``/``no``) keeps the local Delta writer from starting: tables only
#: Delta can write are then refused, naming this setting.
LOCAL_DELTA_ENV = "SPARKDELTA_LOCAL_DELTA"
_CONNECT_SWITCHES = ("SPARK_CONNECT_MODE_ENABLED", "SPARK_REMOTE", "SPARK_LOCAL_REMOTE")
#: Why the local writer may not start in this context (None: it may): a post-hook's.
_START_DEFERRED: ContextVar[str | None] = ContextVar("local_delta_start_deferred", default=None)


@contextmanager
def starts_deferred(why: str | None) -> Iterator[None]:
    """Within the block, an op that would start the local writer is deferred instead.

    Args:
        why: The reason the deferral gives (None: starts are allowed, the block changes nothing).
    """
    token = _START_DEFERRED.set(why)
    try:
        yield
    finally:
        _START_DEFERRED.reset(token)


def require_start_allowed() -> None:
    """Raise ``JvmDeferredError`` where a start is deferred and the writer is not running yet.

    Called where an op chooses Delta's writer, before it changes anything, and again before
    the child starts.

    Raises:
        JvmDeferredError: With the context's reason.
    """
    why = _START_DEFERRED.get()
    if why is None:
        return
    running = runtime.LOCAL_WRITER.value
    if running is not None and running.started:  # already paid for: no surprise
        return
    raise JvmDeferredError(why)


def unavailable_reason() -> str | None:
    """Why Delta's local writer cannot start here, or None when it can.

    Returns:
        A sentence naming what is missing (Java, the Delta jars), or None.
    """
    if os.environ.get(LOCAL_DELTA_ENV, "").strip().lower() in ("off", "0", "false", "no"):
        return f"{LOCAL_DELTA_ENV}={os.environ[LOCAL_DELTA_ENV]} turns it off"
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        return "Java is not installed (no java on PATH, JAVA_HOME unset)"
    if find_delta_jars() is None:
        return f"the Delta Lake jars are missing ({missing_jars_hint()})"
    return None


class LocalDelta:
    """A child process running classic local Spark with Delta 4.4; started on first request."""

    def __init__(self) -> None:
        self._process: subprocess.Popen[str] | None = None
        self._stderr: IO[str] | None = None
        self._lock = threading.Lock()
        self.start_seconds: float | None = None

    @property
    def started(self) -> bool:
        """True once the child runs."""
        return self._process is not None

    def _start(self) -> subprocess.Popen[str]:
        require_start_allowed()
        reason = unavailable_reason()
        if reason is not None:
            raise EngineError(f"Delta's local writer cannot start: {reason}")
        env = {k: v for k, v in os.environ.items() if k not in _CONNECT_SWITCHES}
        self._stderr = tempfile.TemporaryFile("w+")  # noqa: SIM115 (kept open for the child's life)
        started = time.perf_counter()
        process = subprocess.Popen(
            [sys.executable, "-m", "python_ops.delta.writing.local_writer_worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            env=env,
        )
        self._process = process
        self._call({"op": "ping"})  # waits for Spark to start
        self.start_seconds = time.perf_counter() - started
        log.info("started %s in %.1f s", WHERE, self.start_seconds)
        return process

    def _call(self, request: dict[str, Any]) -> Any:
        process = self._process
        assert process is not None
        assert process.stdin is not None
        assert process.stdout is not None
        try:
            process.stdin.write(json.dumps(request) + "\n")
            process.stdin.flush()
            line = process.stdout.readline()
        except OSError as err:
            raise EngineError(f"{WHERE} stopped: {err}{self._tail()}") from err
        if not line:
            self._process = None
            raise EngineError(f"{WHERE} exited unexpectedly{self._tail()}")
        answer = json.loads(line)
        if "error" in answer:
            raise EngineError(f"{WHERE}: {answer['error']}")
        return answer.get("result")

    def _tail(self) -> str:
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        lines = [x for x in self._stderr.read().splitlines() if x.strip()][-5:]
        return (": " + " | ".join(lines)) if lines else ""

    def request(self, request: dict[str, Any]) -> Any:
        """Send one request, starting the child first if needed (thread-safe, serialised).

        Args:
            request: ``{"op": "sql", "statement": ...}`` or ``{"op": "checkpoint", "path": ...}``.

        Returns:
            The child's result.

        Raises:
            EngineError: When the child cannot start or the request fails.
        """
        with self._lock:
            if self._process is None:
                self._start()
            return self._call(request)

    def sql(self) -> DeltaSql:
        """Delta's SQL on the local writer (settings through ``SET``/``RESET``).

        Returns:
            A ``DeltaSql`` that starts the child on its first statement.
        """

        def execute(statement: str) -> Rows:
            rows: Rows = self.request({"op": "sql", "statement": statement})
            return rows

        return DeltaSql(execute, where=WHERE, key=("local_delta", id(self)), has_delta=True)

    def checkpoint(self, location: str) -> int:
        """Write a checkpoint of the table at its latest version with Delta.

        Args:
            location: The table location.

        Returns:
            The version checkpointed.

        Raises:
            EngineError: When Delta cannot write it.
        """
        return int(self.request({"op": "checkpoint", "path": location}))

    def stop(self) -> None:
        """Stop the child if it runs (Spark stops with it)."""
        with self._lock:
            process, self._process = self._process, None
        if process is None:
            return
        try:
            assert process.stdin is not None
            process.stdin.close()
            process.wait(timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            process.kill()
            process.wait()


def writer() -> LocalDelta:
    """The process's local Delta writer (not started until its first request).

    Returns:
        The shared ``LocalDelta``; stopped at exit.
    """
    shared = runtime.LOCAL_WRITER
    with shared.lock:
        if shared.value is None:
            shared.value = LocalDelta()
            atexit.register(shared.value.stop)
        started: LocalDelta = shared.value
        return started
