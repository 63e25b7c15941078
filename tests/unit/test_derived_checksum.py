"""The table after a build, derived from the checksum before it and the build's commits.

``derived_checksum`` counts as Delta's incremental checksum does (the way Delta and Sail write
the checksum files the post-hook otherwise reads): held here against the state replayed from
the whole log, over generated logs as writers make them, split at every version; and refused
(None) wherever counting could disagree with the log: a remove without its size (as Delta
refuses it), a file added with ``dataChange: false`` that its commit does not remove (a
compaction's new file, or a live file re-added: only the live files tell them apart).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from python_ops.delta.version_checksum import (
    VersionChecksum,
    derived_checksum,
    replayed_checksum,
)

ROOT = "/t"
_PROTOCOL = {"minReaderVersion": 1, "minWriterVersion": 2}
_SCHEMA = '{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]}'
# kinds a writer's commit is made of: counted; and not known without the live files (a file
# added with dataChange false may be new or live already) or, as for Delta, a remove's size
COUNTED = ("add", "remove", "dv update")
NOT_COUNTED = ("compaction", "statistics re-add", "remove without size")

Log = list[list[dict[str, Any]]]


def _metadata(tag: int, table: int = 0) -> dict[str, Any]:
    return {
        "id": f"7c1e0f55-0000-4000-8000-00000000000{table}",
        "format": {"provider": "parquet", "options": {}},
        "schemaString": _SCHEMA,
        "partitionColumns": [],
        "configuration": {"tag": str(tag)},
    }


def _dv(n: int) -> dict[str, Any] | None:
    if n == 0:
        return None
    return {"storageType": "i", "pathOrInlineDv": f"inline{n}", "sizeInBytes": 8, "cardinality": n}


def _add(path: str, size: int, dv: int = 0, *, data_change: bool = True) -> dict[str, Any]:
    return {
        "add": {
            "path": path,
            "size": size,
            "modificationTime": 1,
            "dataChange": data_change,
            "partitionValues": {},
            "deletionVector": _dv(dv),
        }
    }


def _remove(path: str, size: int, dv: int = 0, *, sized: bool = True) -> dict[str, Any]:
    remove: dict[str, Any] = {
        "path": path,
        "deletionTimestamp": 1,
        "dataChange": True,
        "deletionVector": _dv(dv),
    }
    if sized:
        remove.update(extendedFileMetadata=True, size=size, partitionValues={})
    return {"remove": remove}


@st.composite
def writer_logs(draw: st.DrawFn, kinds: tuple[str, ...] = COUNTED) -> tuple[Log, list[set[str]]]:
    """Commits 0..N as writers make them, and the kinds each commit holds.

    New files under fresh names, removes of live files with their sizes, deletion-vector
    updates (the file removed and added again in one commit), compactions (live files removed,
    a new one added with ``dataChange: false``), metadata and protocol changes; with
    ``NOT_COUNTED`` kinds too when asked.
    """
    live: dict[str, tuple[int, int]] = {}  # path -> (size, dv)
    commits: Log = []
    held: list[set[str]] = []
    fresh = iter(range(10**6))
    for version in range(draw(st.integers(2, 7))):
        actions: list[dict[str, Any]] = [{"commitInfo": {"timestamp": version}}]
        if version == 0 or draw(st.integers(0, 3)) == 0:
            actions.append({"metaData": _metadata(draw(st.integers(0, 3)))})
        if version == 0 or draw(st.integers(0, 4)) == 0:
            writer = 2 + draw(st.integers(0, 1))
            actions.append({"protocol": {**_PROTOCOL, "minWriterVersion": writer}})
        kinds_here: set[str] = set()
        touched: set[str] = set()  # a commit names each file once (a DV update: remove, add)
        for _ in range(draw(st.integers(0, 4))):
            kind = draw(st.sampled_from(kinds))
            older = sorted(set(live) - touched)
            if kind == "add" or not older:
                path, size = f"part-{next(fresh)}.parquet", draw(st.integers(0, 10**9))
                actions.append(_add(path, size))
                live[path] = (size, 0)
                touched.add(path)
                kinds_here.add("add")
                continue
            path = draw(st.sampled_from(older))
            touched.add(path)
            size, dv = live[path]
            kinds_here.add(kind)
            if kind == "statistics re-add":
                actions.append(_add(path, size, dv, data_change=False))
            elif kind == "remove without size":
                actions.append(_remove(path, size, dv, sized=False))
                del live[path]
            elif kind == "dv update":
                actions += [_remove(path, size, dv), _add(path, size, dv + 1)]
                live[path] = (size, dv + 1)
            elif kind == "compaction":
                new, total = f"part-{next(fresh)}.parquet", 0
                for old in {path, *draw(st.lists(st.sampled_from(older)))}:
                    touched.add(old)
                    old_size, old_dv = live.pop(old)
                    actions.append(_remove(old, old_size, old_dv))
                    total += old_size
                actions.append(_add(new, total, data_change=False))
                live[new] = (total, 0)
                touched.add(new)
            else:  # remove
                actions.append(_remove(path, size, dv))
                del live[path]
        commits.append(actions)
        held.append(kinds_here)
    return commits, held


def _numbered(commits: Log) -> list[tuple[int, list[dict[str, Any]]]]:
    return list(enumerate(commits))


@settings(max_examples=200, deadline=None)
@given(log=writer_logs())
def test_derived_from_any_version_is_the_replayed_state(log: tuple[Log, list[set[str]]]) -> None:
    window = _numbered(log[0])
    whole = replayed_checksum(ROOT, window)
    assert whole is not None
    for split in range(1, len(window)):  # the checksum of version split-1, then the rest
        before = replayed_checksum(ROOT, window[:split])
        assert before is not None
        assert derived_checksum(before, window[split:]) == whole, split


@settings(max_examples=200, deadline=None)
@given(log=writer_logs(COUNTED + NOT_COUNTED))
def test_what_cannot_be_counted_is_not_known(log: tuple[Log, list[set[str]]]) -> None:
    commits, held = log
    window = _numbered(commits)
    for split in range(1, len(window)):
        before = replayed_checksum(ROOT, window[:split])
        if before is None:  # a remove without size before the split: not replayable either
            continue
        derived = derived_checksum(before, window[split:])
        uncounted = any(held[v] & set(NOT_COUNTED) for v in range(split, len(window)))
        if uncounted:
            assert derived is None, split
        else:
            assert derived == replayed_checksum(ROOT, window), split


@settings(max_examples=100, deadline=None)
@given(log=writer_logs(), data=st.data())
def test_commits_that_do_not_follow_the_checksum_are_not_known(
    log: tuple[Log, list[set[str]]], data: st.DataObject
) -> None:
    window = _numbered(log[0])
    split = data.draw(st.integers(1, len(window) - 1))
    before = replayed_checksum(ROOT, window[:split])
    assert before is not None
    later = window[split:]
    assert derived_checksum(before, []) is None
    if len(later) > 1:  # the first version after the checksum's skipped
        assert derived_checksum(before, later[1:]) is None
    if len(later) > 2:  # one in the middle skipped
        assert derived_checksum(before, [later[0], *later[2:]]) is None
    shifted = data.draw(st.integers(-3, 3).filter(lambda d: d != 0))
    other = dataclasses.replace(before, version=before.version + shifted)
    assert derived_checksum(other, later) is None


def _checksum(files: int, size: int) -> VersionChecksum:
    state = replayed_checksum(ROOT, [(0, [{"metaData": _metadata(0)}, {"protocol": _PROTOCOL}])])
    assert state is not None
    return dataclasses.replace(state, num_files=files, table_size_bytes=size)


@pytest.mark.parametrize(
    ("actions", "why"),
    [
        ([_remove("a.parquet", 10)], "a remove of a file that was not live"),
        ([{"remove": {"path": "a.parquet", "size": 1}}], "no extendedFileMetadata"),
        ([{"add": {"path": "a.parquet", "dataChange": True}}], "an add without its size"),
        ([{"add": {"path": "a.parquet", "size": True}}], "a size that is not a count"),
        ([{"metaData": {"id": 3}}], "a metaData action that does not parse"),
        ([{"protocol": {"minReaderVersion": "1"}}], "a protocol action that does not parse"),
    ],
)
def test_a_commit_not_as_delta_writes_it_is_not_known(
    actions: list[dict[str, Any]], why: str
) -> None:
    assert derived_checksum(_checksum(0, 0), [(1, actions)]) is None, why


def test_a_rebuild_replaces_the_metadata_and_keeps_the_count() -> None:
    before = _checksum(2, 30)
    rebuild = [
        {"commitInfo": {"operation": "CREATE OR REPLACE TABLE AS SELECT"}},
        {"metaData": _metadata(5, table=1)},
        _remove("a.parquet", 10),
        _remove("b.parquet", 20),
        _add("c.parquet", 7),
    ]
    derived = derived_checksum(before, [(1, rebuild)])
    assert derived is not None
    assert (derived.version, derived.num_files, derived.table_size_bytes) == (1, 1, 7)
    assert derived.metadata.table_id.endswith("01")
    assert derived.metadata.configuration == {"tag": "5"}
    assert derived.protocol == _PROTOCOL
