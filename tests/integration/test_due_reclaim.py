"""VACUUM is due when it has something to reclaim: removed files or untracked files.

Real Delta tables written by the embedded engine; untracked files are what a failed job leaves
(Parquet-named files no commit references), backdated as a month-old failure would be.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from python_ops.delta.state.snapshot import read_snapshot
from python_ops.invocation import Invocation
from python_ops.maintenance.configuration.config import parse_config
from python_ops.maintenance.decisions.due import decide
from python_ops.maintenance.records.history import HistoryStore
from python_ops.maintenance.records.outcomes import Reason, Status
from python_ops.maintenance.rules import reclaim
from python_ops.maintenance.running.runner import Maintainer
from python_ops.maintenance.selection.targets import ModelTarget
from tests.helpers.optimize import events_table
from tests.helpers.vacuum import content

DAY_S = 86_400


def _target(path: Path, **config: object) -> ModelTarget:
    return ModelTarget("events", str(path), parse_config("events", config))


def failed_job_files(table: Path, *, count: int, size: int, age_days: float) -> list[Path]:
    """Files a failed writer left in a partition: never committed, ``age_days`` old."""
    when = time.time() - age_days * DAY_S
    paths = []
    for i in range(count):
        path = table / "day=2024-01-01" / f"part-{i:05d}-failed-job.snappy.parquet"
        path.write_bytes(os.urandom(size))
        os.utime(path, (when, when))
        paths.append(path)
    return paths


def test_untracked_files_older_than_the_retention_make_vacuum_due(
    tmp_path: Path, sail_spark, caplog: pytest.LogCaptureFixture
) -> None:
    table = tmp_path / "events"
    events_table(sail_spark, table, batches=2)
    assert read_snapshot(str(table)).tombstones == ()  # nothing removed: the log says "clean"
    junk = failed_job_files(table, count=6, size=1_000_000, age_days=30)
    before = content(table)

    with caplog.at_level("INFO", logger="python_ops.ops.audit"):
        (vacuum,) = decide(_target(table), read_snapshot(str(table)), ops=("vacuum",))
    assert vacuum.reason is Reason.DUE
    assert vacuum.detail == "6 untracked file(s) (6.00 MB) older than the 168 h retention"
    # the decision's dry run is an estimate, not a VACUUM run: no audit record of its own
    assert [r for r in caplog.records if r.name == "python_ops.ops.audit"] == []

    maintainer = Maintainer(spark=None, history=None, invocation=Invocation("t"))
    with caplog.at_level("INFO", logger="python_ops.ops.audit"):
        (outcome,) = maintainer.maintain_model(_target(table), ops=("vacuum",), only_due=True)
    audits = [r for r in caplog.records if r.name == "python_ops.ops.audit"]
    assert len(audits) == 1, [r.getMessage()[:80] for r in audits]  # the run, once
    assert outcome.status is Status.SUCCEEDED
    assert (outcome.counts.files_removed, outcome.counts.bytes_removed) == (6, 6_000_000)
    assert not any(p.exists() for p in junk)
    assert content(table) == before
    # the table's line says what was done, then why
    assert outcome.did == "deleted 6 files (6.00 MB)"

    # a FULL-mode model lists again (auto waits for its next FULL run: test_vacuum_lite)
    full = _target(table, maintenance_vacuum_mode="full")
    (again,) = decide(full, read_snapshot(str(table)), ops=("vacuum",))
    assert again.reason is Reason.NOT_DUE
    assert again.detail == (
        "nothing to reclaim: no removed or untracked file older than the 168 h retention"
    )


def test_untracked_files_younger_than_the_retention_are_not_due(tmp_path: Path, sail_spark) -> None:
    table = tmp_path / "events"
    events_table(sail_spark, table, batches=1)
    failed_job_files(table, count=2, size=1000, age_days=1)  # maybe a writer still running
    (vacuum,) = decide(_target(table), read_snapshot(str(table)), ops=("vacuum",))
    assert vacuum.reason is Reason.NOT_DUE
    # the model's own retention decides: with 12 h the same files are reclaimable
    short = _target(
        table,
        maintenance_vacuum_retention_hours=12,
        maintenance_vacuum_allow_short_retention=True,
    )
    (vacuum,) = decide(short, read_snapshot(str(table)), ops=("vacuum",))
    assert vacuum.detail == "2 untracked file(s) (2.00 KB) older than the 12 h retention"


def test_a_table_too_large_to_list_is_due_once_per_interval(
    tmp_path: Path, sail_spark, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = tmp_path / "events"
    events_table(sail_spark, table, batches=2)  # 4 files in the log
    monkeypatch.setattr(reclaim, "LISTING_LIMIT", 3)
    history = HistoryStore(str(tmp_path / "history"))
    target = _target(table)
    (vacuum,) = decide(target, read_snapshot(str(table)), ops=("vacuum",), history=history)
    assert vacuum.reason is Reason.DUE
    assert "not estimated (4 files in the log, above 3" in vacuum.detail
    maintainer = Maintainer(spark=None, history=history, invocation=Invocation("t"))
    (ran,) = maintainer.maintain_model(target, ops=("vacuum",), only_due=True)
    assert ran.status is Status.SUCCEEDED
    # the interval (24 h by default) bounds the listing: not again until it has passed
    (vacuum,) = decide(target, read_snapshot(str(table)), ops=("vacuum",), history=history)
    assert vacuum.reason is Reason.TOO_SOON
    assert vacuum.due_in_h is not None
    assert 23.9 < vacuum.due_in_h <= 24


def test_the_due_check_s_listing_is_the_run_s_listing(
    tmp_path: Path, sail_spark, monkeypatch: pytest.MonkeyPatch
) -> None:
    import python_ops.ops.vacuum.candidates as vacuum_run

    table = tmp_path / "events"
    events_table(sail_spark, table, batches=2)
    junk = failed_job_files(table, count=4, size=10_000, age_days=30)
    before = content(table)
    listings: list[str] = []
    real = vacuum_run.list_visible

    def counted(storage, **kwargs):  # the real listing, counted
        listings.append(storage.root)
        return real(storage, **kwargs)

    monkeypatch.setattr(vacuum_run, "list_visible", counted)
    maintainer = Maintainer(spark=sail_spark, history=None, invocation=Invocation("t"))
    target = _target(table, maintenance_vacuum_mode="full")

    (outcome,) = maintainer.maintain_model(target, ops=("vacuum",), only_due=True)

    assert outcome.status is Status.SUCCEEDED
    assert outcome.counts.files_removed == 4
    assert not any(p.exists() for p in junk)
    assert len(listings) == 1  # the decision's dry run listed; the VACUUM it decided did not
    assert content(table) == before
    # a second decision lists again (nothing is kept once used), and finds nothing
    (again,) = maintainer.maintain_model(target, ops=("vacuum",), only_due=True)
    assert again.status is Status.NOT_DUE
    assert len(listings) == 2


@pytest.mark.parametrize("mode", ["full", "auto"])
def test_the_due_check_on_object_storage_lists_no_data_prefix(
    s3: Any, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    import pyarrow as pa
    from deltalake import write_deltalake

    from tests.helpers.s3 import FaultyProxy, delta_options

    uri = s3.uri("tables/events")
    for i in range(2):
        rows = pa.table({"p": ["x", "y"], "id": [2 * i, 2 * i + 1]})
        write_deltalake(
            uri, rows, mode="append", partition_by=["p"], storage_options=delta_options(s3.endpoint)
        )
    s3.put("tables/events/p=x/part-stray-failed-job.parquet")  # untracked: only a listing sees it
    proxy = FaultyProxy(s3.endpoint).start()
    try:
        monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.endpoint)
        target = ModelTarget(
            "events", uri, parse_config("events", {"maintenance_vacuum_mode": mode})
        )
        snapshot = read_snapshot(uri)
        read = dict(proxy.stats()["lists"])
        (vacuum,) = decide(target, snapshot, ops=("vacuum",))
        lists = proxy.stats()["lists"]
    finally:
        proxy.stop()
    assert vacuum.reason is Reason.DUE
    assert vacuum.detail.startswith("untracked files not estimated on object storage")
    assert lists == read  # the decision made no LIST request at all
    log = f"{s3.bucket}/tables/events/_delta_log/"
    # reading the snapshot listed the log only; no data prefix was listed
    assert set(lists) == {log}, lists


def test_vacuum_alone_is_decided_and_run_on_the_log_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pyarrow as pa
    from deltalake import DeltaTable, write_deltalake

    import python_ops.maintenance.running.runner as runner
    from python_ops.delta.state.file_paths import read_file_paths
    from python_ops.ops.vacuum import vacuum

    table = str(tmp_path / "events")
    for i in range(3):
        rows = pa.table({"p": ["a", "b"], "v": [i, i]})
        write_deltalake(table, rows, mode="append", partition_by=["p"])
    write_deltalake(table, pa.table({"p": ["a"], "v": [9]}), mode="overwrite", partition_by=["p"])
    DeltaTable(table).create_checkpoint()  # the 6 tombstones are checkpoint rows: columns
    config = {
        "maintenance_vacuum_retention_hours": 1,
        "maintenance_vacuum_allow_short_retention": True,
    }
    target = _target(Path(table), **config)
    later = time.time() + 2 * 3600

    on_snapshot = decide(target, read_snapshot(table), ops=("vacuum",), now_s=later)
    on_paths = decide(target, read_file_paths(table), ops=("vacuum",), now_s=later)
    assert on_paths == on_snapshot
    assert on_paths[0].detail == "6 removed file(s) older than the 1 h retention"
    with pytest.raises(ValueError, match="optimize is decided on a snapshot"):
        decide(target, read_file_paths(table), ops=("optimize",))

    def no_snapshot(location: str) -> None:
        raise AssertionError("VACUUM alone reads the log's paths, not a snapshot of objects")

    monkeypatch.setattr(runner, "read_snapshot", no_snapshot)
    only_vacuum = _target(
        Path(table),
        **config,
        maintenance_optimize_enabled=False,
        maintenance_cleanup_logs_enabled=False,
        maintenance_purge_enabled=False,
    )
    maintainer = Maintainer(spark=None, history=None, invocation=Invocation("t"))
    outcomes = maintainer.maintain_model(only_vacuum, only_due=False, dry_run=True)
    ran = [o for o in outcomes if o.ran]
    assert [(o.op, o.status) for o in ran] == [("vacuum", Status.SUCCEEDED)]
    direct = vacuum(table, dry_run=True, retention_hours=1, allow_short_retention=True)
    assert ran[0].counts.files_removed == direct.files_found
