"""Real JVM Spark servers for the reach tests, one of each per test session (started on use)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.helpers.spark_servers import SparkServer, start_connect_server, start_thrift_server


@pytest.fixture(scope="session")
def thrift_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkServer]:
    """A Spark Thrift Server on 127.0.0.1 (no Delta) for this test session."""
    server = start_thrift_server(tmp_path_factory.mktemp("thrift-server"))
    yield server
    server.stop()


@pytest.fixture(scope="session")
def connect_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkServer]:
    """A JVM Spark Connect server on 127.0.0.1 (no Delta) for this test session."""
    server = start_connect_server(tmp_path_factory.mktemp("connect-server"))
    yield server
    server.stop()
