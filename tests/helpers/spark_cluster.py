"""A real multi-process Spark cluster for tests, from the pip-installed pyspark package.

``local-cluster[2,1,1024]``: a standalone master and two workers inside the driver's JVM, each
worker launching its executor as a separate JVM (``CoarseGrainedExecutorBackend``), whose Python
workers (``pyspark.daemon``) run the tasks. The driver runs in ``cluster_worker``, a child process
of the test (classic Spark cannot share a process that has used Spark Connect), which answers
JSON requests on stdin/stdout.

The pip package works as ``SPARK_HOME`` except that workers write their ``work/`` directory (the
executors' logs) into it, so ``SPARK_HOME`` is a temporary directory of links to the package's
``bin``, ``jars``, ``python`` and ``sbin``. ``PYSPARK_PYTHON`` must be this interpreter: the
executors would start ``python3`` from the PATH otherwise (``ModuleNotFoundError: No module
named 'pyarrow'`` in the tasks).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from tests.helpers.classic import classic_env
from tests.helpers.paths import ROOT

MASTER = "local-cluster[2,1,1024]"
EXECUTOR_CLASS = "org.apache.spark.executor.CoarseGrainedExecutorBackend"


def spark_home(target: Path) -> Path:
    """A ``SPARK_HOME`` of links to the installed pyspark package, with its own ``work/``."""
    import pyspark

    package = Path(pyspark.__file__).parent
    target.mkdir(parents=True, exist_ok=True)
    for name in ("bin", "jars", "python", "sbin"):
        if (package / name).exists() and not (target / name).exists():
            (target / name).symlink_to(package / name)
    return target


@dataclass(frozen=True)
class Proc:
    """One process of an ancestry chain, read from /proc."""

    pid: int
    ppid: int
    argv: tuple[str, ...]

    @property
    def is_executor(self) -> bool:
        return EXECUTOR_CLASS in self.argv

    def describe(self) -> str:
        """``pid program`` in a few words: the main class of a JVM, the module of a Python."""
        name = Path(self.argv[0]).name if self.argv else "?"
        if name == "java":
            main = next((a for a in self.argv if a.startswith("org.apache.spark.")), "")
            rest = f" --executor-id {self.executor_id}" if self.is_executor else ""
            return f"{self.pid} java {main}{rest}"
        return f"{self.pid} {name} {' '.join(self.argv[1:3])}".rstrip()

    @property
    def executor_id(self) -> str | None:
        argv = list(self.argv)
        return argv[argv.index("--executor-id") + 1] if "--executor-id" in argv else None


def ancestry(pid: int) -> list[Proc]:
    """``pid`` and its ancestors up to (not including) init, from /proc (Linux)."""
    chain = []
    while pid > 1:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
        status = Path(f"/proc/{pid}/status").read_text()
        ppid = int(next(x for x in status.splitlines() if x.startswith("PPid:")).split()[1])
        chain.append(Proc(pid, ppid, tuple(a.decode() for a in raw.split(b"\0") if a)))
        pid = ppid
    return chain


class ClusterDriver:
    """The driver process on the local cluster: ``call`` runs VACUUM there."""

    def __init__(self, home: Path, log: IO[str]) -> None:
        env = {
            **classic_env(),
            "SPARK_HOME": str(home),
            "PYSPARK_PYTHON": sys.executable,
            "PYSPARK_DRIVER_PYTHON": sys.executable,
            "SPARK_LOCAL_IP": "127.0.0.1",
        }
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.helpers.cluster_worker", MASTER],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            env=env,
            start_new_session=True,  # its JVMs are stopped with it, whatever happens
        )
        line = self._read()
        if "ready" not in line:
            raise RuntimeError(f"the cluster driver did not start: {line}")
        self.ready: dict[str, Any] = line["ready"]

    def _read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the cluster driver exited with {self.process.wait()}")
        reply: dict[str, Any] = json.loads(line)
        return reply

    def call(self, table: str, **kwargs: Any) -> dict[str, Any]:
        """Run ``vacuum(table, spark=<cluster session>, **kwargs)``; the reply as a dict."""
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({"table": table, "kwargs": kwargs}) + "\n")
        self.process.stdin.flush()
        return self._read()

    def stop(self) -> None:
        """Stop the session (it stops the cluster), then the process group if anything is left."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(timeout=60)
        finally:
            with suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)


@contextmanager
def local_cluster(workdir: Path) -> Iterator[ClusterDriver]:
    """A two-executor local cluster and its driver, stopped on exit (logs in ``workdir``)."""
    home = spark_home(workdir / "spark-home")
    with open(workdir / "driver.log", "w") as log:
        driver = ClusterDriver(home, log)
        try:
            yield driver
        finally:
            driver.stop()
