"""What the code and docs cite is in the repository a user clones."""

from __future__ import annotations

import os
import re
from pathlib import Path

from tests.helpers.paths import ROOT

TEXT = (".py", ".toml", ".txt", ".md", ".sh", ".yml", ".sql", ".lock")
SKIP = {".venv", "jars", "target", "logs", ".git", "dbt_packages", "build", "__pycache__"}


def _files() -> list[Path]:
    found = []
    for folder, dirs, names in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in SKIP and not d.startswith(".")]
        found += [Path(folder, n) for n in names if n.endswith(TEXT)]
    return [p for p in found if p.name != "test_repository_citations.py"]


def test_design_decisions_are_cited_from_docs_design_md() -> None:
    assert (ROOT / "docs" / "design.md").is_file()
    citing = [str(p.relative_to(ROOT)) for p in _files() if "DESIGN.md" in p.read_text()]
    assert citing == []


def test_docs_do_not_send_readers_to_shared_as_if_it_were_in_the_repository() -> None:
    # the fixture folder may be named (where the tests look), but only where the docs say
    # where the tables come from (development.md's "Test fixtures")
    for page in (ROOT / "docs").glob("*.md"):
        text = page.read_text()
        if page.name == "development.md":
            text = text.split("## Test fixtures", 1)[0] + text.split("## What is in here", 1)[1]
        assert not re.search(r"\.\./shared", text), page.name
