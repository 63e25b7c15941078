"""``maintenance_report --args '{html: FILE}'`` and ``python -m python_ops report --html FILE`` on
the example project (issue 65 item 4): the page loads in a real headless Chromium with no console
error, and every maintained model's charts hold the numbers of the maintenance history.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from python_ops.maintenance.records.history import HistoryRecord, HistoryStore
from tests.helpers.browser import drawn_charts, opened_report, require_chromium
from tests.helpers.dbt_runs import Dbt
from tests.helpers.paths import ROOT

pytestmark = pytest.mark.slow


def _history(project: Path) -> list[HistoryRecord]:
    return HistoryStore(
        str(project.parent / "warehouse" / "shop" / "maintenance_history")
    ).records()


def _per_build(records: list[HistoryRecord], model: str) -> dict[str, list[Any]]:
    """The history's own numbers for ``model``, one per invocation that ran on it."""
    builds: dict[str, list[HistoryRecord]] = {}
    for r in records:
        if r.model == model and not r.dry_run:
            builds.setdefault(r.invocation_id, []).append(r)
    order = sorted(builds, key=lambda k: min(r.started_at for r in builds[k]))

    def done(k: str, op: str, column: str) -> int:
        return sum(getattr(r, column) for r in builds[k] if r.op == op and r.status == "succeeded")

    return {
        "maintenance_s": [
            sum(r.duration_s for r in builds[k] if r.status != "skipped") for k in order
        ],
        "vacuum_files": [done(k, "vacuum", "files_removed") for k in order],
        "optimize_files": [
            done(k, "optimize", "files_removed") - done(k, "optimize", "files_added") for k in order
        ],
        "cleanup_logs_files": [done(k, "cleanup_logs", "files_removed") for k in order],
    }


def _check_page(page: Path, records: list[HistoryRecord]) -> list[str]:
    """Open ``page``; assert it charts the history; return the models it shows."""
    with opened_report(page) as loaded:
        charts = drawn_charts(loaded.page)
        models = loaded.page.eval_on_selector_all(
            "section.model", "els => els.map(e => e.dataset.model)"
        )
        assert loaded.errors() == []
    for model in models:
        want = _per_build(records, model)
        got = charts[model]
        assert set(got) == {"files", "bytes", "time", "reclaimed"}, model
        assert all(c["canvas"] for c in got.values()), model
        assert got["time"]["data"][1] == pytest.approx(want["maintenance_s"], abs=1e-6), model
        assert got["reclaimed"]["data"][1:] == [
            want["vacuum_files"],
            want["optimize_files"],
            want["cleanup_logs_files"],
        ], model
        # the newest point's live files are a number from the table's log
        if want["maintenance_s"]:
            assert isinstance(got["files"]["data"][1][-1], int), model
    return list(models)


def test_the_html_report_from_dbt_and_the_command_line(
    built_project: Path, dbt: Dbt, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    require_chromium()
    # more points per model: a second build (new orders) and a maintain_all
    assert dbt(built_project, "run", batch=1).success
    assert dbt(built_project, "run-operation", "maintain_all").success
    records = _history(built_project)
    # every model the history has rows of (the history's own upkeep is no model of the project)
    maintained = {r.model for r in records if not r.dry_run} - {"maintenance_history"}
    assert maintained

    page = tmp_path / "pages" / "dbt.html"
    capfd.readouterr()
    result = dbt(
        built_project, "run-operation", "maintenance_report", "--args", f"{{html: '{page}'}}"
    )
    assert result.success, result.exception
    assert f"written to {page}" in capfd.readouterr().out
    shown = _check_page(page, records)
    assert maintained <= set(shown)

    cli_page = tmp_path / "pages" / "cli.html"
    done = _report_command(built_project, "--html", str(cli_page))
    assert done.returncode == 0, done.stderr
    assert f"written to {cli_page}" in done.stderr
    # the dbt report's own rows (its VACUUM due checks' proofs) are history now too
    assert _check_page(cli_page, _history(built_project)) == shown
    # without --html: the run-operation's table
    table = _report_command(built_project)
    assert table.returncode == 0, table.stderr
    assert "next action" in table.stdout
    assert "total (6 models)" in table.stdout


def _report_command(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m python_ops report`` on the project, as a scheduler runs it."""
    return subprocess.run(
        [sys.executable, "-m", "python_ops", "report", "--project-dir", str(project),
         "--profiles-dir", str(project / "profiles_example"), *args],
        capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=300,
        check=False,
    )  # fmt: skip


def test_a_misspelt_or_bad_html_argument_is_refused_with_words(
    built_project: Path, dbt: Dbt, capfd: pytest.CaptureFixture[str]
) -> None:
    result = dbt(built_project, "run-operation", "maintenance_report", "--args", "{htm: r.html}")
    assert not result.success
    assert "did you mean 'html'?" in str(result.exception) + capfd.readouterr().out
    result = dbt(built_project, "run-operation", "maintenance_report", "--args", "{html: true}")
    assert not result.success
    assert "html must be a file to write" in str(result.exception) + capfd.readouterr().out
    folder = f"{{html: '{built_project}'}}"  # a folder: no page is written over it
    result = dbt(built_project, "run-operation", "maintenance_report", "--args", folder)
    assert not result.success
    assert "could not be written there" in str(result.exception) + capfd.readouterr().out
