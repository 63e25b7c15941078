"""The last runs kept beside the history are used only when they are the history's own.

Over generated interleavings of two writers (stores that read the history, append to it and
flush it, in any order; a store replaced by a new one that reads again; the table deleted and
made again by the next append), a new store's last
runs are always those of every row in the table, whether it took them from the summary or read
the table; and the summary is used whenever its writer's commit is still the newest. A summary
of another commit, of a table made again, or a file that does not parse is not used.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from python_ops.maintenance.records.history import HistoryRecord, HistoryStore
from python_ops.maintenance.records.history_last import LastRun
from python_ops.maintenance.records.history_summary import (
    SUMMARY_NAME,
    head_commit,
    read_summary,
    write_summary,
)
from tests.integration.test_history_last import answers, expected, records

START = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)

steps = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.sampled_from((0, 1)), st.lists(records, max_size=4)),
        st.tuples(st.just("flush"), st.sampled_from((0, 1)), st.just([])),
        st.tuples(st.just("read"), st.sampled_from((0, 1)), st.just([])),
        st.tuples(st.just("renew"), st.sampled_from((0, 1)), st.just([])),
        st.tuples(st.just("drop"), st.just(0), st.just([])),
    ),
    min_size=1,
    max_size=10,
)


def _record(i: int, model: str = "m0") -> HistoryRecord:
    return HistoryRecord(
        invocation_id=f"inv-{i}",
        model=model,
        table_location=f"/t/{model}",
        op="vacuum",
        parameters="{}",
        dry_run=False,
        status="succeeded",
        error=None,
        started_at=START + dt.timedelta(hours=i),
        duration_s=0.5,
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plan=steps)
def test_a_new_store_answers_what_every_row_says(
    plan: list[tuple[str, int, list[HistoryRecord]]],
) -> None:
    with tempfile.TemporaryDirectory() as top:
        location = str(Path(top) / "history")
        stores = [HistoryStore(location), HistoryStore(location)]
        written: list[HistoryRecord] = []
        for step, who, batch in plan:
            if step == "append":
                stores[who].append(batch)
                written += batch
            elif step == "flush":
                stores[who].flush()
            elif step == "read":
                stores[who].last_success("m0", "vacuum")
            elif step == "drop":  # the table deleted (another may make it again)
                shutil.rmtree(location, ignore_errors=True)
                written = []
            else:
                stores[who] = HistoryStore(location)
        want = expected(written)
        fresh = HistoryStore(location)
        assert answers(fresh) == want
        head = head_commit(location)
        summary = read_summary(location, head) if head is not None else None
        event(f"summary kept: {summary is not None}")
        if summary is not None:  # used: it is exactly the table's
            assert summary == fresh._last == want
        shutil.rmtree(location, ignore_errors=True)


def test_a_writer_that_followed_its_read_leaves_the_summary_the_next_store_uses(
    tmp_path: Path,
) -> None:
    location = str(tmp_path / "history")
    first = HistoryStore(location)
    first.append([_record(1)])
    writer = HistoryStore(location)
    assert writer.last_success("m0", "vacuum") is not None  # read at version 0
    writer.defer([_record(2)])
    writer.flush()  # version 1, right after the read: the summary is version 1's
    head = head_commit(location)
    assert head is not None
    assert head.version == 1
    summary = read_summary(location, head)
    assert summary is not None
    assert summary[("m0", "vacuum")].started_at == _record(2).started_at
    reader = HistoryStore(location)
    assert reader.last_success("m0", "vacuum") == summary[("m0", "vacuum")]
    assert reader._summarized == head  # taken from the file, the table not read


def test_a_commit_by_another_writer_between_leaves_no_summary(tmp_path: Path) -> None:
    location = str(tmp_path / "history")
    HistoryStore(location).append([_record(1)])
    writer = HistoryStore(location)
    writer.last_success("m0", "vacuum")  # read at version 0
    HistoryStore(location).append([_record(3, "m1")])  # version 1, not this writer's
    writer.defer([_record(2)])
    writer.flush()  # version 2: what it holds lacks m1's row
    assert not (tmp_path / "history" / SUMMARY_NAME).exists()
    assert HistoryStore(location).last_success("m1", "vacuum") is not None


def test_a_summary_of_another_commit_or_table_or_text_is_not_used(tmp_path: Path) -> None:
    location = str(tmp_path / "history")
    HistoryStore(location).append([_record(1)])
    head = head_commit(location)
    assert head is not None
    lie = {("m0", "vacuum"): LastRun("m0", "vacuum", "/t/m0", "{}", 9)}  # not the table's
    assert write_summary(location, head, lie)
    assert read_summary(location, head) == lie  # the file names version 0, as written

    HistoryStore(location).append([_record(2)])  # a commit since: version 1
    assert HistoryStore(location).last_success("m0", "vacuum").started_at == _record(2).started_at

    # the table made again, to the same version: another file, another inode and time
    shutil.rmtree(location)
    HistoryStore(location).append([_record(1)])
    again = head_commit(location)
    assert again is not None
    assert again.version == head.version
    assert again != head
    (tmp_path / "history" / SUMMARY_NAME).write_text(
        json.dumps(
            {
                "format": 1,
                "head": [head.version, head.device, head.inode, head.size, head.ctime_ns],
                "runs": [["m0", "vacuum", "/t/m0", "{}", 1, None]],
            }
        )
    )
    assert read_summary(location, again) is None
    assert HistoryStore(location).last_success("m0", "vacuum").started_at == _record(1).started_at

    for text in ("", "{", "[]", '{"format": 2}', json.dumps({"format": 1, "head": [], "runs": []})):
        (tmp_path / "history" / SUMMARY_NAME).write_text(text)
        assert read_summary(location, again) is None
    good = [again.version, again.device, again.inode, again.size, again.ctime_ns]
    for runs in (
        [["m0", "vacuum", "/t/m0", "{}", 1.5, None]],
        [["m0", "vacuum", "/t/m0", "{}", 1, 2]],
        [["m0", "vacuum", "/t/m0", "{}", 1]],
        [["m0", "vacuum", "/t/m0", "{}", 1, None], ["m0", "vacuum", "/t/m0", "{}", 2, None]],
        [["m0", "vacuum", "/t/m0", "{}", True, None]],
    ):
        (tmp_path / "history" / SUMMARY_NAME).write_text(
            json.dumps({"format": 1, "head": good, "runs": runs})
        )
        assert read_summary(location, again) is None


def test_a_table_made_again_between_a_read_and_an_append_leaves_no_summary(
    tmp_path: Path,
) -> None:
    location = str(tmp_path / "history")
    HistoryStore(location).append([_record(1)])
    writer = HistoryStore(location)
    writer.last_success("m0", "vacuum")  # read at version 0
    shutil.rmtree(location)
    HistoryStore(location).append([_record(3, "m1")])  # another table's version 0
    writer.defer([_record(2)])
    writer.flush()  # version 1, after a version 0: not the one it read
    assert not (tmp_path / "history" / SUMMARY_NAME).exists()
    fresh = HistoryStore(location)
    assert fresh.last_success("m0", "vacuum").started_at == _record(2).started_at
    assert fresh.last_success("m1", "vacuum") is not None
