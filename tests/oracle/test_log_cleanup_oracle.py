"""Our expired-log cleanup against Delta Lake 4.4's own metadata cleanup, on the Delta corpus.

For each corpus table (written by Delta 4.4, ``tests.helpers.delta_corpus``), on two copies with
the same files and times, where every log file of a version before the newest checkpoint is
backdated 5 days (monotonic, one second per version) and the rest is young:

- copy A: our dry run says the oldest version the cleanup keeps; Delta reads every version
  from it (``VERSION AS OF``: row count and a checksum of the rows); our
  ``cleanup_logs(retention_days=1)`` runs, keeping that version; Delta then reads every version
  from it again and gets the same rows;
- copy B: Delta's own cleanup, triggered the way Delta runs it (after a checkpoint): an
  ``ALTER TABLE ... SET TBLPROPERTIES`` with ``delta.logRetentionDuration`` (and
  ``delta.deletedFileRetentionDuration``, which must not be longer) of 1 day and
  ``delta.checkpointInterval`` 1, so the ALTER's own commit is checkpointed and cleanup follows;
- what we deleted is exactly what Delta deleted, except for one deliberate difference: Hadoop's
  local file system deletes the hidden ``.<name>.crc`` beside each log file Delta deletes; we
  leave hidden files alone. We never delete a hidden checksum of a file that stays.

Because the newest checkpoint's version is young, the ALTER's extra checkpoint on copy B moves
nothing: both cleanups keep that checkpoint and everything after it.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.delta_corpus import TABLES
from tests.oracle.runs import (
    checksum_of,
    delta_log_cleanup,
    first_line,
    hadoop_checksum,
    log_files,
    read_versions,
)

# the module's comparisons run once, in its first test's setup: minutes of Delta statements on
# a 2-core machine shared with the other worker
pytestmark = [pytest.mark.slow, pytest.mark.classic_spark, pytest.mark.timeout(1800)]

OLD_S = 5 * 86_400
# Tables where our answer differs from Delta's on purpose, with the reason.
DIFFERS_KNOWN: dict[str, str] = {
    "checkpoint_protection": (
        "Project rule (python_ops.delta.table.protocol, checkpointProtection): we delete no "
        "commit or checkpoint below delta.requireCheckpointProtectionBeforeVersion and skip "
        "the run; Delta 4.4, which supports every protocol in that history, truncates it "
        "(versions 0-2 here). Ours keeps more, never less"
    ),
    "in_commit_timestamps": (
        "Project rule (python_ops.delta.table.protocol, inCommitTimestamp): expiry uses each "
        "commit's inCommitTimestamp (here minutes old), not file times; Delta 4.4's metadata "
        "cleanup still goes by the log files' modification times (backdated 5 days here) and "
        "deletes versions 0-2. Ours keeps more, never less"
    ),
}


@dataclass
class LogComparison:
    """Our log cleanup and Delta's on copies of one corpus table.

    Attributes:
        table: The corpus table.
        last_checkpoint: The version ``_last_checkpoint`` named before cleanup.
        ours_refused: Our ``MaintenanceError``, or None.
        skipped_reason: Why our cleanup deleted nothing, if it said so.
        oldest_kept: The oldest version our result says can still be read.
        delta_error: Delta's error while cleaning copy B, or None.
        planned_oldest: The oldest version our dry run said the cleanup keeps.
        read_before: Version to (rows, checksum) Delta read on copy A before our cleanup, for
            every version from ``planned_oldest``.
        read_after: The same, after it, for every version from ``oldest_kept``.
        read_error: Delta's error reading copy A after our cleanup, or None.
        ours_deleted: Log files (relative to ``_delta_log``) our cleanup deleted.
        delta_deleted: Log files Delta's cleanup deleted.
        seconds: Wall time.
    """

    table: str
    last_checkpoint: int | None = None
    ours_refused: str | None = None
    skipped_reason: str | None = None
    oldest_kept: int | None = None
    planned_oldest: int | None = None
    delta_error: str | None = None
    read_before: dict[int, tuple[int, int]] = field(default_factory=dict)
    read_after: dict[int, tuple[int, int]] = field(default_factory=dict)
    read_error: str | None = None
    ours_deleted: set[str] = field(default_factory=set)
    delta_deleted: set[str] = field(default_factory=set)
    seconds: float = 0.0


def _version(name: str) -> int | None:
    """The version a log file belongs to (hidden checksums and sidecars included)."""
    head = name.lstrip(".")[:20]
    return int(head) if head.isdigit() else None


def age_log(table: Path, before_version: int) -> None:
    """Backdate every ``_delta_log`` file of a version below ``before_version``, monotonically."""
    base = time.time() - OLD_S
    for path in (table / "_delta_log").rglob("*"):
        version = _version(path.name)
        if path.is_file() and version is not None and version < before_version:
            os.utime(path, (base + version, base + version))


def compare_log_cleanup(spark: Any, name: str, source: Path, work: Path) -> LogComparison:
    """Our cleanup on copy A (with Delta's reads around it), Delta's on copy B."""
    from python_ops.errors import MaintenanceError
    from python_ops.ops.log_cleanup import cleanup_logs

    started = time.perf_counter()
    out = LogComparison(name)
    a = work / "a" / name
    b = work / "b" / name
    shutil.copytree(source, a, symlinks=True)
    last = json.loads((a / "_delta_log" / "_last_checkpoint").read_text())["version"]
    out.last_checkpoint = last
    age_log(a, last)
    shutil.copytree(a, b, symlinks=True)
    head = max(v for v in map(_version, log_files(a)) if v is not None)
    try:  # the versions to read before: those the cleanup will keep (its dry run says which)
        out.planned_oldest = cleanup_logs(str(a), retention_days=1).oldest_version_kept
    except MaintenanceError as err:
        out.ours_refused = f"{type(err).__name__}: {err}"
    out.read_before = read_versions(spark, a, list(range(out.planned_oldest or 0, head + 1)))
    before = log_files(a)
    try:
        result = cleanup_logs(str(a), retention_days=1, dry_run=False)
        out.skipped_reason = result.skipped_reason
        out.oldest_kept = result.oldest_version_kept
    except MaintenanceError as err:
        out.ours_refused = f"{type(err).__name__}: {err}"
    out.ours_deleted = before - log_files(a)
    kept_from = out.oldest_kept if out.oldest_kept is not None else 0
    try:
        out.read_after = read_versions(spark, a, list(range(kept_from, head + 1)))
    except Exception as err:  # Delta's errors come as several pyspark exception types
        out.read_error = first_line(err)
    try:
        delta_log_cleanup(spark, b, "interval 1 days")
    except Exception as err:  # as above
        out.delta_error = first_line(err)
    out.delta_deleted = before - log_files(b)
    out.seconds = time.perf_counter() - started
    return out


@pytest.fixture(scope="module")
def log_comparisons(
    oracle_spark: Any, delta_corpus: dict[str, Path]
) -> Iterator[dict[str, LogComparison]]:
    """Every corpus table compared once (three at a time), by name."""
    work = Path(tempfile.mkdtemp(prefix="log-oracle-"))
    try:

        def one(name: str) -> LogComparison:
            scratch = work / name
            scratch.mkdir()
            try:
                return compare_log_cleanup(oracle_spark, name, delta_corpus[name], scratch)
            finally:
                shutil.rmtree(scratch, ignore_errors=True)

        with ThreadPoolExecutor(max_workers=3) as pool:
            results = list(pool.map(one, delta_corpus))
        yield {r.table: r for r in results}
    finally:
        shutil.rmtree(work, ignore_errors=True)


@pytest.mark.parametrize("table", [t.name for t in TABLES])
def test_log_cleanup_matches_delta(table: str, log_comparisons: dict[str, LogComparison]) -> None:
    c = log_comparisons[table]
    assert c.ours_refused is None, f"refused: {c.ours_refused}"
    assert c.delta_error is None, f"Delta's cleanup failed: {c.delta_error}"
    # Delta reads every version we kept, with the rows it read before
    assert c.read_error is None, f"Delta cannot read from v{c.oldest_kept}: {c.read_error}"
    assert c.read_after, "nothing was read after the cleanup"
    assert c.oldest_kept == c.planned_oldest, "the dry run planned another oldest version"
    assert c.read_after == {v: c.read_before.get(v) for v in c.read_after}
    # nothing we deleted is kept by Delta; a hidden checksum goes only with its file
    assert c.ours_deleted <= c.delta_deleted, (
        f"we deleted what Delta keeps: {sorted(c.ours_deleted - c.delta_deleted)}"
    )
    for path in c.ours_deleted:
        owner = checksum_of(path)
        assert owner is None or owner in c.ours_deleted, f"deleted the checksum of kept {owner}"
    only_delta = c.delta_deleted - c.ours_deleted
    hadoop = {hadoop_checksum(p) for p in c.ours_deleted} & only_delta
    if table in DIFFERS_KNOWN:
        assert only_delta - hadoop, "Delta and we agree now: drop it from DIFFERS_KNOWN"
        return
    assert only_delta == hadoop, (
        f"Delta deleted more than we did: {sorted(only_delta - hadoop)} "
        f"(our skipped_reason: {c.skipped_reason})"
    )
    if c.ours_deleted:  # the oldest version we report readable is the checkpoint we kept
        assert c.oldest_kept == c.last_checkpoint


def test_log_cleanup_oracle_deletes_something(log_comparisons: dict[str, LogComparison]) -> None:
    """The comparison is not vacuous: on most tables both sides delete commits."""
    deleting = [c.table for c in log_comparisons.values() if c.ours_deleted]
    print(
        "log cleanup oracle: "
        + ", ".join(
            f"{c.table}: ours {len(c.ours_deleted)} / Delta {len(c.delta_deleted)} "
            f"({c.seconds:.0f} s)"
            for c in log_comparisons.values()
        )
    )
    assert len(deleting) >= len(TABLES) // 2, deleting


def test_hidden_sidecar_checksums_stay(tmp_path: Path) -> None:
    """Found by the oracle on golden ``v2-checkpoint-json``: the checksums of kept sidecars stay.

    ``_sidecars`` also holds Hadoop's hidden ``.<sidecar>.crc`` files; no checkpoint names them,
    so our orphan-sidecar rule deleted them while their sidecars (referenced by the kept v2
    checkpoint) stayed. Delta's cleanup keeps them. No Delta needed here.
    """
    from python_ops.ops.log_cleanup import cleanup_logs
    from tests.helpers.paths import GOLDEN, require_shared
    from tests.oracle.runs import age_all

    require_shared(GOLDEN)
    table = tmp_path / "v2-checkpoint-json"
    shutil.copytree(GOLDEN / "v2-checkpoint-json", table)
    for path in [table, *table.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)  # the fixture files are read-only
    age_all(table)
    sidecars = table / "_delta_log" / "_sidecars"
    before = {p.name for p in sidecars.iterdir()}
    assert any(n.startswith(".") for n in before)
    result = cleanup_logs(str(table), dry_run=False)
    assert result.files_deleted > 0  # commits before the v2 checkpoint went
    assert {p.name for p in sidecars.iterdir()} == before
    assert not any("_sidecars/." in f.path for f in result.files)
