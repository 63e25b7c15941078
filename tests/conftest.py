"""Fixtures of every tier: copies of the shared Delta fixtures, engines, the local S3 server.

The tiers (``unit/``, ``integration/``, ``e2e/``; ``adapter/`` is dbt's adapter suite) add their
own in their ``conftest.py``. Engine and server fixtures are lazy: a test that does not ask for
one starts nothing.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.classic import classic_env
from tests.helpers.paths import ROOT, shared_table

# Every JVM the tests start (local sessions, spark-submit, the classic workers, the reach
# servers, the local Delta writer) compiles with C1 only: they live seconds to minutes on small
# tables, where C2's compile work is spent and never paid back. Measured on a small Delta job
# under spark-submit (create, 4 inserts, MERGE, OPTIMIZE, VACUUM DRY RUN): about 55 instead of
# 96 CPU-s; in CI the spark-submit scenario went from 220 to 130 s. Not the Delta server the
# oracle uses for the whole run (``delta_server``): under C1 its module setup went from 349 to
# 619 s. spark-submit reads SPARK_SUBMIT_OPTS; it is not a setting of the project, which leaves
# the JVM's defaults to its users.
# C1 alone also shrinks the JVM's default code cache from 240 to 48 MB: a Thrift server that ran
# the reach scenarios filled it and failed statements with "VirtualMachineError: Out of space in
# CodeCache for adapters". The cache keeps the tiered default (reserved, not resident, memory).
_QUICK_JIT = "-XX:TieredStopAtLevel=1"
_CODE_CACHE = "-XX:ReservedCodeCacheSize=240m"
# And every test JVM, the oracle's Delta server too, evaluates queries without generating and
# compiling Java code for each (Spark's interpreted mode, which its own test suite runs as well):
# on tables of a few rows, compiling a plan costs more than running it. Spark takes ``spark.*``
# JVM properties as settings. The Delta-backed LITE tests: 200 -> 158 CPU-s (117 -> 93 s); the
# spark-submit and Delta-writer tests: 267 -> 230 CPU-s.
_NO_CODEGEN = (
    "-Dspark.sql.codegen.wholeStage=false",
    "-Dspark.sql.codegen.factoryMode=NO_CODEGEN",
)


def pytest_configure(config: pytest.Config) -> None:
    """Ask every test JVM for C1-only JIT (``_QUICK_JIT``) and no code generation."""
    opts = os.environ.get("SPARK_SUBMIT_OPTS", "").split()
    if not any("TieredStopAtLevel" in o for o in opts):
        opts.append(_QUICK_JIT)
        if not any("ReservedCodeCacheSize" in o for o in opts):
            opts.append(_CODE_CACHE)
    if not any("spark.sql.codegen" in o for o in opts):
        opts.extend(_NO_CODEGEN)
    os.environ["SPARK_SUBMIT_OPTS"] = " ".join(opts)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """With ``PYTEST_TIMELINE=<file>``: one JSON line per test phase (worker, outcome, times).

    What the suite's wall time is made of, per xdist worker (docs/development.md, CI time).
    """
    timeline = os.environ.get("PYTEST_TIMELINE")
    # xdist's controller hears every worker's reports again (``report.node``): the worker wrote it
    if timeline and getattr(report, "node", None) is None:
        line = {
            "worker": os.environ.get("PYTEST_XDIST_WORKER", "master"),
            "test": report.nodeid,
            "when": report.when,
            "outcome": report.outcome,
            "start": report.start,
            "stop": report.stop,
        }
        with open(timeline, "a") as out:
            out.write(json.dumps(line) + "\n")


@pytest.fixture
def fixture_table(tmp_path: Path) -> Callable[[str], Path]:
    """Copy a table from ../shared/fixtures into a temp dir (never touch the originals).

    The test skips when the shared fixtures are absent.
    """

    def copy(name: str) -> Path:
        target = tmp_path / name
        shutil.copytree(shared_table(name), target)
        return target

    return copy


@pytest.fixture
def fresh_engines() -> Iterator[None]:
    """Stop every engine after the test, so the next one starts with an empty Sail catalog."""
    from dbt.adapters.sparkdelta.engines import shutdown_engines

    shutdown_engines()
    yield
    shutdown_engines()


@pytest.fixture(scope="session")
def sail_server() -> Iterator[str]:
    """A standalone Sail Spark Connect server for this test session (for attach mode)."""
    from pysail.spark import SparkConnectServer

    server = SparkConnectServer(ip="127.0.0.1", port=0)
    server.start(background=True)
    address = server.listening_address
    assert address is not None
    yield f"sc://{address[0]}:{address[1]}"
    server.stop()


@pytest.fixture(scope="session")
def sail_spark() -> Iterator[object]:
    """One embedded Sail session for the whole test run."""
    from python_ops.spark_sessions import SailEngine

    engine = SailEngine()
    yield engine.spark
    engine.stop()


@pytest.fixture(scope="session")
def delta_server(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Iterator[Any]:
    """A JVM Spark Connect server with Delta Lake 4.4 on 127.0.0.1 for the whole test run.

    Delta's own implementation of every op, the oracle the tests hold ours against; also the
    ``mode: attach`` + ``connect_url`` engine of the reach tests. One for all xdist workers
    (``tests.helpers.shared_servers``).
    """
    from tests.helpers.shared_servers import shared_server
    from tests.helpers.spark_servers import start_connect_server

    yield from shared_server(
        "delta-connect-server",
        tmp_path_factory,
        worker_id,
        functools.partial(start_connect_server, long_lived=True),
    )


@pytest.fixture(scope="session")
def delta_spark(delta_server: Any) -> Iterator[Any]:
    """A Spark Connect session on the Delta server (``delta_server``): Delta's own SQL."""
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.remote(f"sc://127.0.0.1:{delta_server.port}").create()
    yield spark
    spark.stop()


@pytest.fixture(scope="session")
def classic_vacuum() -> Iterator[Callable[..., dict[str, Any]]]:
    """Run VACUUM on classic local JVM Spark in one worker process for the whole test run."""
    worker = subprocess.Popen(
        [sys.executable, "-m", "tests.helpers.classic_worker"],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=classic_env(),
    )
    assert worker.stdin is not None
    assert worker.stdout is not None
    ready = json.loads(worker.stdout.readline())
    assert "ready" in ready, ready

    def call(table: str, **kwargs: Any) -> dict[str, Any]:
        assert worker.stdin is not None
        assert worker.stdout is not None
        worker.stdin.write(json.dumps({"table": table, "kwargs": kwargs}) + "\n")
        worker.stdin.flush()
        reply: dict[str, Any] = json.loads(worker.stdout.readline())
        return reply

    yield call
    worker.stdin.close()
    worker.wait(timeout=60)


@pytest.fixture(scope="session")
def moto_endpoint() -> Iterator[str]:
    """moto's S3 server on 127.0.0.1 for the whole test run."""
    from tests.helpers.s3 import start_moto

    process, endpoint = start_moto()
    yield endpoint
    process.terminate()
    process.wait(timeout=10)


@pytest.fixture(scope="session")
def s3proxy_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """S3Proxy (a real S3 API server, Java) on 127.0.0.1 for the whole test run.

    Skips only where Java is absent; a missing jar is an error (the README's test command
    fetches it: scripts/fetch_delta_jars.sh).
    """
    from tests.helpers.s3proxy import java_missing, start_s3proxy

    reason = java_missing()
    if reason:
        pytest.skip(reason)
    process, endpoint = start_s3proxy(tmp_path_factory.mktemp("s3proxy"))
    yield endpoint
    process.terminate()
    process.wait(timeout=10)


S3_SERVERS = ("moto", "s3proxy")


@pytest.fixture
def s3_server(request: pytest.FixtureRequest) -> str:
    """Which S3 server the ``s3`` fixture uses: moto unless a test parametrizes it.

    ``@pytest.mark.parametrize("s3_server", S3_SERVERS, indirect=True)`` runs a test on both.
    """
    return str(getattr(request, "param", "moto"))


@pytest.fixture
def s3(s3_server: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A fresh bucket, with the AWS_* environment pointing at the local S3 server."""
    from tests.helpers.s3 import new_bucket, s3_environment
    from tests.helpers.s3proxy import s3proxy_environment

    endpoint = str(request.getfixturevalue(f"{s3_server}_endpoint"))
    for key in ("AWS_PROFILE", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(key, raising=False)
    extra = s3proxy_environment() if s3_server == "s3proxy" else {}
    for key, value in {**s3_environment(endpoint), **extra}.items():
        monkeypatch.setenv(key, value)
    return new_bucket(endpoint)


# Modules that take minutes on one worker (the Delta oracle over the whole corpus, the engines'
# reach scenarios, the golden matrix): scheduled first, so that the other worker runs the many
# short modules beside them instead of waiting at the end of the run.
LONG_MODULES = (
    "tests/oracle/",
    "tests/integration/test_golden.py",
    "tests/e2e/reach/",
    "tests/e2e/test_main_job.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Long modules first (a stable sort: each module's tests stay together and in order)."""

    def rank(item: pytest.Item) -> int:
        where = str(item.path.relative_to(ROOT)) if item.path.is_relative_to(ROOT) else ""
        return next((i for i, m in enumerate(LONG_MODULES) if where.startswith(m)), 99)

    items.sort(key=rank)
