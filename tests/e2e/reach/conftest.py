"""Real JVM Spark servers with Delta for the reach tests, one of each per test run."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.helpers.shared_servers import shared_server
from tests.helpers.spark_servers import SparkServer, start_thrift_server


@pytest.fixture(scope="session")
def thrift_server(
    tmp_path_factory: pytest.TempPathFactory, worker_id: str
) -> Iterator[SparkServer]:
    """A Spark Thrift Server with Delta on 127.0.0.1, one for all xdist workers."""
    yield from shared_server("thrift-server", tmp_path_factory, worker_id, start_thrift_server)


@pytest.fixture(scope="session")
def connect_server(delta_server: SparkServer) -> SparkServer:
    """The JVM Spark Connect server with Delta (one per test run, shared with the oracle)."""
    return delta_server
