"""The reach scenario on ``method: session``, ``mode: attach`` to a Spark Connect server with Delta.

The server (``tests.helpers.spark_servers``: the installed pyspark plus the project's Delta jars;
Delta's SQL extension and catalog, not the Delta Connect plugin, which Maven Central does not
have) builds the Delta tables at ``<location_root>/<schema>/<model>`` and keeps them in its Derby
metastore, so the rebuild in a new dbt process MERGEs. VACUUM's selection runs as a DataFrame
program on the server (its Spark UI lists the anti-join); OPTIMIZE is Delta's own SQL there.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.e2e.reach.project import (
    DELTA_MODELS,
    Scenario,
    check_build,
    check_clustering,
    check_incremental_merge,
    check_maintain_all,
    check_report,
    in_process,
    new_process,
    run_scenario,
    write_project,
)
from tests.helpers.spark_servers import SparkServer

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]


def anti_joins(server: SparkServer, after: int = -1) -> tuple[int, int]:
    """SQL executions after execution id ``after`` whose plan has VACUUM's anti-join.

    By id, not by difference of totals: the server is shared by the run's other modules and
    its UI keeps only the newest executions (``spark.sql.ui.retainedExecutions``).

    Returns:
        (their count, the newest execution id).
    """
    executions = server.ui("sql?details=true&planDescription=true&length=100000")
    newest = max((int(e.get("id", -1)) for e in executions), default=-1)
    count = sum(
        1
        for e in executions
        if int(e.get("id", -1)) > after and "LeftAnti" in e.get("planDescription", "")
    )
    return count, newest


@pytest.fixture(scope="module")
def scenario(
    connect_server: SparkServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Scenario, int]]:
    from dbt.adapters.sparkdelta.engines import shutdown_engines

    root = tmp_path_factory.mktemp("reach-connect")
    project, lake = write_project(root, "connect", port=connect_server.port)
    _, before = anti_joins(connect_server)
    s = run_scenario("connect", project, lake, first=in_process, later=new_process())
    print(f"\nconnect: build {s.build.seconds:.1f} s + maintain_all {s.maintain.seconds:.1f} s")
    yield s, anti_joins(connect_server, after=before)[0]
    shutdown_engines()  # the attached Connect client, before the server stops


def test_build(scenario: tuple[Scenario, int]) -> None:
    check_build(scenario[0])


def test_incremental_rebuild_in_a_new_process_merges(scenario: tuple[Scenario, int]) -> None:
    check_incremental_merge(scenario[0])


def test_clustered_model(scenario: tuple[Scenario, int]) -> None:
    check_clustering(scenario[0], clustered=True)


def test_maintain_all(scenario: tuple[Scenario, int]) -> None:
    s, selections = scenario
    check_maintain_all(s, delta_sql="Delta OPTIMIZE (SQL) on Spark Connect")
    # VACUUM's selection ran on the server: an anti-join per VACUUM of a Delta model at least
    assert selections >= len(DELTA_MODELS), selections


def test_maintenance_report(scenario: tuple[Scenario, int]) -> None:
    check_report(scenario[0])
