"""Real JVM Spark servers with Delta for the reach tests, one of each per test session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.helpers.spark_servers import SparkServer, start_thrift_server


@pytest.fixture(scope="session")
def thrift_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkServer]:
    """A Spark Thrift Server with Delta on 127.0.0.1 for this test session."""
    server = start_thrift_server(tmp_path_factory.mktemp("thrift-server"))
    yield server
    server.stop()


@pytest.fixture(scope="session")
def connect_server(delta_server: SparkServer) -> SparkServer:
    """The JVM Spark Connect server with Delta (one per test run, shared with the oracle)."""
    return delta_server
