"""The unit tier: fast and engine-free.

No Sail or Spark session, no dbt run, no S3 server, no subprocess. Tests may read the shared
fixture tables (plain files; ``tests.helpers.paths.shared_table`` for the originals, read-only,
or ``fixture_table`` for a copy). The engine and server fixtures of ``tests/conftest.py`` are
replaced here by ones that fail, so a unit test that asks for one is caught at once.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from python_ops.delta.state.snapshot import Snapshot, read_snapshot
from tests.helpers.paths import shared_table


def _no_engine(request: pytest.FixtureRequest) -> None:
    pytest.fail(
        f"{request.fixturename} starts an engine or server: not in tests/unit "
        "(move the test to tests/integration or tests/e2e)"
    )


@pytest.fixture
def sail_spark(request: pytest.FixtureRequest) -> None:
    _no_engine(request)


@pytest.fixture
def sail_server(request: pytest.FixtureRequest) -> None:
    _no_engine(request)


@pytest.fixture
def classic_vacuum(request: pytest.FixtureRequest) -> None:
    _no_engine(request)


@pytest.fixture
def moto_endpoint(request: pytest.FixtureRequest) -> None:
    _no_engine(request)


@pytest.fixture
def s3proxy_endpoint(request: pytest.FixtureRequest) -> None:
    _no_engine(request)


@pytest.fixture
def s3(request: pytest.FixtureRequest) -> None:
    _no_engine(request)


@pytest.fixture
def fresh_engines(request: pytest.FixtureRequest) -> None:
    _no_engine(request)


@pytest.fixture
def shared_snapshot() -> Callable[[str], Snapshot]:
    """The latest snapshot of an original shared fixture table (read only; skips if absent)."""

    def read(name: str) -> Snapshot:
        return read_snapshot(str(shared_table(name)))

    return read
