"""What must match outside PyPI is pinned where pip sees it, and one lock names the jars."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from python_ops.delta_jars import DELTA_VERSION, parse_lock, pinned_jars, require_delta_jars
from python_ops.errors import EngineError
from tests.helpers.paths import ROOT


def test_pyproject_pins_delta_spark_to_the_jars_version() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert f"delta-spark=={DELTA_VERSION}" in project["project"]["dependencies"]
    assert "delta_jars.lock" in project["tool"]["setuptools"]["package-data"]["python_ops"]
    constraints = (ROOT / "constraints.txt").read_text().splitlines()
    assert f"delta_spark=={DELTA_VERSION}" in constraints


def test_the_lock_is_one_file_inside_the_package() -> None:
    assert [p.coordinate for p in pinned_jars()] == [
        f"io.delta:delta-spark_4.2_2.13:{DELTA_VERSION}",
        f"io.delta:delta-storage:{DELTA_VERSION}",
    ]
    # a non-editable ``pip install .`` of the checkout leaves setuptools' build/ (a copy of the
    # package): it is not the project's, as .venv is not
    locks = sorted(
        p
        for p in ROOT.rglob("*jars*.lock")
        if not {".venv", "build"} & set(p.relative_to(ROOT).parts)
    )
    # the Delta jars' one lock is package data; the tests' own jars (S3Proxy) are not Delta's
    assert locks == [ROOT / "python_ops" / "delta_jars.lock", ROOT / "scripts" / "test-jars.lock"]
    assert pinned_jars()[1].url("https://repo1.maven.org/maven2/") == (
        "https://repo1.maven.org/maven2/io/delta/delta-storage/4.4.0/delta-storage-4.4.0.jar"
    )


def test_a_bad_lock_line_is_named() -> None:
    with pytest.raises(EngineError, match="line 2 is not"):
        parse_lock("# comment\nabc io.delta:x:1\n")


def test_missing_jars_name_the_command_that_fetches_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SPARKDELTA_DELTA_JARS", str(tmp_path))
    with pytest.raises(EngineError, match=r"run `python -m python_ops jars fetch`"):
        require_delta_jars()
