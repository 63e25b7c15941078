"""The HTML report (issue 65 item 4): the history as charts, checked in a real headless Chromium.

Real Delta tables (delta-rs appends) and a real history table; the page is opened offline and
read back through its charts' own data, which must be the history's numbers.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import write_deltalake

from python_ops.delta.state.snapshot import read_snapshot
from python_ops.maintenance.records.history import HistoryRecord, HistoryStore
from python_ops.maintenance.running.report_page import page_data, write_page
from python_ops.maintenance.running.report_series import estate_totals, model_points
from tests.helpers.browser import drawn_charts, opened_report

BASE = dt.datetime(2026, 11, 20, 6, tzinfo=dt.UTC)
MODELS = ("fct_orders", "dim_customers", "</script><b>odd & name</b>")


def _table(root: Path, name: str, versions: int) -> str:
    location = str(root / f"t{abs(hash(name)) % 10_000}")
    for v in range(versions):
        write_deltalake(location, pa.table({"id": list(range(5 * (v + 1)))}), mode="append")
    return location


def _record(model: str, location: str, build: int, op: str, **counts: Any) -> HistoryRecord:
    return HistoryRecord(
        invocation_id=f"build-{build}",
        model=model,
        table_location=location,
        op=op,
        parameters="{}",
        dry_run=False,
        status="succeeded",
        error=None,
        started_at=BASE + dt.timedelta(hours=build, seconds=len(op)),
        duration_s=0.25 * (build + 1) + len(op) / 100,
        build_s=3.0 + build,
        **counts,
    )


def _estate(tmp_path: Path) -> tuple[list[dict[str, Any]], HistoryStore, dict[str, str]]:
    """Three models, four builds each; every op reclaiming something in some build."""
    records, locations, rows = [], {}, []
    for i, model in enumerate(MODELS):
        location = locations[model] = _table(tmp_path / "tables", model, 4 + i)
        for b in range(4):
            records.append(
                _record(
                    model,
                    location,
                    b,
                    "optimize",
                    files_removed=b + 1,
                    files_added=1,
                    version_before=b,
                    version_after=b,
                )
            )
            records.append(
                _record(
                    model,
                    location,
                    b,
                    "vacuum",
                    files_removed=b,
                    bytes_removed=1000 * b,
                    version_before=b,
                    version_after=b,
                )
            )
            if b == 2:
                records.append(_record(model, location, b, "cleanup_logs", files_removed=2))
        records.append(  # a dry run is no point
            _record(model, location, 9, "vacuum", version_before=3, version_after=3).__class__(
                **{**_record(model, location, 9, "vacuum").__dict__, "dry_run": True}
            )
        )
        snap = read_snapshot(location)
        rows.append(
            {
                "model": model,
                "files": len(snap.files),
                "small_files": len(snap.files),
                "bytes": sum(f.size_bytes for f in snap.files),
                "log_files": len(snap.log_files),
                "tombstones": 0,
                "reclaimable_bytes": 0,
                "next": "optimize now" if i == 0 else "vacuum in 5 h",
            }
        )
    store = HistoryStore(str(tmp_path / "history"))
    store.append(records)
    return rows, store, locations


def _expected(records: list[HistoryRecord], model: str) -> dict[str, list[Any]]:
    """What the history says of ``model`` per build, computed here from the rows alone."""
    builds: dict[str, list[HistoryRecord]] = {}
    for r in records:
        if r.model == model and not r.dry_run:
            builds.setdefault(r.invocation_id, []).append(r)
    order = sorted(builds, key=lambda k: min(r.started_at for r in builds[k]))

    def total(inv: str, op: str, column: str) -> int:
        return sum(getattr(r, column) for r in builds[inv] if r.op == op)

    location = builds[order[0]][0].table_location
    versions = [
        max(r.version_after for r in builds[k] if r.version_after is not None) for k in order
    ]
    return {
        "maintenance_s": [sum(r.duration_s for r in builds[k]) for k in order],
        "vacuum_files": [total(k, "vacuum", "files_removed") for k in order],
        "vacuum_bytes": [total(k, "vacuum", "bytes_removed") for k in order],
        "optimize_files": [
            total(k, "optimize", "files_removed") - total(k, "optimize", "files_added")
            for k in order
        ],
        "cleanup_logs_files": [total(k, "cleanup_logs", "files_removed") for k in order],
        "files": [len(read_snapshot(location, version=v).files) for v in versions],
        "bytes": [
            sum(f.size_bytes for f in read_snapshot(location, version=v).files) for v in versions
        ],
        "build_s": [max(r.build_s or 0.0 for r in builds[k]) for k in order],
    }


def test_series_are_the_history_and_the_log_at_each_build(tmp_path: Path) -> None:
    _, store, locations = _estate(tmp_path)
    records = store.records()
    for model in MODELS:
        series = model_points([r for r in records if r.model == model], locations[model])
        for name, values in _expected(records, model).items():
            assert series[name] == pytest.approx(values), (model, name)
        # log files: those up to the build's version still there, plus the 2 that the cleanup
        # at build 2 recorded deleting, for the builds before it
        here = [
            len(
                [
                    f
                    for f in read_snapshot(locations[model]).log_files
                    if f.version is not None and f.version <= v
                ]
            )
            for v in range(4)
        ]
        assert series["log_files"] == [here[0] + 2, here[1] + 2, here[2], here[3]]


def test_the_page_loads_offline_with_no_console_error_and_charts_the_history(
    tmp_path: Path,
) -> None:
    rows, store, locations = _estate(tmp_path)
    records = store.records()
    page = write_page(tmp_path / "out" / "report.html", page_data(rows, records, locations))
    text = page.read_text()
    # no address but the vendored library's own header (the browser test blocks requests too)
    assert "http://" not in text.replace("http://www.w3.org", "")
    assert text.count("https://") == text.count("https://github.com/leeoniya/uPlot")
    with opened_report(page) as loaded:
        assert loaded.errors() == []
        charts = drawn_charts(loaded.page)
        names = loaded.page.eval_on_selector_all(
            "section.model", "els => els.map(e => e.dataset.model)"
        )
        assert names == list(MODELS)  # the odd name is text, not markup
        nexts = loaded.page.eval_on_selector_all(
            "section.model .next", "els => els.map(e => e.textContent)"
        )
        due = loaded.page.eval_on_selector_all(
            "p.due-list a", "els => els.map(e => e.getAttribute('href'))"
        )
        assert loaded.errors() == []
    assert nexts == ["optimize now", "vacuum in 5 h", "vacuum in 5 h"]
    assert due == ["#model-0"]  # the one model due now, linked at the top
    assert set(charts) == {*MODELS, "(estate)"}
    for model in MODELS:
        want = _expected(records, model)
        got = charts[model]
        assert set(got) == {"files", "bytes", "time", "reclaimed"}
        assert all(c["canvas"] for c in got.values())
        assert got["files"]["labels"][1:] == ["live files", "small files", "log files"]
        assert got["files"]["data"][1] == want["files"]
        assert got["bytes"]["data"][1:] == [want["vacuum_bytes"], want["bytes"]]
        assert got["time"]["data"][1] == pytest.approx(want["maintenance_s"])
        assert got["time"]["data"][2] == pytest.approx(want["build_s"])
        assert got["reclaimed"]["data"][1:] == [
            want["vacuum_files"],
            want["optimize_files"],
            want["cleanup_logs_files"],
        ]
    estate = charts["(estate)"]
    assert sum(estate["estate-time"]["data"][1]) == pytest.approx(
        sum(r.duration_s for r in records if not r.dry_run)
    )
    assert sum(estate["estate-reclaimed"]["data"][1]) == sum(
        r.files_removed for r in records if r.op == "vacuum" and not r.dry_run
    )


def test_the_page_needs_nothing_from_outside(tmp_path: Path) -> None:
    rows, store, locations = _estate(tmp_path)
    data = page_data(rows, store.records(), locations)
    text = write_page(tmp_path / "r.html", data).read_text()
    assert "<script src" not in text
    assert '<link rel="stylesheet"' not in text
    payload = text.split('id="report-data">', 1)[1].split("</script>", 1)[0]
    assert json.loads(payload.replace("<\\/", "</"))["totals"]["models"] == len(MODELS)


def test_versions_cleaned_from_the_log_are_gaps_and_a_checkpoint_starts_the_replay(
    tmp_path: Path,
) -> None:
    from deltalake import DeltaTable

    from python_ops.maintenance.running.report_states import table_states

    location = _table(tmp_path, "cleaned", 12)
    DeltaTable(location).create_checkpoint()  # at version 11
    for v in range(6):  # a log cleanup took the oldest commits
        (Path(location) / "_delta_log" / f"{v:020d}.json").unlink()
    states = table_states(location, [(v, 0) for v in range(12)])
    assert states[:11] == [None] * 11  # no checkpoint at or before them, commit 0 is gone
    newest = read_snapshot(location)
    last = states[11]
    assert last is not None
    assert (last.files, last.bytes) == (len(newest.files), sum(f.size_bytes for f in newest.files))
    # a point naming no version takes the newest commit written by its time
    (by_time,) = table_states(location, [(None, 2**62)])
    assert by_time == last


def test_a_page_that_cannot_be_written_is_refused_naming_the_file(tmp_path: Path) -> None:
    from python_ops.errors import ConfigError

    with pytest.raises(ConfigError, match=r"setting 'html' has bad value .*could not be written"):
        write_page(tmp_path, {"models": [], "totals": estate_totals([])})
