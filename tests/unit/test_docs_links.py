"""The pages people read stay inside the repository and their relative links resolve.

Every relative link of ``README.md`` and ``docs/*.md`` must name a file of the checkout and, with
a ``#fragment``, a heading of that file (GitHub's anchors). Nothing a user reads may point at
``../shared`` (a sibling directory a user's clone does not have) except where developers are
told where the test fixtures come from.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# Pages that may name ../shared/fixtures: the developer page says where the fixtures come from,
# and compatibility.md is written by scripts/compatibility.py, which names the corpus it ran on.
FIXTURE_PAGES = {"docs/development.md", "docs/compatibility.md"}

FENCE = re.compile(r"^(`{3,}|~{3,}).*?^\1[^\n]*$", re.DOTALL | re.MULTILINE)
CODE_SPAN = re.compile(r"(`+)(?!`).*?(?<!`)\1", re.DOTALL)
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def prose(text: str) -> str:
    """The text outside fenced code blocks and HTML comments (where no link or heading is)."""
    text = re.sub(r"<!--.*?-->", "", text, flags=re.DOTALL)
    return FENCE.sub("", text)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: rendered text, lower case, punctuation gone, '-' for ' '."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link renders as its text
    text = re.sub(r"<[^>]+>", "", text).lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every heading anchor of a Markdown file, with GitHub's -1, -2 suffixes for repeats."""
    seen: dict[str, int] = {}
    found: set[str] = set()
    for match in HEADING.finditer(prose(path.read_text())):
        base = slug(match.group(1))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(path: Path) -> list[str]:
    """The relative link targets of a page (web links and mail addresses left out)."""
    text = CODE_SPAN.sub(lambda m: "x" * len(m.group(0)), prose(path.read_text()))
    return [t for t in LINK.findall(text) if not SCHEME.match(t)]


def broken(path: Path) -> list[str]:
    """Each link of the page whose file or heading does not exist, with the reason."""
    problems = []
    for target in links(path):
        file_part, _, fragment = target.partition("#")
        dest = (path.parent / unquote(file_part)).resolve() if file_part else path
        if not dest.exists():
            problems.append(f"{target}: no file {dest}")
        elif file_part and ROOT not in dest.parents and dest != ROOT:
            problems.append(f"{target}: outside the repository")
        elif fragment and dest.suffix == ".md" and unquote(fragment) not in anchors(dest):
            problems.append(f"{target}: no heading #{fragment} in {dest.name}")
    return problems


def name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


@pytest.mark.parametrize("page", PAGES, ids=name)
def test_relative_links_resolve(page: Path) -> None:
    assert broken(page) == []


@pytest.mark.parametrize("page", PAGES, ids=name)
def test_pages_stay_inside_the_repository(page: Path) -> None:
    text = page.read_text()
    assert "SPEC-maintenance" not in text, "the spec is docs/spec.md"
    mentions = [line for line in text.splitlines() if "../shared" in line]
    if name(page) in FIXTURE_PAGES:
        mentions = [line for line in mentions if "../shared/fixtures" not in line]
    assert mentions == []


def test_the_readme_is_short_and_links_every_page() -> None:
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) < 200
    index = {Path(t).name for t in links(ROOT / "docs" / "index.md")}
    pages = {p.name for p in (ROOT / "docs").glob("*.md")} - {"index.md"}
    assert pages <= index, f"docs/index.md does not list {sorted(pages - index)}"


def test_the_checks_catch_a_broken_link(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "# Title\n\n## Outside dbt: `python -m x`\n\n"
        "[ok](#outside-dbt-python--m-x) [gone](#nowhere) [file](missing.md) "
        "`[code](skipped.md)` [web](https://example.com)\n\n```\n[fenced](skipped.md)\n```\n"
    )
    assert anchors(page) == {"title", "outside-dbt-python--m-x"}
    assert links(page) == ["#outside-dbt-python--m-x", "#nowhere", "missing.md"]
    assert len(broken(page)) == 2
