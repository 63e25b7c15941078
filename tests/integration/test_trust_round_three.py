"""Issue 36's findings, one test each, through the command line where a user meets them.

Each failed on main 6a03820: a live file deleted through another spelling of its path, LITE
following a linked partition out of the table, half hours rounded to even, a listing emptied by
one vanished entry, exit 2 after a commit, a second LITE run listing what the first deleted,
Delta's statements sharing their settings with other threads.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from python_ops.ops.vacuum import vacuum
from python_ops.storage import open_storage
from tests.helpers.generated_tables import (
    NOW_MS,
    FileSpec,
    TableSpec,
    build,
    snapshot_tree,
)
from tests.helpers.trust import cli
from tests.helpers.vacuum import content

pytestmark = pytest.mark.slow

HOUR_S = 3600


def _spec(*files: FileSpec, linked: frozenset[str] = frozenset()) -> TableSpec:
    return TableSpec(files, linked, frozenset())


def _inventory(path: Path, rows: list[tuple[str, bool, int]]) -> Path:
    pq.write_table(
        pa.table(
            {
                "path": [r[0] for r in rows],
                "length": pa.array([0 if r[1] else 100 for r in rows], pa.int64()),
                "isDir": [r[1] for r in rows],
                "modificationTime": pa.array([r[2] for r in rows], pa.int64()),
            }
        ),
        path,
    )
    return path


@pytest.mark.parametrize("spelling", ["p=a//part-0.parquet", "p=a/./part-0.parquet"])
def test_an_inventory_row_in_another_spelling_never_deletes_the_live_file(
    tmp_path: Path, spelling: str
) -> None:
    live = FileSpec("a", "part-0.parquet", "live", True, 0)
    now_ms = int(time.time() * 1000)
    table, _ = build(tmp_path, _spec(live), now_ms=now_ms)
    old_ms = now_ms - 48 * HOUR_S * 1000  # older than the 1-hour retention below
    rows = [(f"{table}/{spelling}", False, old_ms), (f"{table}/p=a", True, old_ms)]
    report = _inventory(tmp_path / "inv.parquet", rows)
    code, _out, err = cli(
        ["vacuum", str(table), "--inventory", str(report), "--retention-hours", "1",
         "--allow-short-retention", "--json"],
        None,
    )  # fmt: skip
    assert code == 0, err
    assert (table / "p=a" / "part-0.parquet").is_file()
    assert content(table)[0] == 1  # the table still reads


def test_lite_never_follows_a_linked_partition_out_of_the_table(tmp_path: Path) -> None:
    gone = FileSpec("a", "part-0.parquet", "expired", True, 0)
    table, outside = build(tmp_path, _spec(gone, linked=frozenset({"a"})))
    twin = outside / "p=a" / "part-0.parquet"
    before = twin.read_bytes()
    result = vacuum(
        str(table), mode="lite", dry_run=False, retention_hours=24,
        allow_short_retention=True, now_ms=NOW_MS, audit=False,
    )  # fmt: skip
    assert twin.read_bytes() == before
    assert result.files_deleted == 0
    assert result.symlinks_skipped == 1  # reported as kept, not as a failed delete
    assert (table / "p=a").is_symlink()


def test_no_delete_ever_follows_a_linked_parent(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.parquet").write_bytes(b"keep")
    table = tmp_path / "t"
    (table / "_delta_log").mkdir(parents=True)
    (table / "p=a").symlink_to(outside, target_is_directory=True)
    storage = open_storage(str(table))
    assert storage.delete_files(["p=a/x.parquet"]) == ["p=a/x.parquet"]
    assert (outside / "x.parquet").read_bytes() == b"keep"
    assert storage.behind_links(["p=a/x.parquet", "q/y"]) == {"p=a/x.parquet"}


def test_a_half_hour_rounds_up_as_delta_rounds_it(tmp_path: Path) -> None:
    table, _ = build(tmp_path, _spec(FileSpec("a", "part-0.parquet", "live", True, 0)))
    young = table / "p=a" / "untracked.parquet"
    young.write_bytes(b"x" * 10)
    forty_minutes_ago = time.time() - 40 * 60
    os.utime(young, (forty_minutes_ago, forty_minutes_ago))
    code, _out, err = cli(
        ["vacuum", str(table), "--retention-hours", "0.5", "--allow-short-retention",
        ],
        None,
    )  # fmt: skip
    assert code == 0, err
    assert young.exists()  # 0.5 h is 1 h in Delta: a 40-minute-old file stays


def test_a_vanishing_entry_never_empties_a_listing(tmp_path: Path) -> None:
    table, _ = build(tmp_path, _spec(FileSpec("a", "part-0.parquet", "live", True, 0)))
    log = table / "_delta_log"
    storage = open_storage(str(table))
    stop = threading.Event()

    def churn(worker: int) -> None:  # a writer staging files and renaming them away
        i = 0
        while not stop.is_set():
            staged = log / f".tmp-{worker}-{i % 64}.json"
            staged.write_bytes(b"{}")
            staged.rename(log / f".moved-{worker}-{i % 64}")
            (log / f".moved-{worker}-{i % 64}").unlink()
            i += 1

    workers = [threading.Thread(target=churn, args=(w,)) for w in range(2)]
    for w in workers:
        w.start()
    try:
        empty = sum(
            1 for _ in range(4000) if not any(e.path.endswith(".json") for e in
                                              storage.list_dir("_delta_log") if e.path[11] != ".")
        )  # fmt: skip
    finally:
        stop.set()
        for w in workers:
            w.join()
    assert empty == 0


def test_a_second_lite_run_does_not_list_what_the_first_deleted(tmp_path: Path) -> None:
    table, _ = build(
        tmp_path,
        _spec(
            FileSpec("a", "part-0.parquet", "expired", True, 0),
            FileSpec("a", "part-1.parquet", "live", True, 0),
        ),
    )
    zero = {"retention_hours": 0, "allow_short_retention": True, "audit": False}
    first = vacuum(str(table), mode="lite", dry_run=False, now_ms=NOW_MS, **zero)
    assert first.files_deleted == 1
    second = vacuum(str(table), mode="lite", dry_run=True, now_ms=NOW_MS + 1000, **zero)
    assert first.commit_range == (0, 1)
    assert second.commit_range == (1, 1)  # Delta's window: min(latest, last + 1)
    assert [f.path for f in second.paths] == []  # but nothing already deleted is listed


def test_an_optimize_that_committed_then_failed_exits_1_naming_the_commit(
    tmp_path: Path,
) -> None:
    from deltalake import write_deltalake

    table = tmp_path / "t"
    for part in ("a", "b"):
        for i in range(3):
            write_deltalake(
                str(table), pa.table({"p": [part] * 10, "v": list(range(i * 10, i * 10 + 10))}),
                mode="append", partition_by=["p"],
            )  # fmt: skip
    victim = sorted((table / "p=b").glob("*.parquet"))[0]
    victim.write_bytes(victim.read_bytes()[:20])  # partition b cannot be read: it fails second
    code, out, err = cli(["optimize", str(table), "--zorder-by", "v"], None)
    assert code == 1, (out, err)
    assert "committed version(s) 6, then failed" in err
    assert "internal error" not in err


def test_delta_statements_keep_their_settings_off_the_shared_session(delta_spark: Any) -> None:
    from python_ops.delta_sql import session_sql
    from python_ops.ops.optimize.writers.delta_statement import USER_METADATA

    sql = session_sql(delta_spark)
    seen: list[str] = []
    stop = threading.Event()

    def watch() -> None:  # another dbt thread, reading the shared session's settings
        while not stop.is_set():
            value = delta_spark.conf.get(USER_METADATA, None)
            if value:
                seen.append(value)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        for _ in range(5):
            rows = sql.run_with_settings(f"SET {USER_METADATA}", {USER_METADATA: "ours"})
            assert any(r.get("value") == "ours" for r in rows)  # the statement sees it
    finally:
        stop.set()
        watcher.join()
    assert seen == []
    assert delta_spark.conf.get(USER_METADATA, None) in (None, "")


def test_the_property_tables_are_real_delta_tables(tmp_path: Path) -> None:
    spec = _spec(
        FileSpec("b c", "part-0.parquet", "live", True, 0),
        FileSpec("50%", "part-1.parquet", "live", True, 0),
        FileSpec("a", "part-2.parquet", "untracked", True, 0),
    )
    table, _ = build(tmp_path, spec)
    rows, _digest = content(table)
    assert rows == 2  # delta-rs reads the generated log (its odd spellings: Delta only)
    shutil.rmtree(tmp_path / "outside")
    assert "p=a/part-2.parquet" in snapshot_tree(table)


def test_a_stray_s3_key_in_another_spelling_is_kept_never_deleted_as_the_live_one(
    s3: Any,
) -> None:
    from deltalake import write_deltalake

    from tests.helpers.s3 import delta_options

    uri = s3.uri("tables/t")
    write_deltalake(
        uri, pa.table({"p": ["a"], "v": [1]}), partition_by=["p"],
        storage_options=delta_options(s3.endpoint),
    )  # fmt: skip
    (live,) = [k for k in s3.keys("tables/t/p=a/")]
    name = live.rpartition("/")[2]
    for stray in (f"tables/t/p=a//{name}", f"tables/t/p=a/./{name}", "tables/t/p=a//"):
        s3.put(stray)
    later = int(time.time() * 1000) + 40 * 24 * HOUR_S * 1000
    zero = {"retention_hours": 0, "allow_short_retention": True, "audit": False}
    dry = vacuum(uri, dry_run=True, now_ms=later, **zero)
    done = vacuum(uri, dry_run=False, now_ms=later, **zero)
    assert [f.path for f in dry.paths] == [f.path for f in done.paths] == []
    keys = s3.keys("tables/t/")
    assert live in keys
    assert {f"tables/t/p=a//{name}", f"tables/t/p=a/./{name}", "tables/t/p=a//"} <= keys


def test_vacuum_beside_a_committing_writer_never_refuses_and_loses_nothing(
    tmp_path: Path,
) -> None:
    from deltalake import write_deltalake

    table = str(tmp_path / "t")
    write_deltalake(table, pa.table({"v": [0]}))
    appends = 40
    errors: list[BaseException] = []

    def writer() -> None:
        try:
            for i in range(1, appends + 1):
                write_deltalake(table, pa.table({"v": [i]}), mode="append")
        except BaseException as err:  # pragma: no cover - reported below
            errors.append(err)

    thread = threading.Thread(target=writer)
    thread.start()
    runs = 0
    while thread.is_alive() or runs == 0:
        # a real run each time: an entry vanishing mid-listing must never empty the log
        vacuum(table, dry_run=False, retention_hours=1, allow_short_retention=True, audit=False)
        runs += 1
    thread.join()
    assert errors == []
    rows, _ = content(Path(table))
    assert rows == appends + 1
    assert runs > 1
