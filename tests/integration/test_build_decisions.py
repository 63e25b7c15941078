"""After a build, "nothing is due" proved without the snapshot is what the snapshot decides.

``build_decisions`` decides from the build's own commits, the writer's version checksum and the
history's bounds. Over generated histories of real delta-rs tables (overwrites, appends,
deletes, retention changes, checkpoints, leftovers of failed jobs, partitioned or not, with
gaps from a minute to 40 days between builds), whenever it says nothing is due, the snapshot's
rules (``due.decide``, as the post-hook runs them) find nothing due either, and neither does a
listing that trusts no recorded bound (a listing's, or the one fact a created table's first
build keeps: ``empty_origin``); and when it cannot tell, the post-hook reads the snapshot and
keeps what that proves.

Each build happens at a virtual time: its commit's timestamps, its removes' deletion times and
the files' modification times are set to it, as a writer whose clock agrees with ours would
write them. The checksum file is the one Sail and Delta on Spark write beside each commit
(``numFiles``, ``tableSizeBytes``, ``metadata``, ``protocol``), written here from the snapshot,
since delta-rs writes none.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import replace
from pathlib import Path

import pyarrow as pa
from deltalake import DeltaTable, write_deltalake
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from python_ops.delta.state.snapshot import Snapshot, read_snapshot
from python_ops.invocation import Invocation
from python_ops.maintenance.configuration.config import parse_config
from python_ops.maintenance.decisions.build_decisions import decide_from_build, decide_from_log
from python_ops.maintenance.decisions.due import Decision, decide
from python_ops.maintenance.facts.build_writes import BuildFacts, BuildWrites, read_build_writes
from python_ops.maintenance.records.history import HistoryStore
from python_ops.maintenance.records.outcomes import Reason
from python_ops.maintenance.rules.empty_origin import ORIGIN_OP
from python_ops.maintenance.rules.log_bounds import bounds_from_snapshot, keep_bounds
from python_ops.maintenance.selection.targets import ModelTarget
from python_ops.storage import open_storage

MINUTE, HOUR, DAY = 60_000, 3_600_000, 86_400_000
T0 = 1_800_000_000_000

Step = tuple[str, int, int]  # (kind, size, gap before it in ms)

steps = st.lists(
    st.tuples(
        st.sampled_from(
            ["overwrite", "overwrite", "append", "delete", "retention", "checkpoint", "leftover"]
        ),
        st.integers(min_value=1, max_value=4),
        st.sampled_from([MINUTE, HOUR, 2 * DAY, 8 * DAY, 40 * DAY]),
    ),
    min_size=1,
    max_size=9,
)


def _rows(step: int, files: int, partitioned: bool) -> pa.Table:
    ids = list(range(step * 100, step * 100 + 3 * files))
    data = {"id": ids, "name": [f"n{i}" for i in ids]}
    if partitioned:
        data["day"] = [f"d{i % files}" for i in ids]
    return pa.table(data)


def _at(path: Path, ms: int) -> None:
    os.utime(path, (ms / 1000, ms / 1000))


def _stamp(table: Path, version: int, now_ms: int) -> None:
    """Rewrite a new commit as written at ``now_ms`` (its data files too)."""
    commit = table / "_delta_log" / f"{version:020d}.json"
    actions = [json.loads(line) for line in commit.read_text().splitlines() if line.strip()]
    for action in actions:
        if "commitInfo" in action:
            action["commitInfo"]["timestamp"] = now_ms
        if "remove" in action:
            action["remove"]["deletionTimestamp"] = now_ms
        if "add" in action:
            action["add"]["modificationTime"] = now_ms
            _at(table / action["add"]["path"], now_ms)
    commit.write_text("".join(json.dumps(a) + "\n" for a in actions))
    _at(commit, now_ms)


def _write_checksum(table: Path, snapshot: Snapshot) -> None:
    """The checksum file a writer leaves beside the version (Sail's fields)."""
    meta = snapshot.metadata
    checksum = {
        "tableSizeBytes": sum(f.size_bytes for f in snapshot.files),
        "numFiles": len(snapshot.files),
        "numMetadata": 1,
        "numProtocol": 1,
        "metadata": {
            "id": meta.table_id,
            "format": {"provider": "parquet", "options": {}},
            "schemaString": meta.schema_string,
            "partitionColumns": list(meta.partition_columns),
            "configuration": meta.configuration,
        },
        "protocol": snapshot.protocol,
    }
    path = table / "_delta_log" / f"{snapshot.version:020d}.crc"
    path.write_text(json.dumps(checksum))


def _build(table: Path, index: int, kind: str, size: int, partitioned: bool) -> None:
    """One build's write (or, for ``checkpoint`` and ``leftover``, what happens beside one)."""
    rows = _rows(index, size, partitioned)
    by = ["day"] if partitioned else None
    if kind == "overwrite" or not (table / "_delta_log").exists():
        write_deltalake(str(table), rows, mode="overwrite", partition_by=by)
    elif kind == "append":
        write_deltalake(str(table), rows, mode="append")
    elif kind == "delete":
        DeltaTable(str(table)).delete(f"id % {size + 1} = 0")
    elif kind == "retention":
        DeltaTable(str(table)).alter.set_table_properties(
            {"delta.logRetentionDuration": f"interval {size * 3} days"}
        )
    else:
        write_deltalake(str(table), rows, mode="append")


def _full(
    target: ModelTarget,
    snapshot: Snapshot,
    history: HistoryStore,
    now_ms: int,
    empty: int | None,
    *,
    trust: bool = True,
) -> list:
    return decide(
        target,
        snapshot,
        history=history,
        now_s=now_ms / 1000,
        invocation=Invocation("check"),
        trust_bounds=trust,
        empty_at_ms=empty,
    )


def _copy(root: Path) -> HistoryStore:
    """A copy of the history as it stands (what a check records there is not kept)."""
    shutil.rmtree(root / "history-copy", ignore_errors=True)
    if (root / "history").exists():
        shutil.copytree(root / "history", root / "history-copy")
    return HistoryStore(str(root / "history-copy"))


def _assert_not_due_either(quick: list, full: list, *, same_words: tuple[str, ...]) -> None:
    for fast, slow in zip(quick, full, strict=True):
        assert fast.op == slow.op
        assert fast.reason is not Reason.DUE
        assert slow.reason is not Reason.DUE, (fast, slow)
        if fast.op in same_words:
            assert fast.detail == slow.detail


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    history_steps=steps,
    partitioned=st.booleans(),
    min_small_files=st.sampled_from([2, 5, 10]),
    lite=st.booleans(),
)
def test_nothing_due_without_the_snapshot_is_nothing_due_with_it(
    tmp_path_factory, history_steps: list[Step], partitioned: bool, min_small_files: int, lite: bool
) -> None:
    root = tmp_path_factory.mktemp("built")
    table = root / "orders"
    history = HistoryStore(str(root / "history"))
    config = parse_config(
        "orders",
        {
            "materialized": "table",
            "maintenance_min_small_files": min_small_files,
            "maintenance_vacuum_mode": "lite" if lite else "full",
        },
    )
    now = T0
    for index, (kind, size, gap) in enumerate(history_steps):
        now += gap
        empty = not table.exists()
        before = None if empty else read_snapshot(str(table)).version
        facts = BuildFacts(
            started_at_ms=now, version_before=before, build_s=1.0, location_was_empty=empty
        )
        if kind == "leftover" and not empty:  # a failed job's file, written now
            leftover = table / f"part-failed-{index}.parquet"
            leftover.write_bytes(b"x" * 64)
            _at(leftover, now)
        if kind == "checkpoint" and not empty:
            DeltaTable(str(table)).create_checkpoint()
            for name in os.listdir(table / "_delta_log"):
                if "checkpoint" in name:
                    _at(table / "_delta_log" / name, now)
        _build(table, index, kind, size, partitioned)
        snapshot = read_snapshot(str(table))
        for version in range(-1 if before is None else before, snapshot.version):
            _stamp(table, version + 1, now)
        snapshot = read_snapshot(str(table))
        _write_checksum(table, snapshot)
        now += MINUTE  # the post-hook, a minute after the build began
        writes = read_build_writes(str(table), facts)
        target = replace(ModelTarget("orders", str(table), config), build_scope=writes.scope())
        quick = decide_from_build(
            target,
            writes,
            storage=open_storage(str(table)),
            history=history,
            invocation=Invocation("hook"),
            now_ms=now,
        )
        event("snapshot read" if quick is None else "decided without the snapshot")
        if quick is None:  # the post-hook reads the snapshot: decides, and keeps its bounds
            _full(target, snapshot, history, now, facts.started_at_ms if empty else None)
            keep_bounds(
                history,
                target,
                bounds_from_snapshot(snapshot, now_ms=now),
                invocation_id="hook",
                how="the post-hook read the table's snapshot",
            )
        else:  # the snapshot's rules, on a copy of the history (what they record is not kept)
            full = _full(target, snapshot, _copy(root), now, facts.started_at_ms if empty else None)
            _assert_not_due_either(quick, full, same_words=("vacuum", "purge"))
            # and a listing, which trusts no recorded bound (a listing's, a created table's)
            listed = _full(target, snapshot, _copy(root), now, None, trust=False)
            _assert_not_due_either(quick, listed, same_words=("purge",))
        # a run-operation now (no build): it lists for VACUUM instead of trusting a bound
        plain = ModelTarget("orders", str(table), config)
        logged = decide_from_log(plain, history=_copy(root), invocation=None, now_ms=now)
        event("run-operation: snapshot read" if logged is None else "run-operation: without it")
        if logged is not None:
            full = _full(plain, snapshot, _copy(root), now, None, trust=False)
            _assert_not_due_either(logged, full, same_words=("purge",))
        history.flush()


def _after_build(
    target: ModelTarget, writes: BuildWrites, history: HistoryStore, now_ms: int
) -> list[Decision] | None:
    """The post-hook's decision after ``writes``, at ``now_ms`` (its table's own storage)."""
    return decide_from_build(
        target,
        writes,
        storage=open_storage(target.location),
        history=history,
        invocation=None,
        now_ms=now_ms,
    )


def test_a_first_build_and_the_next_decide_without_the_snapshot(tmp_path: Path) -> None:
    table = tmp_path / "orders"
    history = HistoryStore(str(tmp_path / "history"))
    target = ModelTarget("orders", str(table), parse_config("orders", {"materialized": "table"}))
    facts = BuildFacts(started_at_ms=T0, version_before=None, build_s=1.0, location_was_empty=True)
    write_deltalake(str(table), _rows(0, 1, False))
    _stamp(table, 0, T0)
    _write_checksum(table, read_snapshot(str(table)))
    writes = read_build_writes(str(table), facts)
    first = _after_build(target, writes, history, T0 + MINUTE)
    assert first is not None
    assert [d.reason for d in first] == [Reason.NOT_DUE] * 4 + [Reason.DISABLED]
    details = {d.op: d.detail for d in first}
    assert details["optimize"].startswith("just rebuilt: version 0 wrote all 1 file(s)")
    assert "where nothing existed" in details["vacuum"]
    assert details["purge"] == "no deletion vectors"
    history.flush()  # the first build's bounds, from its empty location: one fact, one row
    assert [r.op for r in history.records()] == [ORIGIN_OP]

    later = T0 + DAY
    write_deltalake(str(table), _rows(1, 1, False), mode="overwrite")
    _stamp(table, 1, later)
    _write_checksum(table, read_snapshot(str(table)))
    facts = BuildFacts(started_at_ms=later, version_before=0, build_s=1.0)
    writes = read_build_writes(str(table), facts)
    second = _after_build(target, writes, history, later)
    assert second is not None  # the recorded bounds hold for a week
    assert "where nothing existed" in {d.op: d.detail for d in second}["vacuum"]
    history.flush()
    assert [r.op for r in history.records()] == [ORIGIN_OP]  # kept by the first build only
    after_a_week = _after_build(target, writes, history, T0 + 8 * DAY)
    assert after_a_week is None  # version 1 removed a file: it may pass the 168 h retention


def test_without_a_checksum_or_bounds_the_snapshot_decides(tmp_path: Path) -> None:
    table = tmp_path / "orders"
    history = HistoryStore(str(tmp_path / "history"))
    target = ModelTarget("orders", str(table), parse_config("orders", {"materialized": "table"}))
    write_deltalake(str(table), _rows(0, 1, False))
    facts = BuildFacts(started_at_ms=T0, version_before=None, build_s=1.0, location_was_empty=True)
    writes = read_build_writes(str(table), facts)
    # delta-rs writes no checksum, but a build that created the table read its whole log:
    # the state is replayed from it, as a snapshot is
    assert not (table / "_delta_log" / f"{0:020d}.crc").exists()
    assert writes.state is not None
    assert writes.state.num_files == 1
    decided = _after_build(target, writes, history, T0)
    assert decided is not None
    assert "where nothing existed" in {d.op: d.detail for d in decided}["vacuum"]
    # the next build (version 1, delta-rs again): no checksum and not the whole log
    write_deltalake(str(table), _rows(1, 1, False), mode="append")
    after = BuildFacts(started_at_ms=T0, version_before=0, build_s=1.0)
    writes = read_build_writes(str(table), after)
    assert writes.state is None
    assert _after_build(target, writes, history, T0) is None
    _write_checksum(table, read_snapshot(str(table)))
    # a table that was there before the build and no recorded bounds: not known
    fresh = HistoryStore(str(tmp_path / "fresh history"))
    writes = read_build_writes(str(table), after)
    assert _after_build(target, writes, fresh, T0) is None
