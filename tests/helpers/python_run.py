"""Run a snippet in a fresh interpreter from the checkout (imports decided there)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from tests.helpers.paths import ROOT


def python_stdout(code: str, *args: str) -> str:
    """Run ``python -c code *args`` in the checkout; its stdout, stripped (it must exit 0)."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()
