"""The HTML report (issue 65 item 4): writing the page and opening it in headless Chromium.

Two estates:

- the example project, built (post-hooks on), built again with new orders, then
  ``maintain_all``: ``python -m python_ops report --html`` as a whole process, and
  ``dbt run-operation maintenance_report --args '{html: ...}'`` in process;
- 1,000 models: 1,000 real Delta tables (delta-rs appends, one version per build) and a real
  history table of 10 builds per model (post-hook rows: OPTIMIZE every build, VACUUM every
  third, log cleanup every fifth; 15,000 rows). The page is written from the history and the
  tables' logs (``page_data`` then ``write_page``: the history read, one log replay per table,
  the page rendered and written); the text report's rows (``report_rows``: each table's health
  and a VACUUM dry run) are timed beside it, as the command runs both.

Opening: Chromium (Debian's ``chromium-headless-shell``, driven by Playwright, requests
blocked) from navigation until the page's script has run (the estate's charts and the models
in view drawn), then drawing every model's charts (``renderAll``: 4,000 for 1,000 models).
Medians of 3 rounds.

    .venv/bin/python bench/report_html_bench.py [--models 1000] [--save r.json] [--write]
    .venv/bin/python bench/report_html_bench.py --report r.json --write
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from report import compile_package, write_section  # noqa: E402

from python_ops.maintenance.configuration.config import parse_config  # noqa: E402
from python_ops.maintenance.records.history import HistoryRecord, HistoryStore  # noqa: E402
from python_ops.maintenance.running.report import report_rows  # noqa: E402
from python_ops.maintenance.running.report_page import page_data, write_page  # noqa: E402
from python_ops.maintenance.selection.targets import ModelTarget  # noqa: E402
from tests.helpers.browser import chromium_path, opened_report  # noqa: E402

BUILDS = 10
ROUNDS = 3


def _tables(root: Path, models: int) -> dict[str, str]:
    import pyarrow as pa
    from deltalake import write_deltalake

    locations = {}
    for m in range(models):
        name = f"model_{m:04d}"
        location = locations[name] = str(root / name)
        for b in range(BUILDS):
            rows = pa.table({"id": list(range(b * 10, b * 10 + 10)), "v": [float(m)] * 10})
            write_deltalake(location, rows, mode="append")
    return locations


def _row(model: str, location: str, build: int, op: str, **counts: Any) -> HistoryRecord:
    at = dt.datetime(2026, 11, 1, tzinfo=dt.UTC) + dt.timedelta(days=build)
    seconds = 0.01 + 0.001 * (len(model) + build) % 7
    return HistoryRecord(
        f"build-{build}", model, location, op, "{}", False, "succeeded", None, at, seconds,
        version_before=build, version_after=build, build_s=1.5, **counts,
    )  # fmt: skip


def _history(locations: dict[str, str]) -> list[HistoryRecord]:
    out = []
    for model, location in locations.items():
        for b in range(BUILDS):
            out.append(
                _row(
                    model, location, b, "optimize", files_removed=b % 4, files_added=int(b % 4 > 0)
                )
            )
            if b % 3 == 2:
                out.append(
                    _row(model, location, b, "vacuum", files_removed=b % 4, bytes_removed=2000 * b)
                )
            if b % 5 == 4:
                out.append(_row(model, location, b, "cleanup_logs", files_removed=3))
    return out


def _open(page: Path) -> tuple[float, float, int, list[Any]]:
    with opened_report(page) as loaded:
        started = time.perf_counter()
        drawn = loaded.page.evaluate("window.sparkdeltaReport.renderAll()")
        all_s = time.perf_counter() - started
        return loaded.load_s, all_s, int(drawn), loaded.errors()


def big_estate(models: int) -> dict[str, Any]:
    """Write and open the page of a ``models``-model estate, ``ROUNDS`` times."""
    work = Path(tempfile.mkdtemp(prefix="report-html-bench-"))
    try:
        built = time.perf_counter()
        locations = _tables(work / "tables", models)
        store = HistoryStore(str(work / "history"))
        store.append(_history(locations))
        setup_s = time.perf_counter() - built
        targets = [ModelTarget(n, loc, parse_config(n, {})) for n, loc in locations.items()]
        runs: dict[str, list[float]] = {"rows": [], "page": [], "load": [], "all": []}
        for r in range(ROUNDS):
            started = time.perf_counter()
            rows = report_rows(targets, spark=None, history=store)
            runs["rows"].append(time.perf_counter() - started)
            started = time.perf_counter()
            page = write_page(work / f"page{r}.html", page_data(rows, store.records(), locations))
            runs["page"].append(time.perf_counter() - started)
            load_s, all_s, drawn, errors = _open(page)
            assert drawn == models, drawn
            assert not errors, errors
            runs["load"].append(load_s)
            runs["all"].append(all_s)
        size = page.stat().st_size
    finally:
        shutil.rmtree(work, ignore_errors=True)
    load_avg = os.getloadavg()[0]
    return {
        "models": models,
        "setup_s": setup_s,
        "bytes": size,
        "load_avg": load_avg,
        **_medians(runs),
    }


def _medians(runs: dict[str, list[float]]) -> dict[str, float]:
    return {k: statistics.median(v) for k, v in runs.items()}


def example_project() -> dict[str, Any]:
    """The example project after two builds and a maintain_all: both front ends' pages."""
    from tests.e2e.conftest import WITH_DELTA_WRITER
    from tests.helpers.dbt_runs import PROJECT_PARTS, run_dbt

    work = Path(tempfile.mkdtemp(prefix="report-html-example-"))
    project = work / "project"
    project.mkdir()
    for part in PROJECT_PARTS:
        source = ROOT / part
        copy = shutil.copytree if source.is_dir() else shutil.copy
        copy(source, project / part)
    for name in WITH_DELTA_WRITER:  # as the e2e tier: no JVM
        (project / "models" / "marts" / name).unlink()
    os.environ["SPARKDELTA_WAREHOUSE"] = str(work / "warehouse")
    try:
        assert run_dbt(project, "build").success
        assert run_dbt(project, "run", batch=1).success
        assert run_dbt(project, "run-operation", "maintain_all").success
        runs: dict[str, list[float]] = {"cli": [], "dbt": [], "load": [], "all": []}
        for r in range(ROUNDS):
            page = work / f"cli{r}.html"
            started = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "python_ops", "report", "--project-dir", str(project),
                 "--profiles-dir", str(project / "profiles_example"), "--html", str(page)],
                check=True, capture_output=True, env=dict(os.environ, PYTHONPATH=str(ROOT)),
            )  # fmt: skip
            runs["cli"].append(time.perf_counter() - started)
            started = time.perf_counter()
            args = f"{{html: '{work / f'dbt{r}.html'}'}}"
            assert run_dbt(project, "run-operation", "maintenance_report", "--args", args).success
            runs["dbt"].append(time.perf_counter() - started)
            load_s, all_s, drawn, errors = _open(page)
            assert not errors, errors
            runs["load"].append(load_s)
            runs["all"].append(all_s)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {"models": drawn, **_medians(runs)}


def _lines(example: dict[str, Any], big: dict[str, Any], browser: str) -> list[str]:
    n = big["models"]
    return [
        "## HTML report",
        "",
        "`maintenance_report --args '{html: FILE}'` and `python -m python_ops report --html FILE`"
        f" (issue 65 item 4): write the page, then open it in headless Chromium ({browser}, "
        "Debian's package, driven by Playwright, every request blocked). Load: from navigation "
        "until the page's script has run (the estate's charts and the models in view drawn; "
        "the others are drawn as they scroll near). All charts: `renderAll()` after that. "
        f"Medians of {ROUNDS} rounds, 2 cores shared with other work (load average "
        f"{big['load_avg']:.1f} at the end).",
        "",
        "| estate | write the page | open it (load) | draw every chart | page size |",
        "|---|---|---|---|---|",
        f"| example project ({example['models']} models, 2 builds + maintain_all) | "
        f"`python -m python_ops report --html` {example['cli']:.2f} s (whole process); "
        f"`dbt run-operation` {example['dbt']:.2f} s (in process) | {example['load']:.2f} s | "
        f"{example['all'] * 1000:.0f} ms | |",
        f"| {n:,} models, {BUILDS} builds each ({n * BUILDS:,} points, real tables and "
        f"history) | {big['page']:.2f} s (history read, {n:,} log replays, render, write); "
        f"the text report's rows beside it {big['rows']:.2f} s | {big['load']:.2f} s | "
        f"{big['all']:.2f} s ({n * 4:,} charts) | {big['bytes'] / 1e6:.1f} MB |",
        "",
        f"Done when (under 5 s): the 1,000-model page is written in {big['page']:.2f} s and "
        f"opens in {big['load']:.2f} s, {big['page'] + big['load']:.2f} s together; the example "
        f"project's command writes it in {example['cli']:.2f} s as a whole process and it opens "
        f"in {example['load']:.2f} s. The command also computes the text report's rows "
        f"(`report_rows`: each table's health and a VACUUM dry run, as the table without "
        f"`--html` does), {big['rows']:.2f} s for 1,000 models, which the page's numbers use "
        f"for what is due next; with them the 1,000-model command takes "
        f"{big['rows'] + big['page']:.2f} s. Drawing all 4,000 charts at once is not what "
        "opening does: a model's charts are drawn when its section scrolls near. Setup (not "
        f"timed): {big['setup_s']:.0f} s.",
    ]


def main() -> None:
    """Run both estates and print (or ``--write``) the section."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", type=int, default=1000)
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--save", default=None, help="also write the results as JSON")
    parser.add_argument("--report", default=None, help="the section from saved results only")
    args = parser.parse_args()
    if args.report:
        saved = json.loads(Path(args.report).read_text())
        lines = _lines(saved["example"], saved["big"], saved["browser"])
        print("\n".join(lines))
        if args.write:
            write_section("REPORT-HTML", lines, source="bench/report_html_bench.py")
        return
    browser = chromium_path()
    if browser is None:
        raise SystemExit("no Chromium: run scripts/install_chromium.sh")
    compile_package()
    version = subprocess.run(
        [browser, "--version"], capture_output=True, text=True, check=False
    ).stdout.strip()
    example = example_project()
    print(example, flush=True)
    big = big_estate(args.models)
    print(big, flush=True)
    if args.save:
        saved = {"example": example, "big": big, "browser": version or browser}
        Path(args.save).write_text(json.dumps(saved))
    lines = _lines(example, big, version or browser)
    print("\n".join(lines))
    if args.write:
        write_section("REPORT-HTML", lines, source="bench/report_html_bench.py")


if __name__ == "__main__":
    main()
