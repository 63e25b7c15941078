"""The reach scenario on ``mode: local``: classic local Spark with Delta in the dbt process.

Every dbt command runs in a process of its own (classic Spark cannot share the test process
with Spark Connect): the adapter starts ``local[*]`` Spark with the project's Delta jars and
Spark's own catalog (Derby metastore in the warehouse), so the rebuild in a new process finds
the tables there, with no catalog journal. OPTIMIZE is Delta's own (``OPTIMIZE ... ZORDER BY``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from python_ops.errors import EngineError
from tests.e2e.reach.project import (
    Scenario,
    check_build,
    check_clustering,
    check_incremental_merge,
    check_maintain_all,
    check_report,
    new_process,
    run_scenario,
    write_project,
)

# two dbt processes, each starting a JVM: minutes on a busy 2-core machine
pytestmark = [pytest.mark.slow, pytest.mark.classic_spark, pytest.mark.timeout(2400)]


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Scenario:
    from python_ops.delta_jars import require_delta_jars

    require_delta_jars()  # a missing jar fails here, with the command that fetches it
    project, lake = write_project(tmp_path_factory.mktemp("reach-local"), "local")
    s = run_scenario(
        "local", project, lake, first=new_process(), later=new_process(), maintain_in_later=True
    )
    print(f"\nlocal: build {s.build.seconds:.1f} s + maintain_all {s.maintain.seconds:.1f} s")
    return s


def test_build(scenario: Scenario) -> None:
    check_build(scenario)
    # Spark's own catalog, in the warehouse: the Derby metastore and its log
    assert (scenario.lake / "metastore_db").is_dir()
    assert (scenario.lake / "derby.log").is_file()
    assert not (scenario.lake / "_sparkdelta_catalog.json").exists()


def test_incremental_rebuild_in_a_new_process_merges(scenario: Scenario) -> None:
    check_incremental_merge(scenario)


def test_clustered_model(scenario: Scenario) -> None:
    check_clustering(scenario, clustered=True)


def test_maintain_all(scenario: Scenario) -> None:
    check_maintain_all(scenario, delta_sql="Delta OPTIMIZE (SQL) on the classic Spark session")


def test_maintenance_report(scenario: Scenario) -> None:
    check_report(scenario)


def test_missing_jars_say_how_to_fetch_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dbt.adapters.sparkdelta.engines import get_engine

    monkeypatch.setenv("SPARKDELTA_DELTA_JARS", str(tmp_path / "no-jars-here"))
    with pytest.raises(EngineError, match=r"run `python -m python_ops jars fetch`"):
        get_engine(mode="local", warehouse=str(tmp_path / "warehouse"), connect_url=None)


def test_a_process_that_uses_spark_connect_is_refused_before_spark_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dbt.adapters.sparkdelta.engines import get_engine

    monkeypatch.setenv("SPARK_CONNECT_MODE_ENABLED", "1")
    with pytest.raises(EngineError, match="in a process of its own"):
        get_engine(mode="local", warehouse=str(tmp_path / "warehouse"), connect_url=None)
