"""Write one benchmark's section of docs/benchmarks.md, replacing its previous version."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPORT = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"
HEADER = "# Benchmarks\n\nMachine: 2 cores, 24 GiB. Ratios are ours / delta-rs (lower is better).\n"


def write_section(marker: str, lines: list[str], *, source: str) -> None:
    """Replace (or append) the section between ``<!-- MARKER:BEGIN`` and ``<!-- MARKER:END -->``."""
    begin, end = f"<!-- {marker}:BEGIN", f"<!-- {marker}:END -->"
    section = "\n".join([f"{begin} (written by {source}) -->", *lines, end])
    text = REPORT.read_text() if REPORT.exists() else HEADER
    if begin in text:
        text = text[: text.index(begin)] + section + text[text.index(end) + len(end) :]
    else:
        text = text.rstrip() + "\n\n" + section + "\n"
    REPORT.write_text(text)


def compile_package() -> None:
    """Byte-compile python_ops as an installed package is, before any process is timed.

    This environment sets ``PYTHONDONTWRITEBYTECODE``: without compiled files every process
    of ours would compile the package's modules again (about 0.1 s), while pyarrow and
    deltalake ship compiled.
    """
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(root / "python_ops")], check=True)


def dbt_driver(
    driver: str, args: list[str], *, project: Path, warehouse: Path, code: Path
) -> dict[str, float]:
    """Run a dbt driver script in a fresh process on the embedded engine; the JSON it wrote.

    The driver gets ``args`` and, last, the file to write its figures to (JSON); it runs in
    ``project`` with ``code`` first on the path and ``warehouse`` as the engine's warehouse.
    """
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        env = {**os.environ, "PYTHONPATH": str(code), "SPARKDELTA_WAREHOUSE": str(warehouse)}
        command = [sys.executable, "-c", driver, *args, out.name]
        subprocess.run(command, check=True, env=env, cwd=project, capture_output=True)
        found: dict[str, float] = json.loads(Path(out.name).read_text())
    return found
