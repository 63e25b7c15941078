"""Real JVM Spark servers from the installed pyspark, on 127.0.0.1, for the reach tests.

``start_thrift_server`` runs the Spark Thrift Server (HiveServer2 protocol, what dbt-spark's
``thrift`` method talks to), ``start_connect_server`` the Spark Connect server; both through the
package's own ``bin/spark-submit`` with a local master, a Derby metastore and a warehouse in the
given directory, so nothing outside it is touched. Both load Delta Lake from the project's
pinned jars (``python_ops.delta_jars``; the setup fetches them) unless asked not to: Delta's SQL
extension and catalog, so ``USING delta``, ``MERGE``, ``OPTIMIZE``, ``VACUUM`` and ``DESCRIBE
HISTORY`` are Delta's own. The Delta Connect plugin (Delta's ``DeltaTable`` API over Connect) is
not loaded: ``io.delta:delta-connect-server_4.2_2.13`` is not on Maven Central; SQL is all the
project sends.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

THRIFT_CLASS = "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2"
CONNECT_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class SparkServer:
    """A running server: its process, ports and log."""

    process: subprocess.Popen[bytes] | None  # None: another process started it
    port: int
    ui_port: int
    log: Path
    workdir: Path
    start_s: float
    pid: int = 0

    def __post_init__(self) -> None:
        if self.process is not None:
            self.pid = self.process.pid

    def record(self) -> dict[str, Any]:
        """What another process needs to use this server (``attached``)."""
        return {
            "pid": self.pid,
            "port": self.port,
            "ui_port": self.ui_port,
            "log": str(self.log),
            "workdir": str(self.workdir),
            "start_s": self.start_s,
        }

    @classmethod
    def attached(cls, record: dict[str, Any]) -> SparkServer:
        """A server another process started and stops (from its ``record``)."""
        return cls(
            None,
            int(record["port"]),
            int(record["ui_port"]),
            Path(record["log"]),
            Path(record["workdir"]),
            float(record["start_s"]),
            int(record["pid"]),
        )

    def stop(self) -> None:
        """SIGTERM to the server's process group, SIGKILL after 30 s (not for attached ones)."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)

    def ui(self, path: str, *, timeout_s: float = 10) -> Any:
        """GET from the server's Spark UI REST API (``/api/v1/applications/<app>/<path>``).

        A 404 is asked again (at most 5 times): Spark answers "no such app" (404) for any
        ``NoSuchElementException`` while it builds the answer, which is what the SQL listing
        meets when another client's executions make the UI drop old ones (its
        ``spark.sql.ui.retainedExecutions``) between listing an execution and reading its plan.
        """
        base = f"http://127.0.0.1:{self.ui_port}/api/v1/applications"
        with urllib.request.urlopen(base, timeout=timeout_s) as response:
            app = json.load(response)[0]["id"]
        for attempt in range(5):
            try:
                with urllib.request.urlopen(f"{base}/{app}/{path}", timeout=timeout_s) as response:
                    return json.load(response)
            except urllib.error.HTTPError as err:
                if err.code != 404 or attempt == 4:
                    raise
                time.sleep(0.5)
        raise AssertionError("unreachable")

    def log_text(self) -> str:
        """The server's output so far."""
        return self.log.read_text(errors="replace")


def _spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def _delta_args(delta: bool) -> list[str]:
    if not delta:
        return []
    from python_ops.delta_jars import LOCAL_CONF, require_delta_jars, spark_submit_args

    args = spark_submit_args(require_delta_jars())
    for key, value in LOCAL_CONF.items():
        if key != "spark.ui.enabled":  # the tests read the server's UI
            args += ["--conf", f"{key}={value}"]
    return args


# What a server's log says when a port ``free_port`` handed out was taken before the server
# bound it (another process on the machine got it first; Connect's gRPC port has no retries).
_PORT_TAKEN = ("java.net.BindException", "Address already in use", "spark.port.maxRetries")


def _start(
    main_class: str,
    workdir: Path,
    args: list[str],
    ready: str,
    *,
    delta: bool = True,
    long_lived: bool = False,
) -> SparkServer:
    """Start the server, again on fresh ports (at most 3 tries) when a port was taken."""
    if shutil.which("java") is None:
        pytest.skip("needs Java (the JVM Spark servers run on it)")
    workdir.mkdir(parents=True, exist_ok=True)
    for attempt in range(3):
        try:
            return _start_once(main_class, workdir, args, ready, delta=delta, long_lived=long_lived)
        except _PortTaken:
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


class _PortTaken(RuntimeError):
    """The server exited because one of its ports was taken by another process."""


def _start_once(
    main_class: str, workdir: Path, args: list[str], ready: str, *, delta: bool, long_lived: bool
) -> SparkServer:
    home = _spark_home()
    port, ui_port = free_port(), free_port()
    command = [
        str(home / "bin" / "spark-submit"),
        "--master",
        "local[2]",
        "--class",
        main_class,
        "--conf",
        "spark.driver.host=127.0.0.1",
        "--conf",
        "spark.driver.bindAddress=127.0.0.1",
        "--conf",
        f"spark.ui.port={ui_port}",
        "--conf",
        f"spark.sql.warehouse.dir={workdir / 'spark-warehouse'}",
        "--conf",
        f"spark.driver.extraJavaOptions=-Dderby.system.home={workdir}",
        "--conf",
        "spark.sql.shuffle.partitions=2",
        *_delta_args(delta),
        *[a.format(port=port, workdir=workdir) for a in args],
    ]
    connect_switches = ("SPARK_CONNECT_MODE_ENABLED", "SPARK_REMOTE")
    env = {k: v for k, v in os.environ.items() if k not in connect_switches}
    env.update(SPARK_HOME=str(home), SPARK_LOCAL_IP="127.0.0.1")
    if long_lived:  # the JVM's full JIT: the tests' C1-only setting (tests/conftest.py) is not
        # for a server that runs Delta for the whole test run (the oracle's setup doubled)
        opts = env.get("SPARK_SUBMIT_OPTS", "").split()
        env["SPARK_SUBMIT_OPTS"] = " ".join(o for o in opts if "TieredStopAtLevel" not in o)
    log = workdir / "server.log"
    started = time.perf_counter()
    with log.open("wb") as out:
        process = subprocess.Popen(
            command,
            cwd=workdir,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
    server = SparkServer(process, port, ui_port, log, workdir, 0.0)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if process.poll() is not None:
            text = server.log_text()
            error = _PortTaken if any(sign in text for sign in _PORT_TAKEN) else RuntimeError
            raise error(f"{main_class} exited with {process.returncode}:\n{log_text(log)}")
        if ready in server.log_text():
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    server.start_s = time.perf_counter() - started
                    return server
        time.sleep(0.25)
    server.stop()
    raise RuntimeError(f"{main_class} did not start within 180 s:\n{log_text(log)}")


def log_text(log: Path) -> str:
    """The last 3,000 characters of a log file."""
    return log.read_text(errors="replace")[-3000:] if log.exists() else ""


def start_thrift_server(workdir: Path, *, delta: bool = True) -> SparkServer:
    """The Spark Thrift Server on 127.0.0.1 (auth NONE: SASL PLAIN, any user), with Delta."""
    return _start(
        THRIFT_CLASS,
        workdir,
        [
            "spark-internal",
            "--hiveconf",
            "hive.server2.thrift.bind.host=127.0.0.1",
            "--hiveconf",
            "hive.server2.thrift.port={port}",
            "--hiveconf",
            "javax.jdo.option.ConnectionURL=jdbc:derby:;databaseName={workdir}/metastore_db;"
            "create=true",
        ],
        ready="HiveThriftServer2 started",
        delta=delta,
    )


def start_connect_server(
    workdir: Path, *, delta: bool = True, long_lived: bool = False
) -> SparkServer:
    """The Spark Connect server on 127.0.0.1, with Delta.

    Args:
        workdir: Its working directory (warehouse, metastore, log).
        delta: Load Delta's jars.
        long_lived: Full JIT (see ``_start``): for the server shared by the whole test run.
    """
    return _start(
        CONNECT_CLASS,
        workdir,
        [
            "--conf",
            "spark.connect.grpc.binding.address=127.0.0.1",
            "--conf",
            "spark.connect.grpc.binding.port={port}",
        ],
        ready="Spark Connect server started",
        delta=delta,
        long_lived=long_lived,
    )
