"""Where the tests find the project and the shared Delta fixtures, and how they skip without them.

The fixtures live in ``../shared/fixtures`` beside the checkout (``delta-tables/`` and
``golden/``); ``SPARKDELTA_FIXTURES`` points elsewhere (a clone in another place, or a path that
does not exist to check that everything needing them skips).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES_ROOT = Path(os.environ.get("SPARKDELTA_FIXTURES", ROOT.parent / "shared" / "fixtures"))
DELTA_TABLES = FIXTURES_ROOT / "delta-tables"
GOLDEN = FIXTURES_ROOT / "golden"
# what a copy of the repository leaves out (environments, build output, caches, the warehouse)
NOT_COPIED = shutil.ignore_patterns(
    ".venv",
    "jars",
    "target",
    "logs",
    "dbt_packages",
    "warehouse",
    ".git",
    "__pycache__",
    "build",
    "*.egg-info",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    "metastore_db",
)
NEEDS_SHARED = "needs ../shared/fixtures (the shared Delta fixtures), absent here"


def shared_present(path: Path = DELTA_TABLES) -> bool:
    """Whether ``path`` (a fixtures directory) is there."""
    return path.is_dir()


def require_shared(path: Path = DELTA_TABLES) -> None:
    """Skip the calling test (or module, at import) when the shared fixtures are absent."""
    if not shared_present(path):
        pytest.skip(NEEDS_SHARED, allow_module_level=True)


def delta_table_names() -> list[Any]:
    """The fixture tables under ``delta-tables/``, for parametrize (one skipping case if absent)."""
    if not shared_present():
        return [pytest.param("absent", marks=pytest.mark.skip(reason=NEEDS_SHARED))]
    return sorted(p.name for p in DELTA_TABLES.iterdir() if p.is_dir())


def shared_table(name: str) -> Path:
    """The original fixture table ``name``, for reading only (copy it before changing anything).

    Skips the test when the shared fixtures are absent; fails when the table is missing.
    """
    require_shared()
    path = DELTA_TABLES / name
    if not path.is_dir():
        pytest.fail(f"fixture table {name} not found under {DELTA_TABLES}")
    return path
