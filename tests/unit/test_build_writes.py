"""A build's own commits read from the Delta log (``build_writes``), on real tables.

delta-rs writes (append, overwrite, MERGE, DELETE) with its metric names; Delta on Spark's
commits (string metrics: WRITE, UPDATE, DELETE) from the shared fixture ``cdf-table``. Which
commits are the build's: after the version recorded at its start, or timestamped from its start;
maintenance's own commits never.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from python_ops.delta.log.commits import commit_versions
from python_ops.delta.state.snapshot import read_snapshot
from python_ops.delta.table.partition_scope import parse_scope
from python_ops.maintenance.facts import build_start
from python_ops.maintenance.facts.build_start import head_version, location_is_empty
from python_ops.maintenance.facts.build_writes import BuildFacts, read_build_writes
from python_ops.storage.base import DirScan, FileEntry
from python_ops.storage.local import LocalStorage
from tests.helpers.paths import shared_table


def _rows(day: str, ids: range) -> pa.Table:
    return pa.table({"id": pa.array(list(ids), pa.int64()), "day": [day] * len(ids)})


def _facts(version: int | None, started_ms: int | None = None) -> BuildFacts:
    """Facts of a build that started at ``started_ms`` (None: now, after the commits so far)."""
    started = int(time.time() * 1000) + 1 if started_ms is None else started_ms
    return BuildFacts(started_at_ms=started, version_before=version, build_s=1.5)


@pytest.fixture
def events(tmp_path: Path) -> str:
    """A delta-rs table partitioned by day, two partitions, version 1."""
    location = str(tmp_path / "events")
    write_deltalake(location, _rows("2024-01-01", range(10)), partition_by=["day"])
    write_deltalake(location, _rows("2024-01-02", range(10, 20)), mode="append")
    return location


def test_an_append_into_one_partition_is_that_partition_only(events: str) -> None:
    before = head_version(events)
    assert before == 1
    write_deltalake(events, _rows("2024-01-02", range(20, 25)), mode="append")

    writes = read_build_writes(events, _facts(before))

    (commit,) = writes.commits
    assert (commit.version, commit.operation) == (2, "WRITE")
    assert (commit.files_written, commit.files_metric) == (1, "num_added_files")
    assert writes.rows_written == 5  # delta-rs' num_added_rows
    assert writes.partitions == ((("day", "2024-01-02"),),)
    assert writes.skip_reason(1) is None
    # the predicate selects exactly that partition, as OPTIMIZE's scope reads it
    snapshot = read_snapshot(events)
    scope = parse_scope(
        writes.scope() or "",
        partition_columns=snapshot.metadata.partition_columns,
        schema_fields=snapshot.metadata.schema_fields(),
        setting="where",
    )
    assert [scope.matches(f.partition_values) for f in snapshot.files].count(True) == 2
    assert {
        f.partition_values["day"] for f in snapshot.files if scope.matches(f.partition_values)
    } == {"2024-01-02"}
    assert writes.history_columns() == {
        "build_s": 1.5,
        "build_files_written": 1,
        "build_rows_written": 5,
        "build_versions": "[2]",
    }


def test_a_build_without_a_commit_wrote_nothing(events: str) -> None:
    writes = read_build_writes(events, _facts(head_version(events)))
    assert writes.commits == ()
    assert writes.skip_reason(1) == "wrote nothing: the build made no commit to the table"
    assert writes.skip_reason(0) is None  # 0: maintain after every build


def test_a_merge_counts_delta_rs_merge_metrics_and_its_partitions(events: str) -> None:
    before = head_version(events)
    source = pa.table({"id": pa.array([1, 30], pa.int64()), "day": ["2024-01-01", "2024-01-03"]})
    (
        DeltaTable(events)
        .merge(source, "t.id = s.id", source_alias="s", target_alias="t")
        .when_matched_update_all()
        .when_not_matched_insert_all()
        .execute()
    )

    writes = read_build_writes(events, _facts(before))

    (commit,) = writes.commits
    assert commit.operation == "MERGE"
    assert commit.files_metric == "num_target_files_added"  # delta-rs 1.6: snake case
    log = Path(events) / "_delta_log" / f"{commit.version:020d}.json"
    adds = [json.loads(x)["add"] for x in log.read_text().splitlines() if '"add"' in x]
    assert commit.files_written == len(adds)  # the metric agrees with the log
    assert {p for p in writes.partitions} == {
        (("day", "2024-01-01"),),
        (("day", "2024-01-03"),),
    }
    assert writes.rows_written == sum(json.loads(a["stats"])["numRecords"] for a in adds)


def test_a_delete_of_whole_files_wrote_nothing(events: str) -> None:
    before = head_version(events)
    DeltaTable(events).delete("day = '2024-01-01'")

    writes = read_build_writes(events, _facts(before))

    assert [c.operation for c in writes.commits] == ["DELETE"]
    assert writes.files_written == 0
    assert writes.skip_reason(1) == "wrote nothing: its commit(s) (version 2) added no file"


def test_fewer_files_than_the_minimum_skip_with_the_count(events: str) -> None:
    before = head_version(events)
    write_deltalake(events, _rows("2024-01-03", range(3)), mode="append")
    writes = read_build_writes(events, _facts(before))
    assert writes.skip_reason(2) == "wrote 1 file(s), fewer than maintenance_min_files_written=2"


def test_maintenance_commits_are_never_the_build_s(events: str) -> None:
    before = head_version(events)
    write_deltalake(events, _rows("2024-01-02", range(30, 32)), mode="append")
    DeltaTable(events).optimize.compact()  # OPTIMIZE by delta-rs, after the build's append

    writes = read_build_writes(events, _facts(before))

    assert [c.version for c in writes.commits] == [2]
    assert writes.not_attributed == (3,)


def test_a_new_table_s_commits_are_those_from_the_build_s_start(tmp_path: Path) -> None:
    location = str(tmp_path / "new")
    write_deltalake(location, _rows("2024-01-01", range(4)), partition_by=["day"])
    started = int(time.time() * 1000) + 5
    time.sleep(0.02)
    assert head_version(str(tmp_path / "missing")) is None  # what the adapter records
    write_deltalake(location, _rows("2024-01-05", range(2)), mode="append")
    write_deltalake(location, _rows("2024-01-06", range(2)), mode="append")

    writes = read_build_writes(location, _facts(None, started))

    # the commit before the start is another writer's: not attributed
    assert [c.version for c in writes.commits] == [1, 2]
    assert writes.files_written == 2
    assert writes.describe() == "version 1-2 wrote 2 file(s), 4 row(s) in 2 partition(s)"


def test_delta_on_spark_metrics_as_strings(tmp_path: Path) -> None:
    original = shared_table("cdf-table")  # WRITE, UPDATE, UPDATE, DELETE by Delta on Spark
    table = tmp_path / "cdf-table"
    shutil.copytree(original, table)

    first = read_build_writes(str(table), _facts(-1))  # the table's whole life
    by_version = {c.version: c for c in first.commits}
    assert (by_version[0].files_written, by_version[0].files_metric) == (10, "numFiles")
    assert by_version[0].rows_written == 10
    assert (by_version[1].files_written, by_version[1].files_metric) == (3, "numAddedFiles")
    assert by_version[3].files_written == 0  # a DELETE of whole files: numAddedFiles 0
    assert by_version[3].partitions == ()
    assert first.partition_columns == ("birthday",)

    update = read_build_writes(str(table), _facts(0))  # builds after the first write
    assert [c.operation for c in update.commits] == ["UPDATE", "UPDATE", "DELETE"]
    assert update.files_written == 6


def test_a_table_re_created_from_version_0_is_found_by_the_clock(tmp_path: Path) -> None:
    location = tmp_path / "rebuilt"
    for day in ("2024-01-01", "2024-01-02", "2024-01-03"):
        write_deltalake(str(location), _rows(day, range(2)), mode="append", partition_by=["day"])
    before = head_version(str(location))
    assert before == 2
    started = int(time.time() * 1000)
    shutil.rmtree(location)  # a build that replaced the directory: versions start again at 0
    write_deltalake(str(location), _rows("2024-01-09", range(3)), partition_by=["day"])

    writes = read_build_writes(str(location), _facts(before, started))

    assert [c.version for c in writes.commits] == [0]
    assert writes.files_written == 1
    assert writes.skip_reason(1) is None


class CountingStorage(LocalStorage):
    """The real local storage, counting the calls that reach the disk."""

    def __init__(self, root: str) -> None:
        super().__init__(root)
        self.calls: Counter[str] = Counter()

    def list_dir(self, rel: str = "") -> list[FileEntry]:
        self.calls["list_dir"] += 1
        return super().list_dir(rel)

    def scan_dir(self, rel: str = "") -> DirScan:
        self.calls["scan_dir"] += 1
        return super().scan_dir(rel)

    def scan_names(self, rel: str = "") -> DirScan:
        self.calls["scan_names"] += 1
        return super().scan_names(rel)

    def list_names(self, rel: str = "") -> list[str]:
        self.calls["list_names"] += 1
        return super().list_names(rel)

    def read_bytes(self, rel: str) -> bytes:
        self.calls["read_bytes"] += 1
        return super().read_bytes(rel)

    def exists(self, rel: str) -> bool:
        self.calls["exists"] += 1
        return super().exists(rel)


def _costs_of_one_build(location: str, history: int) -> tuple[Counter[str], Counter[str], int]:
    """Calls to record a build's start and to read its two commits, after ``history`` commits."""
    for i in range(history):
        write_deltalake(location, _rows("2024-01-01", range(i, i + 1)), mode="append")
    start = CountingStorage(location)
    facts = _facts(head_version(start))
    for day in ("2024-02-01", "2024-02-02"):  # the build: two commits
        write_deltalake(location, _rows(day, range(5)), mode="append", partition_by=["day"])
    after = CountingStorage(location)
    writes = read_build_writes(after, facts)
    return start.calls, after.calls, writes.files_written


def test_reading_a_build_costs_what_it_wrote_not_the_log_s_length(tmp_path: Path) -> None:
    costs = {}
    for history in (3, 60):
        location = str(tmp_path / f"t{history}")
        write_deltalake(location, _rows("2024-01-01", range(1)), partition_by=["day"])
        costs[history] = _costs_of_one_build(location, history)
        assert len(list(Path(location, "_delta_log").glob("*.json"))) == history + 3
    for start, after, files in costs.values():
        assert start == Counter(list_names=1)  # the build's start: names listed, none statted
        # its two commits read, and the first missing name asked for (not read and failed)
        assert after == Counter(read_bytes=2, exists=2)
        assert files == 2
    assert costs[3] == costs[60]


def test_a_table_built_where_nothing_existed_is_read_from_version_0_without_a_listing(
    tmp_path: Path,
) -> None:
    location = str(tmp_path / "new")
    assert location_is_empty(location)  # what the adapter records at the build's start
    facts = BuildFacts(
        started_at_ms=int(time.time() * 1000), version_before=None, build_s=1.0,
        location_was_empty=True,
    )  # fmt: skip
    write_deltalake(location, _rows("2024-01-01", range(4)), partition_by=["day"])
    write_deltalake(location, _rows("2024-01-02", range(2)), mode="append")
    assert not location_is_empty(location)
    storage = CountingStorage(location)
    writes = read_build_writes(storage, facts)
    assert [c.version for c in writes.commits] == [0, 1]
    assert writes.files_written == 2
    # its two commits and the first missing name; no listing of the log
    assert storage.calls == Counter(read_bytes=2, exists=2)


_LOG_NAMES = st.one_of(
    st.integers(0, 10**6).map(lambda v: f"{v:020d}.json"),
    st.integers(0, 10**6).map(lambda v: f"{v:020d}.crc"),
    st.integers(0, 10**6).map(lambda v: f"{v:020d}.checkpoint.parquet"),
    st.integers(0, 10**6).map(lambda v: f"{v:020d}.json#{v % 7}"),  # a staged upload
    st.integers(0, 10**6).map(lambda v: f"{v:019d}.json"),  # one digit short
    st.sampled_from(["_last_checkpoint", "00000000000000000001.json.tmp", ".json", "x.json"]),
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    files=st.lists(_LOG_NAMES, max_size=12, unique=True),
    dirs=st.lists(_LOG_NAMES, max_size=3, unique=True),
    links=st.lists(_LOG_NAMES, max_size=3, unique=True),
)
def test_the_version_before_a_build_is_the_newest_commit_the_log_lists(
    tmp_path_factory: pytest.TempPathFactory, files: list[str], dirs: list[str], links: list[str]
) -> None:
    # names only at the build's start, by name as Delta lists its log: the newest commit name
    # of any kind; of files and links alone, the log's classified listing
    root = tmp_path_factory.mktemp("log")
    log = root / "_delta_log"
    log.mkdir()
    outside = root / "outside.json"
    outside.write_text("{}")
    for name in files:
        (log / name).write_text("{}")
    made_dirs = [name for name in dirs if not (log / name).exists()]
    for name in made_dirs:
        (log / name).mkdir()
    for name in links:
        if not (log / name).exists():
            (log / name).symlink_to(outside)
    named = [int(n[:20]) for n in (*files, *made_dirs, *links) if re.fullmatch(r"\d{20}\.json", n)]
    assert head_version(str(root)) == max(named, default=None)
    if not made_dirs:
        listed = commit_versions(LocalStorage(str(root)))
        assert head_version(str(root)) == (listed[-1] if listed else None)


class ProbingStorage(CountingStorage):
    """The counting storage, counting the log directory's size asks too."""

    def directory_bytes(self, rel: str) -> int | None:
        self.calls["directory_bytes"] += 1
        return super().directory_bytes(rel)


def _long_log(root: Path, versions: range, checkpoint: int | None) -> Path:
    """A log of ``versions`` (commits and checksums, a checkpoint every 10) and its pointer."""
    log = root / "_delta_log"
    log.mkdir(parents=True)
    for v in versions:
        (log / f"{v:020d}.json").touch()
        (log / f"{v:020d}.crc").touch()
        if v % 10 == 0:
            (log / f"{v:020d}.checkpoint.parquet").touch()
    if checkpoint is not None:
        (log / "_last_checkpoint").write_text(json.dumps({"version": checkpoint, "size": 3}))
    return root


def test_the_version_before_a_build_of_a_long_log_costs_the_commits_since_its_checkpoint(
    tmp_path: Path,
) -> None:
    # 30 days of hourly builds: 720 commits, their checksums and 72 checkpoints
    root = _long_log(tmp_path / "hourly", range(720), checkpoint=710)
    storage = ProbingStorage(str(root))
    assert (storage.directory_bytes("_delta_log") or 0) > build_start.SHORT_LOG_BYTES
    storage.calls.clear()
    assert head_version(storage) == 719
    # the pointer read, versions 711..719 found and 720 missing; the log not listed
    assert storage.calls == Counter(directory_bytes=1, read_bytes=1, exists=10)
    # a young log is listed once, as before
    young = ProbingStorage(str(_long_log(tmp_path / "young", range(25), checkpoint=20)))
    assert head_version(young) == 24
    assert young.calls == Counter(directory_bytes=1, list_names=1)
    # no log at all (where a first build will create its table): one stat, nothing listed
    absent = ProbingStorage(str(tmp_path / "absent"))
    assert head_version(absent) is None
    assert absent.calls == Counter(directory_bytes=1)


_POINTERS = st.one_of(
    st.none(),
    st.integers(0, 60),
    st.sampled_from(['{"version": -1}', '{"version": true}', "not json", '{"size": 3}']),
)


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    run=st.tuples(st.integers(0, 40), st.integers(0, 20)),
    holes=st.lists(st.integers(0, 70), max_size=4, unique=True),
    pointer=_POINTERS,
    staged=st.booleans(),
)
def test_a_long_log_s_version_before_a_build_is_the_listing_s_or_a_hole_ends_it(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    run: tuple[int, int],
    holes: list[int],
    pointer: int | str | None,
    staged: bool,
) -> None:
    # every log taken as long (asked name by name from its checkpoint): the same version as
    # the whole listing whenever the commits from the pointer on are contiguous, as Delta
    # writes them; with a hole above it (a log Delta refuses), the end of the run before it
    root = tmp_path_factory.mktemp("log")
    lo, length = run
    log = _long_log(root, range(lo, lo + length), checkpoint=None) / "_delta_log"
    for v in holes:  # commits apart from the run (a hole between, or before it)
        (log / f"{v:020d}.json").touch()
    if staged:  # a writer's staged upload of the next commit, not yet a commit
        (log / f"{lo + length:020d}.json#1").touch()
    if isinstance(pointer, int):
        (log / "_last_checkpoint").write_text(json.dumps({"version": pointer}))
    elif pointer is not None:
        (log / "_last_checkpoint").write_text(pointer)
    listed = commit_versions(LocalStorage(str(root)))
    assert head_version(str(root)) == (listed[-1] if listed else None)  # short: listed
    with monkeypatch.context() as patch:  # one example's: hypothesis runs many per test
        patch.setattr(build_start, "SHORT_LOG_BYTES", -1)
        probed = head_version(str(root))
    versions = set(listed)
    if probed != (listed[-1] if listed else None):
        assert isinstance(pointer, int)
        assert probed is not None
        assert probed in versions
        assert probed + 1 not in versions
        assert probed >= pointer
        assert any(v not in versions for v in range(probed, listed[-1]))  # a hole above it
    if listed and isinstance(pointer, int) and set(range(pointer, listed[-1] + 1)) <= versions:
        assert probed == listed[-1]


def test_a_rebuilt_table_s_state_is_not_known_from_its_commits(events: str) -> None:
    # not its whole log: the post-hook reads the newest version's checksum file instead
    write_deltalake(events, _rows("2024-01-01", range(3)), mode="overwrite")  # the build: v2
    writes = read_build_writes(events, _facts(1))
    assert writes.head_version == 2
    assert writes.state is None
