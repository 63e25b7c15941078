"""VACUUM LITE and ``auto`` mode: the log's removes instead of a listing, Delta's state file.

Tables are written by real writers: delta-rs here, Delta Lake 4.4 itself (the JVM Spark Connect
server of ``delta_spark``) in the tests marked ``classic_spark``, which hold our LITE to Delta's
own ``VACUUM ... LITE DRY RUN`` and let each continue the other's work through
``_delta_log/_last_vacuum_info``. Commit times cannot be aged on a table Delta wrote, so those
run with a zero retention (``retentionDurationCheck.enabled=false`` on Delta,
``allow_short_retention`` here): every commit is then before the cutoff.
"""

from __future__ import annotations

import json
import random
import shutil
import signal
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake

from python_ops.cli.arguments import build_parser
from python_ops.delta.state.snapshot import read_snapshot
from python_ops.invocation import Invocation
from python_ops.maintenance.configuration.config import parse_config
from python_ops.maintenance.decisions.due import decide
from python_ops.maintenance.records.outcomes import Reason, Status
from python_ops.maintenance.running.run_results import MaintenanceRun
from python_ops.maintenance.running.runner import Maintainer
from python_ops.maintenance.selection.targets import ModelTarget
from python_ops.ops.log_cleanup import cleanup_logs
from python_ops.ops.vacuum import vacuum
from python_ops.ops.vacuum.sources.lite import LiteVacuumUnavailableError
from python_ops.ops.vacuum.sources.state import LAST_VACUUM_INFO, read_last_vacuum_info
from python_ops.storage import open_storage
from tests.helpers.paths import ROOT
from tests.helpers.trust import cli
from tests.helpers.vacuum import DAY_S, kill_when_marked, untracked

ZERO = {"retention_hours": 0, "allow_short_retention": True}
LATER_MS = 60_000  # "now" a minute ahead: every file just written is before the cutoff


def _now_ms() -> int:
    return int(time.time() * 1000) + LATER_MS


def _batch(rng: random.Random, n: int = 6) -> pa.Table:
    ids = [rng.randrange(1000) for _ in range(n)]
    return pa.table({"id": ids, "p": [i % 3 for i in ids]})


def generated(path: Path, seed: int, steps: int = 9) -> Path:
    """A partitioned table with appends, overwrites, deletes and compactions (delta-rs)."""
    rng = random.Random(seed)
    uri = str(path)
    write_deltalake(uri, _batch(rng), partition_by=["p"])
    for _ in range(steps):
        op = rng.choice(["append", "append", "overwrite", "replace", "delete", "compact"])
        if op == "append":
            write_deltalake(uri, _batch(rng), mode="append", partition_by=["p"])
        elif op == "overwrite":
            write_deltalake(uri, _batch(rng), mode="overwrite", partition_by=["p"])
        elif op == "replace":
            p = rng.randrange(3)
            rows = pa.table({"id": [p, p + 3], "p": [p, p]})
            write_deltalake(uri, rows, mode="overwrite", predicate=f"p = {p}", partition_by=["p"])
        elif op == "delete":
            DeltaTable(uri).delete(f"id % 4 = {rng.randrange(4)}")
        else:
            DeltaTable(uri).optimize.compact()
    return path


def _files(result) -> set[str]:  # type: ignore[no-untyped-def]
    return {f.path for f in result.paths if not f.is_dir}


def expired_tombstones(path: Path, cutoff_ms: int) -> set[str]:
    """Removed files (and their DV files) deleted before the cutoff that are not live again."""
    snap = read_snapshot(str(path))
    live = {f.relative_path for f in snap.files}
    live |= {f.deletion_vector.file_path(snap.location) for f in snap.files if f.deletion_vector}
    out: set[str | None] = set()
    for t in snap.tombstones:
        if t.deletion_timestamp_ms < cutoff_ms:
            out.add(t.relative_path)
            if t.deletion_vector is not None:
                out.add(t.deletion_vector.file_path(snap.location))
    return {p for p in out if p is not None} - {p for p in live if p is not None}


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_lite_selects_the_expired_tombstones_a_subset_of_full(tmp_path: Path, seed: int) -> None:
    table = generated(tmp_path / "t", seed)
    untracked(table, "p=1/leftover.parquet", days=30)  # only FULL finds it
    now = _now_ms()

    lite = vacuum(str(table), mode="lite", now_ms=now, **ZERO)
    full = vacuum(str(table), mode="full", now_ms=now, **ZERO)

    assert _files(lite) == expired_tombstones(table, lite.cutoff_ms)
    assert _files(lite), "the generated table removed files"
    assert _files(lite) <= _files(full)
    assert "p=1/leftover.parquet" in _files(full) - _files(lite)
    assert (lite.mode, lite.files_listed, lite.dirs_found) == ("lite", 0, 0)
    assert lite.commit_range == (0, read_snapshot(str(table)).version)
    assert (full.mode, full.mode_reason) == ("full", "FULL requested")


def test_a_file_live_again_is_never_a_candidate(fixture_table) -> None:
    table = fixture_table("table-with-dv-small")  # its file is removed, then added again
    lite = vacuum(str(table), mode="lite", now_ms=_now_ms(), **ZERO)
    assert lite.commit_range == (0, 1)
    assert lite.paths == ()


def test_lite_continues_where_the_last_run_stopped(tmp_path: Path) -> None:
    table = generated(tmp_path / "t", seed=7, steps=4)
    first = vacuum(str(table), mode="lite", dry_run=False, now_ms=_now_ms(), **ZERO)
    version = read_snapshot(str(table)).version
    assert first.files_deleted == len(first.paths) > 0
    assert first.last_vacuum_version == version
    state = json.loads((table / LAST_VACUUM_INFO).read_text())
    assert state["latestCommitVersionOutsideOfRetentionWindow"] == version

    DeltaTable(str(table)).delete("id >= 0")  # removes every live file in a new commit
    live_before = {f.relative_path for f in read_snapshot(str(table), version=version).files}
    second = vacuum(str(table), mode="lite", now_ms=_now_ms(), **ZERO)
    # Delta's window starts at min(latest, last + 1): only the new commit's removes
    assert second.commit_range == (version + 1, version + 1)
    assert _files(second) == live_before


def test_lite_refuses_after_log_cleanup_and_full_repairs(tmp_path: Path) -> None:
    table = generated(tmp_path / "t", seed=3, steps=6)
    cleaned = cleanup_logs(str(table), dry_run=False, now_ms=_now_ms() + 40 * DAY_S * 1000)
    before = set(table.rglob("*.parquet"))
    assert cleaned.files_deleted > 0
    earliest = min(int(p.name[:20]) for p in (table / "_delta_log").glob("*.json"))
    assert earliest > 0

    with pytest.raises(LiteVacuumUnavailableError, match=r"run VACUUM FULL.*--mode full"):
        vacuum(str(table), mode="lite", dry_run=False, now_ms=_now_ms(), **ZERO)
    assert set(table.rglob("*.parquet")) == before  # nothing deleted
    assert not (table / LAST_VACUUM_INFO).exists()

    auto = vacuum(str(table), mode="auto", dry_run=False, now_ms=_now_ms(), **ZERO)
    assert auto.mode == "full"
    assert auto.mode_reason.startswith(
        f"auto: LITE cannot be complete: the log starts at version {earliest}"
    )
    info = read_last_vacuum_info(open_storage(str(table)))
    assert info is not None
    assert info.version == read_snapshot(str(table)).version
    assert info.full_vacuum_started_ms is not None
    after = vacuum(str(table), mode="lite", now_ms=_now_ms(), **ZERO)  # no refusal now
    latest = read_snapshot(str(table)).version
    # as Delta: the window starts at min(latest, last + 1); FULL already deleted those files
    assert after.commit_range == (latest, latest)
    assert not any((table / f.path).exists() for f in after.paths)


def test_lite_after_a_full_run_without_a_version_starts_at_the_earliest_commit(
    tmp_path: Path,
) -> None:
    table = generated(tmp_path / "t", seed=5, steps=3)
    # Delta 4.4's real FULL run writes this (delta issue #4162)
    (table / LAST_VACUUM_INFO).write_text("{}\n")
    info = read_last_vacuum_info(open_storage(str(table)))
    assert info is not None
    assert info.version is None
    lite = vacuum(str(table), mode="lite", now_ms=_now_ms(), **ZERO)
    assert lite.commit_range is not None
    assert lite.commit_range[0] == 0
    auto = vacuum(str(table), mode="auto", now_ms=_now_ms(), **ZERO)
    assert auto.mode_reason.startswith("auto: no FULL run recorded")


def test_auto_runs_full_every_interval(tmp_path: Path) -> None:
    table = generated(tmp_path / "t", seed=11, steps=3)
    now = _now_ms()
    first = vacuum(str(table), mode="auto", dry_run=False, now_ms=now, **ZERO)
    assert first.mode == "full"
    info = read_last_vacuum_info(open_storage(str(table)))
    assert info is not None
    assert (info.full_vacuum_started_ms, info.mode) == (now, "full")

    soon = vacuum(str(table), mode="auto", now_ms=now + 2 * DAY_S * 1000, **ZERO)
    assert (soon.mode, soon.mode_reason) == (
        "lite",
        "auto: last FULL run 2.0 days ago, next FULL in 5.0 days",
    )
    late = vacuum(str(table), mode="auto", now_ms=now + 8 * DAY_S * 1000, **ZERO)
    assert (late.mode, late.mode_reason) == (
        "full",
        "auto: last FULL run 8.0 days ago, FULL every 7 days",
    )
    shorter = vacuum(
        str(table), mode="auto", full_interval_days=1, now_ms=now + 2 * DAY_S * 1000, **ZERO
    )
    assert shorter.mode == "full"
    # a LITE run keeps the FULL run's time
    vacuum(str(table), mode="lite", dry_run=False, now_ms=now + DAY_S * 1000, **ZERO)
    info = read_last_vacuum_info(open_storage(str(table)))
    assert info is not None
    assert (info.full_vacuum_started_ms, info.mode) == (now, "lite")


_KILLED_RUN = textwrap.dedent(
    """
    import sys, time, pathlib
    from python_ops.ops.vacuum import vacuum

    def hook(done, total):
        pathlib.Path(sys.argv[2]).write_text(f"{done}/{total}")
        time.sleep(600)  # killed here, mid-run

    vacuum(sys.argv[1], mode="lite", dry_run=False, retention_hours=0,
           allow_short_retention=True, max_workers=1, on_progress=hook, progress_interval_s=0)
    """
)


def test_kill_9_during_a_lite_run_claims_no_more_than_deleted(tmp_path: Path) -> None:
    table = generated(tmp_path / "t", seed=2, steps=5)
    first = vacuum(str(table), mode="lite", dry_run=False, now_ms=_now_ms(), **ZERO)
    claimed = (table / LAST_VACUUM_INFO).read_bytes()
    assert first.last_vacuum_version is not None
    for rows in range(6):  # more commits that remove files
        write_deltalake(
            str(table), _batch(random.Random(rows)), mode="overwrite", partition_by=["p"]
        )
    pending = _files(vacuum(str(table), mode="lite", now_ms=_now_ms(), **ZERO))
    assert len(pending) >= 6

    marker = tmp_path / "marker"
    code = kill_when_marked(_KILLED_RUN, str(table), marker=marker, cwd=ROOT)
    assert code == -signal.SIGKILL

    gone = {p for p in pending if not (table / p).exists()}
    assert 0 < len(gone) < len(pending), marker.read_text()
    assert (table / LAST_VACUUM_INFO).read_bytes() == claimed  # still the first run's claim
    assert not list((table / "_delta_log").glob("._last_vacuum_info.*"))

    rerun = vacuum(str(table), mode="lite", dry_run=False, now_ms=_now_ms(), **ZERO)
    assert _files(rerun) == pending  # the window again: deleted files count as gone
    assert not any((table / p).exists() for p in pending)
    assert rerun.last_vacuum_version == read_snapshot(str(table)).version


def test_cli_mode_lite_and_mode_is_never_an_abbreviation(tmp_path: Path, capsys) -> None:
    table = generated(tmp_path / "t", seed=4, steps=3)
    argv = ["vacuum", str(table), "--retention-hours", "0", "--allow-short-retention"]
    code, out, err = cli([*argv, "--mode", "lite", "--dry-run"], None)
    assert code == 0, err
    assert "mode LITE: LITE requested" in out
    assert "read the removes of commits 0.." in out
    assert "(nothing listed)" in out

    args = build_parser().parse_args([*argv, "--mode", "lite"])
    assert (args.mode, args.model) == ("lite", None)  # not --model lite
    for abbreviated in (["--mod", "lite"], ["--retention-hour", "0"], ["--dry"]):
        with pytest.raises(SystemExit) as exit_info:
            build_parser().parse_args(["vacuum", str(table), *abbreviated])
        assert exit_info.value.code == 2
        assert "unrecognized arguments" in capsys.readouterr().err

    code, out, err = cli([*argv, "--mode", "auto", "--json", "--dry-run"], None)
    assert code == 0, err
    result = json.loads(out)
    assert (result["mode"], result["mode_reason"]) == (
        "full",
        "auto: no FULL run recorded in _delta_log/_last_vacuum_info; only FULL finds untracked "
        "files",
    )


# --- against Delta Lake 4.4 itself ---------------------------------------------------------


_STATEMENTS = (
    "CREATE TABLE {t} (id BIGINT, p INT) USING delta PARTITIONED BY (p) "
    "TBLPROPERTIES ('delta.enableDeletionVectors'='{dv}', "
    "'delta.enableInCommitTimestamps'='{ict}')",
    "INSERT INTO {t} SELECT id, id % 3 FROM range(0, 30, 1, 3)",
    "INSERT INTO {t} SELECT id, id % 3 FROM range(30, 60, 1, 2)",
    "DELETE FROM {t} WHERE id % 7 = 0",
    "UPDATE {t} SET id = id + 1000 WHERE id % 5 = 0",
    "DELETE FROM {t} WHERE p = 2",
    "OPTIMIZE {t}",
)


@pytest.fixture(scope="module")
def delta_written(delta_spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Callable[..., str]:
    """A partitioned table Delta writes (inserts, DELETE, UPDATE, a partition dropped, OPTIMIZE).

    Each kind is written once per module (seven Delta statements) and copied to where a test
    wants it, file times kept: the tests change their copies, never the original.
    """
    written: dict[tuple[bool, bool], Path] = {}
    originals = tmp_path_factory.mktemp("delta-written")

    def at(path: Path, *, deletion_vectors: bool, in_commit_timestamps: bool = False) -> str:
        kind = (deletion_vectors, in_commit_timestamps)
        if kind not in written:
            original = originals / f"dv={kind[0]}-ict={kind[1]}"
            for statement in _STATEMENTS:
                delta_spark.sql(
                    statement.format(
                        t=f"delta.`{original}`",
                        dv=str(deletion_vectors).lower(),
                        ict=str(in_commit_timestamps).lower(),
                    )
                ).collect()
            written[kind] = original
        shutil.copytree(written[kind], path, symlinks=True)
        return f"delta.`{path}`"

    return at


def delta_lite_dry_run(spark: Any, t: str, path: Path) -> set[str]:
    """Delta's own ``VACUUM ... LITE DRY RUN`` at a zero retention, as relative paths."""
    rows = spark.sql(f"VACUUM {t} LITE RETAIN 0 HOURS DRY RUN").collect()
    root = str(path).rstrip("/") + "/"
    out = set()
    for row in rows:
        absolute = row["path"].removeprefix("file:").replace("///", "/")
        assert absolute.startswith(root), absolute
        out.add(absolute[len(root) :])
    return out


@pytest.fixture
def delta(delta_spark: Any) -> Any:
    delta_spark.conf.set("spark.databricks.delta.retentionDurationCheck.enabled", "false")
    return delta_spark


@pytest.mark.parametrize(
    ("deletion_vectors", "in_commit_timestamps"),
    [(False, False), (True, False), (False, True)],
    ids=["plain", "deletion-vectors", "in-commit-timestamps"],
)
@pytest.mark.classic_spark
@pytest.mark.slow
def test_lite_selects_what_deltas_lite_selects(
    delta: Any,
    delta_written: Callable[..., str],
    tmp_path: Path,
    deletion_vectors: bool,
    in_commit_timestamps: bool,
) -> None:
    path = tmp_path / "t"
    t = delta_written(
        path, deletion_vectors=deletion_vectors, in_commit_timestamps=in_commit_timestamps
    )
    ict = read_snapshot(str(path)).metadata.configuration.get("delta.enableInCommitTimestamps")
    assert ict == str(in_commit_timestamps).lower()
    untracked(path, "p=0/leftover.parquet", days=30)

    theirs = delta_lite_dry_run(delta, t, path)
    ours = vacuum(str(path), mode="lite", now_ms=_now_ms(), **ZERO)
    full = vacuum(str(path), mode="full", now_ms=_now_ms(), **ZERO)

    assert _files(ours) == theirs
    assert theirs == expired_tombstones(path, ours.cutoff_ms)
    assert _files(ours) <= _files(full)
    assert "p=0/leftover.parquet" not in theirs
    if deletion_vectors:  # a DV file only a tombstone references is LITE's too
        assert any(p.endswith(".bin") for p in theirs), theirs


@pytest.mark.classic_spark
@pytest.mark.slow
def test_delta_and_ours_continue_each_others_lite(
    delta: Any, delta_written: Callable[..., str], tmp_path: Path
) -> None:
    path = tmp_path / "t"
    t = delta_written(path, deletion_vectors=False)
    created = read_snapshot(str(path)).version

    delta.sql(f"VACUUM {t} LITE RETAIN 0 HOURS").collect()  # Delta's real LITE
    info = read_last_vacuum_info(open_storage(str(path)))
    assert info is not None
    assert info.version == created
    delta.sql(f"DELETE FROM {t} WHERE p = 0").collect()
    latest = read_snapshot(str(path)).version  # after VACUUM START / END and the DELETE

    ours = vacuum(str(path), mode="lite", now_ms=_now_ms(), **ZERO)
    assert ours.commit_range == (created + 1, latest)
    assert _files(ours) == delta_lite_dry_run(delta, t, path)
    removed_now = {f.relative_path for f in read_snapshot(str(path), version=latest - 1).files}
    assert _files(ours) == removed_now - {f.relative_path for f in read_snapshot(str(path)).files}

    done = vacuum(str(path), mode="lite", dry_run=False, now_ms=_now_ms(), **ZERO)
    assert done.last_vacuum_version == latest
    assert not any((path / p).exists() for p in _files(ours))

    delta.sql(f"UPDATE {t} SET id = id + 1 WHERE p = 1").collect()
    updated = read_snapshot(str(path)).version
    theirs = delta_lite_dry_run(delta, t, path)  # Delta reads our file: starts after `latest`
    again = vacuum(str(path), mode="lite", now_ms=_now_ms(), **ZERO)
    assert again.commit_range == (latest + 1, updated)
    assert _files(again) == theirs
    assert theirs
    assert not theirs & _files(ours)

    delta.sql(f"VACUUM {t} LITE RETAIN 0 HOURS").collect()  # Delta's real LITE continues too
    assert not any((path / p).exists() for p in theirs)
    info = read_last_vacuum_info(open_storage(str(path)))
    assert info is not None
    assert info.version == updated


@pytest.mark.classic_spark
@pytest.mark.slow
def test_after_deltas_full_run_and_log_cleanup_both_refuse_lite(
    delta: Any, delta_written: Callable[..., str], tmp_path: Path
) -> None:
    path = tmp_path / "t"
    t = delta_written(path, deletion_vectors=False)
    delta.sql(f"VACUUM {t} RETAIN 0 HOURS").collect()  # Delta 4.4's FULL: no version (#4162)
    info = read_last_vacuum_info(open_storage(str(path)))
    assert info is not None
    assert info.version is None
    ours = vacuum(str(path), mode="lite", now_ms=_now_ms(), **ZERO)
    assert ours.commit_range is not None
    assert ours.commit_range[0] == 0
    assert _files(ours) == delta_lite_dry_run(delta, t, path)  # both from commit 0 again

    cleaned = cleanup_logs(str(path), dry_run=False, now_ms=_now_ms() + 40 * DAY_S * 1000)
    assert cleaned.files_deleted > 0
    data = set(path.rglob("*.parquet"))
    with pytest.raises(Exception, match="DELTA_CANNOT_VACUUM_LITE"):
        delta.sql(f"VACUUM {t} LITE RETAIN 0 HOURS DRY RUN").collect()
    with pytest.raises(LiteVacuumUnavailableError, match=r"no _delta_log/_last_vacuum_info"):
        vacuum(str(path), mode="lite", dry_run=False, now_ms=_now_ms(), **ZERO)
    assert set(path.rglob("*.parquet")) == data

    repaired = vacuum(str(path), mode="auto", dry_run=False, now_ms=_now_ms(), **ZERO)
    assert repaired.mode == "full"
    assert repaired.last_vacuum_version == read_snapshot(str(path)).version
    delta.sql(f"VACUUM {t} LITE RETAIN 0 HOURS DRY RUN").collect()  # Delta's LITE runs again


def test_a_models_auto_vacuum_is_due_for_untracked_files_only_when_it_would_run_full(
    tmp_path: Path,
) -> None:
    table = generated(tmp_path / "t", seed=8, steps=3)
    junk = untracked(table, "p=0/part-failed-job.parquet", days=30)
    auto = ModelTarget("events", str(table), parse_config("events", {}))
    maintainer = Maintainer(spark=None, history=None, invocation=Invocation("test"))

    (first,) = maintainer.maintain_model(auto, ops=("vacuum",))
    assert first.status is Status.SUCCEEDED
    assert first.counts.files_removed == 1
    assert not junk.exists()
    assert first.summary == (
        "deleted 1 file (100 B); FULL (auto: no FULL run recorded in "
        "_delta_log/_last_vacuum_info; only FULL finds untracked files)"
    )
    assert "; FULL (auto: no FULL run recorded" in MaintenanceRun((first,), 1, (), 0.0).table()

    junk = untracked(table, "p=0/part-failed-job-2.parquet", days=30)
    (later,) = decide(auto, read_snapshot(str(table)), ops=("vacuum",))
    assert later.reason is Reason.NOT_DUE
    assert "untracked files wait for the next FULL run (last FULL run 0.0 days ago" in later.detail
    daily = ModelTarget(
        "events", str(table), parse_config("events", {"maintenance_vacuum_full_interval_days": 0})
    )
    (due,) = decide(daily, read_snapshot(str(table)), ops=("vacuum",))
    assert due.reason is Reason.DUE
    lite = ModelTarget(
        "events", str(table), parse_config("events", {"maintenance_vacuum_mode": "lite"})
    )
    (never,) = decide(lite, read_snapshot(str(table)), ops=("vacuum",))
    assert never.reason is Reason.NOT_DUE
    assert junk.exists()


def test_lite_on_s3_writes_and_reads_its_state(tmp_path: Path, s3: Any) -> None:
    local = generated(tmp_path / "t", seed=6, steps=5)
    expected = vacuum(str(local), mode="lite", now_ms=_now_ms(), **ZERO)
    uri = s3.upload_tree(local, "tables/t")
    keys = s3.keys("tables/t/")

    done = vacuum(uri, mode="lite", dry_run=False, now_ms=_now_ms(), **ZERO)

    assert _files(done) == _files(expected)
    assert done.files_deleted == len(_files(expected)) > 0
    assert keys - s3.keys("tables/t/") == {f"tables/t/{p}" for p in _files(expected)}
    body = s3.client.get_object(Bucket=s3.bucket, Key=f"tables/t/{LAST_VACUUM_INFO}")["Body"]
    state = json.loads(body.read())
    latest = read_snapshot(str(local)).version
    assert state["latestCommitVersionOutsideOfRetentionWindow"] == latest
    again = vacuum(uri, mode="lite", now_ms=_now_ms(), **ZERO)
    assert again.commit_range == (latest, latest)  # min(latest, last + 1), as Delta
