"""The e2e tier: real dbt (in-process ``dbtRunner``) on the embedded engine.

``project`` is a copy of the example project (the repository root's ``dbt_project.yml``,
``models/``, ``seeds/``, ``profiles_example/``) with its own warehouse; ``dbt`` runs a dbt command
on it; ``built_project`` is ``project`` after one ``dbt build``. Every module of this tier is
marked ``slow``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.helpers.dbt_runs import PROJECT_PARTS, Dbt, run_dbt
from tests.helpers.paths import ROOT


@pytest.fixture
def dbt() -> Dbt:
    """``dbt(project, *args, batch=0, target=None, extra_vars=None)``: see ``run_dbt``."""
    return run_dbt


WITH_DELTA_WRITER = ("fct_open_orders.sql", "fct_open_orders.yml")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_engines: None) -> Path:
    """A copy of the example project with its own warehouse (``../warehouse`` beside it).

    Without ``fct_open_orders``, the table with deletion vectors: maintaining it starts a local
    Spark with Delta (delta-rs cannot write it), tens of seconds per test on a 2-core machine.
    ``test_main_job.py`` runs the whole example, that model and its Delta writer included.
    """
    target = tmp_path / "project"
    target.mkdir()
    for part in PROJECT_PARTS:
        source = ROOT / part
        if source.is_dir():
            shutil.copytree(source, target / part)
        else:
            shutil.copy(source, target / part)
    for name in WITH_DELTA_WRITER:
        (target / "models" / "marts" / name).unlink()
    monkeypatch.setenv("SPARKDELTA_WAREHOUSE", str(tmp_path / "warehouse"))
    return target


@pytest.fixture
def built_project(project: Path) -> Path:
    """The example project after ``dbt build`` (batch 0)."""
    built = run_dbt(project, "build")
    assert built.success, built.exception
    return project
