"""A real headless Chromium for the HTML report's tests, driven by Playwright.

The browser is Debian's ``chromium-headless-shell`` (``scripts/bootstrap.sh dev`` installs it
where apt can, as root; Playwright's own browser downloads are not reachable from the project's
machines). ``SPARKDELTA_CHROMIUM`` names another binary. Without one the tests skip, saying so.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

CANDIDATES = ("chromium-headless-shell", "chromium", "chromium-browser")


def chromium_path() -> str | None:
    """The Chromium binary to drive: ``$SPARKDELTA_CHROMIUM``, else the first on the PATH."""
    named = os.environ.get("SPARKDELTA_CHROMIUM")
    if named:
        return named
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


def require_chromium() -> str:
    """The Chromium binary, or skip the test saying why there is none."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        pytest.skip("playwright is not installed (scripts/bootstrap.sh dev installs it)")
    path = chromium_path()
    if path is None:
        pytest.skip(
            "no Chromium on this machine: none of "
            f"{', '.join(CANDIDATES)} is on the PATH and SPARKDELTA_CHROMIUM is unset "
            "(scripts/bootstrap.sh dev installs chromium-headless-shell with apt-get as root)"
        )
    return path


@dataclass
class LoadedPage:
    """A page opened in the browser, with what its console said.

    Attributes:
        page: The Playwright page.
        console: Each console message and page error as (type, text).
        load_s: Seconds from navigation to the report's script being done.
    """

    page: Any
    console: list[tuple[str, str]] = field(default_factory=list)
    load_s: float = 0.0

    def errors(self) -> list[tuple[str, str]]:
        """The console's errors and warnings, and uncaught exceptions."""
        return [
            (kind, text) for kind, text in self.console if kind in ("error", "warning", "pageerror")
        ]


@contextmanager
def opened_report(path: Path, *, width: int = 1300, height: int = 900) -> Iterator[LoadedPage]:
    """Open the report page at ``path`` in headless Chromium (offline: any request fails).

    Yields:
        The page once ``window.sparkdeltaReport.ready`` (its script ran to the end).
    """
    from playwright.sync_api import sync_playwright

    executable = require_chromium()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        try:
            context = browser.new_context(viewport={"width": width, "height": height})
            page = context.new_page()
            loaded = LoadedPage(page)
            page.on("console", lambda m: loaded.console.append((m.type, m.text)))
            page.on("pageerror", lambda e: loaded.console.append(("pageerror", str(e))))
            # the page must need nothing from outside: every request but the file itself fails
            page.route(
                "**/*",
                lambda route: (
                    route.continue_()
                    if route.request.url == path.resolve().as_uri()
                    else route.abort()
                ),
            )
            started = time.perf_counter()
            page.goto(path.resolve().as_uri(), wait_until="load")
            page.wait_for_function("window.sparkdeltaReport && window.sparkdeltaReport.ready")
            loaded.load_s = time.perf_counter() - started
            yield loaded
        finally:
            browser.close()


def drawn_charts(page: Any) -> dict[str, dict[str, dict[str, Any]]]:
    """Every chart the page drew (after drawing them all): model, chart, its labels and data."""
    return dict(
        page.evaluate(
            """() => {
              window.sparkdeltaReport.renderAll();
              const out = {};
              for (const [model, charts] of Object.entries(window.sparkdeltaReport.charts)) {
                out[model] = {};
                for (const [name, u] of Object.entries(charts)) {
                  out[model][name] = {
                    labels: u.series.map(s => s.label),
                    data: u.data.map(col => Array.from(col)),
                    canvas: !!u.root.querySelector('canvas'),
                    title: u.root.querySelector('.u-title').textContent,
                  };
                }
              }
              return out;
            }"""
        )
    )
