"""dbt's adapter test suite (``dbt-tests-adapter``) against the embedded engine or local Spark.

The suites' own fixtures (``project``, ``adapter``, ``run_dbt``...) come from
``dbt.tests.fixtures.project``; they are imported here rather than named in ``pytest_plugins``
because pytest only accepts ``pytest_plugins`` in the rootdir's conftest, and this directory also
runs as part of the whole project suite.

Profile: ``type: sparkdelta``, ``method: session``, ``mode: embedded`` (Sail), or ``mode: local``
(classic local Spark with the Delta jars) when ``SPARKDELTA_TEST_ENGINE=local``: classic Spark
cannot share a process with Spark Connect, so that is a pytest run of its own
(``SPARKDELTA_TEST_ENGINE=local pytest tests/adapter``; ``scripts/test.sh`` runs it after the
main run). Every class shares one warehouse (so one engine for the whole run) and gets its own
schema. A test only one engine passes is marked with ``only_on(engine, reason)``. Delta is the
default ``file_format`` of models, seeds, snapshots and stored test failures, as in a real
sparkdelta project; a test that asks for another format (``parquet``) keeps it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from dbt.tests.fixtures.project import *  # noqa: F403  (the suites' fixtures)
from dbt.tests.util import write_file

DELTA_DEFAULTS = ("models", "seeds", "snapshots", "data_tests")
ENGINE_ENV = "SPARKDELTA_TEST_ENGINE"
ENGINES = ("embedded", "local")


def adapter_engine() -> str:
    """The engine this pytest process runs the suite on: ``embedded`` (default) or ``local``."""
    engine = os.environ.get(ENGINE_ENV, "embedded")
    if engine not in ENGINES:
        raise pytest.UsageError(f"{ENGINE_ENV}={engine!r}: use one of {', '.join(ENGINES)}")
    return engine


def only_on(engine: str, reason: str) -> pytest.MarkDecorator:
    """Skip a test on the other engine, saying why it cannot pass there."""
    return pytest.mark.skipif(
        adapter_engine() != engine, reason=f"only on mode: {engine}: {reason}"
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """On local Spark every adapter test needs classic Spark (and is slower)."""
    if adapter_engine() != "local":
        return
    here = os.path.dirname(__file__)
    for item in items:
        if str(item.path).startswith(here):
            item.add_marker(pytest.mark.classic_spark)


@pytest.fixture(scope="class", autouse=True)
def _restore_environment() -> Iterator[None]:
    """Undo the suite's process-wide settings (it exports DBT_PROFILES_DIR) after each class.

    The rest of the project's tests run in the same process and must not inherit them.
    """
    saved = dict(os.environ)
    cwd = os.getcwd()
    yield
    os.environ.clear()
    os.environ.update(saved)
    os.chdir(cwd)


@pytest.fixture(scope="session")
def adapter_warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One warehouse directory for every adapter test of this run."""
    return tmp_path_factory.mktemp("adapter_warehouse")


@pytest.fixture(scope="class")
def dbt_profile_target(adapter_warehouse: Path) -> dict[str, Any]:
    return {
        "type": "sparkdelta",
        "method": "session",
        "mode": adapter_engine(),
        "warehouse": str(adapter_warehouse),
        "threads": 4,
    }


@pytest.fixture(scope="class")
def dbt_project_yml(project_root: Any, project_config_update: Any) -> dict[str, Any]:
    """dbt's fixture, plus Delta as the default file_format of every resource type."""
    project_config: dict[str, Any] = {
        "name": "test",
        "profile": "test",
        "flags": {"send_anonymous_usage_stats": False},
    }
    if isinstance(project_config_update, str):
        project_config_update = yaml.safe_load(project_config_update)
    if project_config_update:
        project_config.update(project_config_update)
    for resource in DELTA_DEFAULTS:
        if resource == "data_tests" and "tests" in project_config:
            resource = "tests"  # the older spelling; dbt refuses both
        section = project_config.setdefault(resource, {})
        if isinstance(section, dict):
            section.setdefault("+file_format", "delta")
    write_file(yaml.safe_dump(project_config), project_root, "dbt_project.yml")
    return project_config
