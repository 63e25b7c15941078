"""The reach scenario on the embedded engine (Sail in the dbt process), for comparison.

Build and maintenance in this process; the incremental rebuild in a new one, where the catalog
journal re-registers the tables. OPTIMIZE goes to delta-rs (Sail has no Delta OPTIMIZE).
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

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scenario]:
    from dbt.adapters.sparkdelta.engines import shutdown_engines

    project, lake = write_project(tmp_path_factory.mktemp("reach-sail"), "sail")
    shutdown_engines()
    s = run_scenario("sail", project, lake, first=in_process, later=new_process())
    print(f"\nsail: build {s.build.seconds:.1f} s + maintain_all {s.maintain.seconds:.1f} s")
    yield s
    shutdown_engines()


def test_build(scenario: Scenario) -> None:
    check_build(scenario)


def test_incremental_rebuild_in_a_new_process_merges(scenario: Scenario) -> None:
    check_incremental_merge(scenario)


def test_clustered_model(scenario: Scenario) -> None:
    check_clustering(scenario, clustered=False)


def test_maintain_all(scenario: Scenario) -> None:
    check_maintain_all(scenario, delta_sql=None)


def test_maintenance_report(scenario: Scenario) -> None:
    check_report(scenario)
