"""One JVM server per test run, shared by every pytest-xdist worker.

Each worker is a process of its own, so a session-scoped server fixture would start one JVM per
worker: on two cores a second Delta server costs the run its start and minutes of JIT warm-up.
``shared_server`` starts the server in the first worker that needs it (holding a lock in the
run's common temporary directory) and records its process and ports there; the other workers
attach to it. The server outlives the worker that started it, since the other may still use
it: the xdist controller stops every recorded server when the run ends
(``stop_shared_servers``, called from ``tests.helpers.xdist_scheduling``). Without xdist the
fixture starts and stops its own server as before.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.helpers.spark_servers import SparkServer

RECORD = "server.json"


def shared_server(
    name: str,
    tmp_path_factory: pytest.TempPathFactory,
    worker_id: str,
    start: Callable[[Path], SparkServer],
) -> Iterator[SparkServer]:
    """Yield the run's server called ``name``, starting it where none runs yet.

    Args:
        name: The server's name (one per kind).
        tmp_path_factory: pytest's factory (the run's common directory is its base's parent).
        worker_id: The xdist worker id (``master`` without xdist).
        start: Starts a server in the given working directory.

    Yields:
        The server (attached ones share the starter's process id, ports and directory).
    """
    if worker_id == "master":
        server = start(tmp_path_factory.mktemp(name))
        yield server
        server.stop()
        return
    root = tmp_path_factory.getbasetemp().parent / f"shared-{name}"
    root.mkdir(exist_ok=True)
    with (root / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        record = root / RECORD
        if record.exists():
            server = SparkServer.attached(json.loads(record.read_text()))
        else:
            server = start(root / "work")
            record.write_text(json.dumps(server.record()))
    yield server  # stopped by the controller once every worker is done (stop_shared_servers)


def stop_shared_servers(base: Path) -> list[int]:
    """Stop every server recorded under the run's directory ``base`` (SIGTERM, then SIGKILL).

    Args:
        base: The run's common temporary directory.

    Returns:
        The process ids stopped.
    """
    stopped = []
    for record in sorted(base.glob(f"shared-*/{RECORD}")):
        pid = int(json.loads(record.read_text())["pid"])
        try:
            os.killpg(pid, signal.SIGTERM)
        except ProcessLookupError:
            continue
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(0.2)
        if _alive(pid):
            os.killpg(pid, signal.SIGKILL)
        stopped.append(pid)
    return stopped


def _alive(pid: int) -> bool:
    try:
        os.killpg(pid, 0)
    except ProcessLookupError:
        return False
    return True
