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


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_engines: None) -> Path:
    """A copy of the example project with its own warehouse (``../warehouse`` beside it)."""
    target = tmp_path / "project"
    target.mkdir()
    for part in PROJECT_PARTS:
        source = ROOT / part
        if source.is_dir():
            shutil.copytree(source, target / part)
        else:
            shutil.copy(source, target / part)
    monkeypatch.setenv("SPARKDELTA_WAREHOUSE", str(tmp_path / "warehouse"))
    return target


@pytest.fixture
def built_project(project: Path) -> Path:
    """The example project after ``dbt build`` (batch 0)."""
    built = run_dbt(project, "build")
    assert built.success, built.exception
    return project
