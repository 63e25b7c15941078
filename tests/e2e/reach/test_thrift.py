"""The reach scenario over dbt-spark's ``thrift`` method, on a Spark Thrift Server with Delta.

The server (``tests.helpers.spark_servers``: the installed pyspark plus the project's Delta jars)
builds the Delta tables itself at ``<location_root>/<schema>/<model>``; its Derby metastore keeps
them, so the rebuild in a new dbt process MERGEs. The ops run in the dbt process on the tables'
files; OPTIMIZE is sent over dbt's connection as Delta's own ``OPTIMIZE ... ZORDER BY``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.e2e.reach.project import (
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

pytest.importorskip("pyhive", reason="needs dbt-spark's PyHive extra (pip install -e '.[dev]')")

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]


@pytest.fixture(scope="module")
def scenario(
    thrift_server: SparkServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Scenario]:
    from dbt.adapters.sparkdelta.engines import shutdown_engines
    from python_ops.delta_sql import DeltaSql

    DeltaSql.forget_answers()  # another test may have asked this server already
    root = tmp_path_factory.mktemp("reach-thrift")
    project, lake = write_project(root, "thrift", port=thrift_server.port)
    s = run_scenario("thrift", project, lake, first=in_process, later=new_process())
    print(f"\nthrift: build {s.build.seconds:.1f} s + maintain_all {s.maintain.seconds:.1f} s")
    yield s
    shutdown_engines()


def test_build(scenario: Scenario) -> None:
    check_build(scenario)


def test_incremental_rebuild_in_a_new_process_merges(scenario: Scenario) -> None:
    check_incremental_merge(scenario)


def test_clustered_model(scenario: Scenario) -> None:
    check_clustering(scenario, clustered=True)


def test_maintain_all(scenario: Scenario) -> None:
    check_maintain_all(scenario, delta_sql="Delta OPTIMIZE (SQL)")
    # the statements went over dbt's connection, naming the tables as the catalog knows them
    log = (scenario.project / "logs" / "dbt.log").read_text()
    assert "OPTIMIZE reach.orders" in log, "no OPTIMIZE over dbt's connection"


def test_maintenance_report(scenario: Scenario) -> None:
    check_report(scenario)
