"""VACUUM FULL, VACUUM LITE and log cleanup on S3Proxy behind the fault proxy, as a user runs them.

Each op runs through the command line (in this process) on a real Delta table (written by
delta-rs), with faults injected on the op's own requests: transient ones (503 SlowDown, 500,
a connection reset mid-body) the op must finish through, and lasting ones (503 on every
attempt, ``DeleteObjects`` answers listing keys under ``<Error>``) where it must stop with exit
1 naming what it did not delete, or with exit 2 before anything changed. In every case the
table reads back with the same rows and checksum (delta-rs), every live file is still there,
the store holds exactly the selection less what was deleted, the selection equals the dry
run's (without faults), and the audit record counts what happened. Attempts are counted from
the proxy's log.
"""

from __future__ import annotations

import json
import logging
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake

from python_ops.cli.main import main
from python_ops.errors import MaintenanceError
from python_ops.ops.log_cleanup import cleanup_logs
from tests.helpers.s3 import S3Bucket, delta_options
from tests.helpers.s3_faults import FaultProxy
from tests.helpers.s3proxy import ON_S3PROXY
from tests.helpers.table_digest import table_digest

pytestmark = ON_S3PROXY
DAY_MS = 24 * 3_600_000

OPS = {
    "full": ["vacuum", "--retention-hours", "0", "--allow-short-retention", "--json"],
    "lite": ["vacuum", "--mode", "lite", "--retention-hours", "0", "--allow-short-retention"],
    "logs": ["cleanup-logs", "--retention-days", "0", "--no-checkpoint", "--json"],
}
OPS["lite"].append("--json")


def content(s3: S3Bucket, uri: str) -> tuple[int, str, list[str]]:
    """Rows, their checksum and the live files' keys, as delta-rs reads the table."""
    table = DeltaTable(uri, storage_options=delta_options(s3.endpoint))
    rows, digest = table_digest(table.to_pyarrow_table())
    return rows, digest, sorted(table.file_uris())


def overwritten_table(s3: S3Bucket, key: str) -> str:
    """A partitioned table written once, overwritten twice (4 removed files), checkpointed at
    version 2 and appended to once more, with one untracked file (FULL's only)."""
    uri = s3.uri(key)
    for i in range(4):
        rows = pa.table({"p": ["x", "y"], "id": [i, i + 10]})
        mode = "overwrite" if i in (1, 2) else "append"
        write_deltalake(
            uri, rows, mode=mode, partition_by=["p"], storage_options=delta_options(s3.endpoint)
        )
        if i == 2:
            DeltaTable(uri, storage_options=delta_options(s3.endpoint)).create_checkpoint()
    s3.put(f"{key}/p=x/part-untracked.parquet")
    return uri


@pytest.fixture
def proxy(s3: S3Bucket) -> Iterator[FaultProxy]:
    with FaultProxy(s3.endpoint) as running:
        yield running


TRANSIENT = {
    "slowdown": [
        {"op": op, "fault": "slowdown", "times": 2}
        for op in ("ListObjectsV2", "GetObject", "DeleteObjects", "PutObject")
    ],
    "internal": [
        {"op": op, "fault": "internal", "times": 2}
        for op in ("ListObjectsV2", "GetObject", "DeleteObjects", "PutObject")
    ],
    "reset": [
        {"op": op, "fault": "reset", "times": 1}
        for op in ("ListObjectsV2", "GetObject", "DeleteObjects", "PutObject")
    ],
}
LASTING = {
    "partial delete": [{"op": "DeleteObjects", "fault": "partial", "code": "AccessDenied"}],
    "503 on every delete": [{"op": "DeleteObjects", "fault": "slowdown", "times": -1}],
    "503 on every listing": [{"op": "ListObjectsV2", "fault": "slowdown", "times": -1}],
    "503 on every write": [{"op": "PutObject", "fault": "slowdown", "times": -1}],
}


class Run:
    """One op run on one table: exit code (the command line's), result, audit record, log."""

    def __init__(
        self, op: str, uri: str, tmp_path: Path, capsys: Any, caplog: Any, *, dry_run: bool
    ) -> None:
        if op == "logs":  # the API: cleanup judges log ages by day, so it runs 2 days ahead
            caplog.clear()
            with caplog.at_level(logging.INFO, logger="python_ops.ops.audit"):
                try:
                    outcome = cleanup_logs(
                        uri,
                        retention_days=1,
                        dry_run=dry_run,
                        checkpoint_if_needed=False,
                        now_ms=int(time.time() * 1000) + 2 * DAY_MS,
                    )
                except MaintenanceError as err:
                    self.code, self.result, self.error = 2, None, str(err)
                else:  # the command line's exit code for this result
                    self.code, self.result = (
                        (1 if outcome.delete_failures else 0),
                        outcome.to_dict(),
                    )
                    self.error = ""
            self.records = [
                json.loads(r.getMessage())
                for r in caplog.records
                if r.name == "python_ops.ops.audit"
            ]
            return
        audit = tmp_path / f"audit-{op}-{dry_run}.jsonl"
        argv = [OPS[op][0], uri, *OPS[op][1:], "--audit-log", str(audit)]
        self.code = main([*argv, "--dry-run"] if dry_run else argv)
        out, self.error = capsys.readouterr()
        self.result = json.loads(out) if out.strip() else None
        lines = audit.read_text().splitlines() if audit.exists() else []
        self.records = [json.loads(line) for line in lines]

    def selected(self) -> set[str]:
        assert self.result is not None
        if "files" in self.result:
            return {f["path"] for f in self.result["files"]}
        return {f["path"] for f in self.result["paths"] if not f["is_dir"]}


@pytest.fixture
def tables(s3: S3Bucket) -> Any:
    def make(op: str) -> tuple[str, str]:
        """Two identical tables: one for a fault-free run, one for the run under faults."""
        return overwritten_table(s3, f"tables/{op}-clean"), overwritten_table(s3, f"tables/{op}")

    return make


def ops_seen(proxy: FaultProxy, *, faulted: bool) -> Counter[str]:
    return Counter(e["op"] for e in proxy.log() if bool(e["fault"]) == faulted)


def keys_of(s3: S3Bucket, uri: str) -> set[str]:
    prefix = uri.split("/", 3)[3] + "/"
    return {k.removeprefix(prefix) for k in s3.keys(prefix)}


def check_nothing_live_lost(s3: S3Bucket, uri: str, before: Any, kept: set[str]) -> None:
    """Same rows and checksum; every live file and every log file the table needs is there."""
    assert content(s3, uri) == before
    live = {u.removeprefix(uri + "/") for u in before[2]}
    assert live <= kept


@pytest.mark.parametrize("fault", list(TRANSIENT))
@pytest.mark.parametrize("op", list(OPS))
def test_an_op_finishes_through_transient_faults(
    s3: S3Bucket,
    proxy: FaultProxy,
    tables: Any,
    op: str,
    fault: str,
    tmp_path: Path,
    capsys: Any,
    caplog: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clean, uri = tables(op)
    before, keys_before = content(s3, uri), keys_of(s3, uri)
    monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.endpoint)
    dry = Run(op, uri, tmp_path, capsys, caplog, dry_run=True)
    assert dry.code == 0
    assert dry.selected()
    proxy.faults()
    baseline = Run(op, clean, tmp_path, capsys, caplog, dry_run=False)
    expected = ops_seen(proxy, faulted=False)
    proxy.faults(*TRANSIENT[fault])
    real = Run(op, uri, tmp_path, capsys, caplog, dry_run=False)
    assert (real.code, baseline.code) == (0, 0), real.error
    assert real.selected() == dry.selected()
    assert len(baseline.selected()) == len(dry.selected())  # its twin: other file names
    assert real.result is not None
    assert real.result["files_deleted"] == len(dry.selected())
    kept = keys_of(s3, uri)
    assert keys_before - kept == dry.selected()  # what was deleted: the dry run's selection
    check_nothing_live_lost(s3, uri, before, kept)
    # every faulted request was sent again, nothing else: the fault-free run's requests + faults
    faulted = ops_seen(proxy, faulted=True)
    times = TRANSIENT[fault][0]["times"]
    assert faulted == {name: times for name in expected}
    assert ops_seen(proxy, faulted=False) == expected
    assert {e["client"] for e in proxy.log()} == {"signed"}
    record = real.records[-1]
    assert (record["status"], record["files_deleted"], record["delete_failures"]) == (
        "succeeded",
        len(dry.selected()),
        0,
    )


@pytest.mark.parametrize("fault", list(LASTING))
@pytest.mark.parametrize("op", list(OPS))
def test_an_op_stops_on_lasting_faults_naming_what_it_did_not_do(
    s3: S3Bucket,
    proxy: FaultProxy,
    tables: Any,
    op: str,
    fault: str,
    tmp_path: Path,
    capsys: Any,
    caplog: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _, uri = tables(op)
    before, keys_before = content(s3, uri), keys_of(s3, uri)
    monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.endpoint)
    dry = Run(op, uri, tmp_path, capsys, caplog, dry_run=True)
    proxy.faults(*LASTING[fault])
    real = Run(op, uri, tmp_path, capsys, caplog, dry_run=False)
    kept = keys_of(s3, uri)
    check_nothing_live_lost(s3, uri, before, kept)
    deleted = keys_before - kept
    record = real.records[-1]
    if fault == "503 on every write":  # VACUUM's state (_last_vacuum_info) not written
        assert real.code == 0, real.error
        assert real.result is not None
        assert deleted == real.selected() == dry.selected()
        assert real.result["delete_failures"] == 0
        assert "_delta_log/_last_vacuum_info" not in kept  # the claim stays the old one (none)
        assert real.result.get("last_vacuum_version") is None
        assert record.get("last_vacuum_version") is None
        writes = 3 if op != "logs" else 0  # log cleanup writes nothing here (--no-checkpoint)
        assert ops_seen(proxy, faulted=True) == ({"PutObject": writes} if writes else {})
        return
    if fault == "503 on every listing":  # stopped before anything changed: a named error
        assert real.code == 2
        assert "cannot list" in real.error
        assert "SlowDown (3 attempts)" in real.error
        assert deleted == set()
        assert record["status"] == "failed"
        assert "cannot list" in record["error"]
        assert ops_seen(proxy, faulted=True) == {"ListObjectsV2": 3}
        return
    assert real.code == 1
    assert real.result is not None
    not_deleted = set(real.result["paths_not_deleted"])  # named in the result
    assert real.selected() == dry.selected()
    assert deleted | not_deleted == dry.selected()
    assert not deleted & not_deleted
    assert real.result["files_deleted"] == len(deleted) == record["files_deleted"]
    assert real.result["delete_failures"] == len(not_deleted) == record["delete_failures"]
    # VACUUM deletes in batches (one here); log cleanup one file per request, oldest first,
    # and nothing newer after a file it could not delete (no gap in the log)
    if fault == "503 on every delete":
        assert deleted == set()
        assert ops_seen(proxy, faulted=True) == {"DeleteObjects": 3}  # 3 attempts, then stop
    elif op == "logs":  # the oldest file refused: it and every newer one kept
        assert deleted == set()
        assert ops_seen(proxy, faulted=True) == {"DeleteObjects": 1}
        assert ops_seen(proxy, faulted=False)["DeleteObjects"] == 0
    else:  # every other key of the one batch refused (AccessDenied): not asked again
        assert len(not_deleted) == (len(dry.selected()) + 1) // 2
        assert ops_seen(proxy, faulted=True) == {"DeleteObjects": 1}
    if op == "lite":  # LITE records where it continues only when nothing was left behind
        assert "_delta_log/_last_vacuum_info" not in kept
        assert real.result["last_vacuum_version"] is None
