"""VACUUM's due check lists a table once per retention period, not once per build.

A listing that found nothing to reclaim bounds when an untracked file can next pass the
retention (``untracked_bound``); the bound is kept in the history and later decisions skip the
listing until it passes; a table built where nothing existed is bounded from its build's start
without any listing. Real delta-rs tables, real history tables; the proof that a decision
did not list: an untracked file planted after the listing with a back-dated time (which any
listing would find) is found only once the bound has passed. A created table's bound is kept
as the one fact both bounds come from (``empty_origin``), read back by the next build.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pyarrow as pa
from deltalake import write_deltalake
from hypothesis import given, settings
from hypothesis import strategies as st

from python_ops.delta.state.snapshot import read_snapshot
from python_ops.invocation import Invocation
from python_ops.maintenance.configuration.config import parse_config
from python_ops.maintenance.decisions.due import decide
from python_ops.maintenance.facts.build_start import location_is_empty
from python_ops.maintenance.facts.build_writes import BuildFacts, read_build_writes
from python_ops.maintenance.records.history import HistoryStore
from python_ops.maintenance.records.outcomes import Reason
from python_ops.maintenance.rules.empty_origin import ORIGIN_OP, EmptyOrigin, recorded_origin
from python_ops.maintenance.rules.reclaim import trusted_bound
from python_ops.maintenance.rules.untracked_bound import (
    CHECK_OP,
    bound_from_listing,
    recorded_bound,
)
from python_ops.maintenance.running.runner import Maintainer
from python_ops.maintenance.selection.targets import ModelTarget
from python_ops.ops.vacuum.candidates import KeptListing
from tests.helpers.vacuum import content

HOUR_MS = 3_600_000
RETENTION_H = 168
NOTHING = "nothing to reclaim: no removed or untracked file older than the 168 h retention"


def _table(tmp_path: Path) -> Path:
    table = tmp_path / "orders"
    write_deltalake(str(table), pa.table({"id": [1, 2, 3]}))
    write_deltalake(str(table), pa.table({"id": [4]}), mode="append")
    return table


def _target(table: Path, **config: object) -> ModelTarget:
    return ModelTarget(
        "orders", str(table), parse_config("orders", {"materialized": "table", **config})
    )


def _plant(table: Path, name: str, *, age_h: float, now_s: float) -> Path:
    path = table / name
    path.write_bytes(b"x" * 64)
    when = now_s - age_h * 3600
    os.utime(path, (when, when))
    return path


def _vacuum_decision(
    table: Path, history: HistoryStore, now_s: float, *, trust: bool = True, **config: object
):
    """VACUUM's decision as the post-hook makes it (``trust``: skip the listing under a bound)."""
    (decision,) = decide(
        _target(table, **config),
        read_snapshot(str(table)),
        ops=("vacuum",),
        history=history,
        now_s=now_s,
        invocation=Invocation("t"),
        trust_bounds=trust,
    )
    return decision


def test_a_listing_that_found_nothing_is_not_repeated_until_its_bound(tmp_path: Path) -> None:
    table = _table(tmp_path)
    history = HistoryStore(str(tmp_path / "history"))
    now = time.time()
    young = _plant(table, "part-young-failed.parquet", age_h=RETENTION_H - 10, now_s=now)
    before = content(table)

    first = _vacuum_decision(table, history, now)
    assert first.reason is Reason.NOT_DUE
    assert (
        first.detail
        == "nothing to reclaim: no removed or untracked file older than the 168 h retention"
    )
    history.flush()  # the command's end: the bound is one history row
    bound = recorded_bound(history, _target(table))
    assert bound is not None
    assert bound.listed_at_ms == int(now * 1000)
    # the young leftover passes the retention 10 h after the listing: that is the bound
    assert bound.not_before_ms == int(young.stat().st_mtime * 1000) + RETENTION_H * HOUR_MS
    assert [r.op for r in history.records()] == [CHECK_OP]

    # a leftover planted now, back-dated a month: a listing would find it at once
    _plant(table, "part-old-failed.parquet", age_h=30 * 24, now_s=now)
    later = _vacuum_decision(table, history, now + 9 * 3600)
    assert later.reason is Reason.NOT_DUE
    assert "no untracked file can pass it before" in later.detail

    # a run-operation on a schedule (maintain_all, the report) lists whatever the bound says
    scheduled = _vacuum_decision(table, history, now + 9 * 3600, trust=False)
    assert scheduled.reason is Reason.DUE
    assert scheduled.detail.startswith("1 untracked file(s)")

    # past the bound the post-hook's decision lists again and finds both
    after = _vacuum_decision(table, history, now + 11 * 3600)
    assert after.reason is Reason.DUE
    assert after.detail.startswith("2 untracked file(s)")
    assert content(table) == before  # deciding deletes nothing


def test_a_shorter_retention_or_another_location_lists_again(tmp_path: Path) -> None:
    table = _table(tmp_path)
    history = HistoryStore(str(tmp_path / "history"))
    now = time.time()
    _vacuum_decision(table, history, now)
    history.flush()
    _plant(table, "part-failed.parquet", age_h=30, now_s=now)

    same = _vacuum_decision(table, history, now + 60)
    assert same.reason is Reason.NOT_DUE
    assert "no untracked file can pass it before" in same.detail
    shorter = _vacuum_decision(
        table,
        history,
        now + 60,
        maintenance_vacuum_retention_hours=24,
        maintenance_vacuum_allow_short_retention=True,
    )
    assert shorter.reason is Reason.DUE  # the bound was for 168 h: listed again
    assert shorter.detail.startswith("1 untracked file(s)")

    moved = tmp_path / "moved"
    os.rename(table, moved)  # the model's table elsewhere: another table's files
    elsewhere = _vacuum_decision(moved, history, now + 60)
    assert elsewhere.detail == NOTHING  # listed: the bound was another location's


def test_the_runner_keeps_the_bound_and_the_next_post_hook_uses_it(tmp_path: Path) -> None:
    table = _table(tmp_path)
    history = HistoryStore(str(tmp_path / "history"))
    maintainer = Maintainer(spark=None, history=history, invocation=Invocation("build-1"))
    (first,) = maintainer.maintain_model(_target(table), ops=("vacuum",))  # maintain_all's
    assert first.reason is Reason.NOT_DUE
    history.flush()
    (row,) = history.records()
    assert (row.op, row.invocation_id, row.table_location) == (CHECK_OP, "build-1", str(table))
    fresh = HistoryStore(history.location)  # the next dbt process
    hook = Maintainer(
        spark=None, history=fresh, invocation=Invocation("build-2"), trust_listing_bounds=True
    )
    (second,) = hook.maintain_model(_target(table), ops=("vacuum",))
    assert "no untracked file can pass it before" in second.detail
    scheduled = Maintainer(spark=None, history=fresh, invocation=Invocation("maintain_all"))
    (third,) = scheduled.maintain_model(_target(table), ops=("vacuum",))
    assert third.detail == NOTHING  # a run-operation lists


@settings(max_examples=200, deadline=None)
@given(
    ages_h=st.lists(st.floats(min_value=0, max_value=400, allow_nan=False), max_size=20),
    statted=st.lists(st.booleans(), min_size=20, max_size=20),
    dirs=st.lists(st.booleans(), min_size=20, max_size=20),
)
def test_the_bound_is_never_after_a_seen_file_can_expire(
    ages_h: list[float], statted: list[bool], dirs: list[bool]
) -> None:
    now = 1_800_000_000_000
    retention_ms = RETENTION_H * HOUR_MS
    cutoff = now - retention_ms
    rows = [
        (f"f{i}", None if not statted[i] else int(now - age * HOUR_MS), dirs[i])
        for i, age in enumerate(ages_h)
    ]
    entries = pa.table(
        {
            "path": pa.array([r[0] for r in rows], pa.string()),
            "size": pa.array([0] * len(rows), pa.int64()),
            "mtime": pa.array([r[1] for r in rows], pa.int64()),
            "is_dir": pa.array([r[2] for r in rows], pa.bool_()),
        }
    )
    bound = bound_from_listing(
        KeptListing(entries, len(rows), 0),
        listed_at_ms=now,
        cutoff_ms=cutoff,
        retention_hours=RETENTION_H,
    )
    assert bound.not_before_ms <= now + retention_ms  # a file written after the listing
    for _, mtime, is_dir in rows:
        if mtime is not None and not is_dir and mtime >= cutoff:  # young, seen, unprotected
            assert bound.not_before_ms <= mtime + retention_ms
    assert bound.not_before_ms >= now  # nothing seen had expired (the listing found none)
    assert bound.holds(now_ms=now, retention_hours=RETENTION_H) == (bound.not_before_ms > now)
    assert not bound.holds(now_ms=now, retention_hours=RETENTION_H - 1)


def _built(tmp_path: Path, name: str) -> tuple[Path, BuildFacts]:
    """A table written where nothing existed, with the facts its build's start recorded."""
    table = tmp_path / name
    facts = BuildFacts(
        started_at_ms=int(time.time() * 1000),
        version_before=None,
        build_s=0.0,
        location_was_empty=location_is_empty(str(table)),
    )
    write_deltalake(str(table), pa.table({"id": [1, 2, 3]}))
    return table, facts


def test_a_table_built_where_nothing_existed_is_bounded_without_a_listing(
    tmp_path: Path,
) -> None:
    table, facts = _built(tmp_path, "orders")
    assert facts.location_was_empty
    history = HistoryStore(str(tmp_path / "history"))
    # a leftover back-dated a month, planted after the build began: only a listing finds it,
    # and a file there since before the build cannot exist (nothing existed there)
    _plant(table, "part-old-failed.parquet", age_h=30 * 24, now_s=time.time())
    writes = read_build_writes(str(table), facts)
    hook = Maintainer(
        spark=None,
        history=history,
        invocation=Invocation("build-1"),
        trust_listing_bounds=True,
        build=writes,
    )
    (first,) = hook.maintain_model(_target(table), ops=("vacuum",))
    assert first.reason is Reason.NOT_DUE  # not listed: the leftover is not seen
    assert "where nothing existed" in first.detail
    history.flush()
    (row,) = history.records()  # one fact for both bounds, not a listing's row
    assert row.op == ORIGIN_OP
    assert "nothing existed" in (row.reason or "")
    assert recorded_bound(history, _target(table)) is None
    table_id = read_snapshot(str(table)).metadata.table_id
    assert recorded_origin(history, _target(table)) == EmptyOrigin(table_id, facts.started_at_ms)
    bound, proof = trusted_bound(
        history, _target(table), RETENTION_H, now_ms=int(time.time() * 1000), empty_at_ms=None
    )
    assert bound is not None
    assert "where nothing existed" in proof
    assert bound.not_before_ms == facts.started_at_ms + RETENTION_H * HOUR_MS

    # the next build's post-hook trusts the recorded bound; a scheduled run lists and finds it
    later = Maintainer(
        spark=None, history=history, invocation=Invocation("build-2"), trust_listing_bounds=True
    )
    (second,) = later.maintain_model(_target(table), ops=("vacuum",))
    assert "no untracked file can pass it before" in second.detail
    scheduled = Maintainer(spark=None, history=history, invocation=Invocation("maintain_all"))
    (third,) = scheduled.maintain_model(_target(table), ops=("vacuum",))
    assert third.reason is Reason.DUE
    assert third.detail.startswith("1 untracked file(s)")


def test_a_location_with_anything_in_it_is_listed(tmp_path: Path) -> None:
    # a dropped table's files left behind, a stray file, a dangling link: not empty
    leftovers = tmp_path / "leftovers"
    leftovers.mkdir()
    _plant(leftovers, "part-old.parquet", age_h=30 * 24, now_s=time.time())
    (tmp_path / "stray").write_bytes(b"x")
    os.symlink(tmp_path / "nowhere", tmp_path / "dangling")
    for name in ("leftovers", "stray", "dangling"):
        assert not location_is_empty(str(tmp_path / name)), name
    assert location_is_empty(str(tmp_path / "absent"))
    assert location_is_empty(f"file://{tmp_path}/absent")
    assert not location_is_empty("s3://bucket/absent")  # an object store is not asked

    facts = BuildFacts(int(time.time() * 1000), None, 0.0, location_was_empty=False)
    write_deltalake(str(leftovers), pa.table({"id": [1]}))
    history = HistoryStore(str(tmp_path / "history"))
    hook = Maintainer(
        spark=None,
        history=history,
        invocation=Invocation("build-1"),
        trust_listing_bounds=True,
        build=read_build_writes(str(leftovers), facts),
    )
    (decision,) = hook.maintain_model(_target(leftovers), ops=("vacuum",), dry_run=True)
    assert decision.reason is Reason.DUE  # listed: the dropped table's file is found
    assert decision.detail.startswith("1 untracked file(s)")
    # a bound past its time is not trusted either: an empty location long ago lists again
    old = BuildFacts(
        int(time.time() * 1000) - (RETENTION_H + 1) * HOUR_MS, None, 0.0, location_was_empty=True
    )
    stale = Maintainer(
        spark=None,
        history=HistoryStore(str(tmp_path / "history-2")),
        invocation=Invocation("build-2"),
        trust_listing_bounds=True,
        build=read_build_writes(str(leftovers), old),
    )
    (listed,) = stale.maintain_model(_target(leftovers), ops=("vacuum",), dry_run=True)
    assert listed.reason is Reason.DUE
    assert listed.detail.startswith("1 untracked file(s)")
