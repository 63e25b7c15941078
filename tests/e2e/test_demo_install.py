"""The README's first command installs only what the demo runs, and is safe to run again.

``scripts/bootstrap.sh run`` (what ``scripts/demo.sh`` calls) on a copy of the repository with no
environment yet: the package and its dependencies, none of the test and lint tools of the
``dev`` extra; a second call installs nothing. The Delta jars come from the project's own folder
(``DELTA_JARS_DIR``: already there with the right checksums, nothing is downloaded).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from python_ops.delta_jars import require_delta_jars
from tests.helpers.paths import NOT_COPIED, ROOT

pytestmark = [pytest.mark.slow, pytest.mark.delta_jars, pytest.mark.timeout(2400)]

PYTHON = shutil.which("python3.11")


@pytest.mark.skipif(PYTHON is None, reason="python3.11 is not on PATH on this machine")
def test_the_demos_bootstrap_installs_no_dev_tools_and_reruns_quietly(tmp_path: Path) -> None:
    assert PYTHON is not None
    repo = tmp_path / "repo"
    shutil.copytree(ROOT, repo, symlinks=True, ignore=NOT_COPIED)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env.update(PYTHON=PYTHON, DELTA_JARS_DIR=str(Path(require_delta_jars()[0]).parent))

    def bootstrap() -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [str(repo / "scripts" / "bootstrap.sh"), "run"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=1500,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        return done

    first = bootstrap()
    assert "Installing the project (run)" in first.stderr
    probe = subprocess.run(
        [
            str(repo / ".venv/bin/python"),
            "-c",
            "import importlib.util as u; "
            "print(*[u.find_spec(m) is not None for m in "
            "('dbt.adapters.sparkdelta', 'pysail', 'moto', 'mypy', 'pytest', 'pyhive', 'ruff')])",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert probe.stdout.split() == ["True", "True"] + ["False"] * 5, probe.stdout
    assert (repo / ".venv" / ".installed").read_text().split()[1] == "run"

    again = bootstrap()
    assert "Installing" not in again.stderr, again.stderr
