"""The docs say what the code does (issue 37's "docs disagree")."""

from __future__ import annotations

import re

from dbt.adapters.sparkdelta.engines import MODES
from tests.helpers.paths import ROOT


def _page(name: str) -> str:
    return (ROOT / "docs" / name).read_text()


def test_the_profile_table_lists_every_mode() -> None:
    (row,) = [
        line for line in _page("configuration.md").splitlines() if line.startswith("| `mode`")
    ]
    assert all(f"`{mode}`" in row for mode in MODES), row


def test_run_operations_calls_a_selection_that_reaches_nothing_an_error() -> None:
    text = " ".join(_page("run-operations.md").split())
    assert "A selection that reaches nothing is an error, and nothing is maintained" in text
    assert "What a selection does not reach is a dbt warning" not in text


def test_run_operations_says_one_thing_about_snapshots() -> None:
    text = " ".join(_page("run-operations.md").split())
    assert "select and maintain snapshots as they do table and incremental models" in text
    assert "only models are maintained" not in text


def test_the_post_hooks_off_switch_is_documented() -> None:
    text = _page("run-operations.md")
    assert "--vars '{maintenance_post_hook: false}'" in text
    assert (
        "var('maintenance_post_hook', true)" in (ROOT / "macros" / "maintain_model.sql").read_text()
    )


def test_the_demos_closing_hints_name_readme_sections_that_exist() -> None:
    headings = {
        line.lstrip("#").strip()
        for line in (ROOT / "README.md").read_text().splitlines()
        if line.startswith("#")
    }
    cited = re.findall(
        r'README, \\?"([^"\\]+)\\?"', (ROOT / "scripts" / "run_example.py").read_text()
    )
    assert len(cited) >= 2, cited
    assert set(cited) <= headings, set(cited) - headings
