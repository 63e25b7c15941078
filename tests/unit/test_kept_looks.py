"""Tables' looks kept between dbt commands (``kept_looks``): kept only where they hold, and only
ever a look that is still true when the next command takes it.

On this machine's real filesystem. Whatever writers do to a table between a post-hook's read of
its newest commit and the command's end, and between that end and the next command (commits,
checksum files, checkpoints, log cleanup, the whole table removed and written again to the same
version), a look the next command finds holding names the table's newest version, and that
version's commit is the file the post-hook read. Written and read back, a look is the same;
a file of another shape keeps no look and raises nothing.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from python_ops.delta.snapshot import TableMetadata
from python_ops.delta.version_checksum import VersionChecksum
from python_ops.maintenance.facts.kept_looks import (
    FORMAT,
    KeptLook,
    commit_file,
    entry_holds,
    holding_look,
    keep_look,
    load_looks,
    read_look,
    save_looks,
)
from python_ops.maintenance.facts.log_change import RACY_NS, LogStamp

WRITERS = ("commit", "checksum", "checkpoint", "log cleanup", "replace the table")


def _later() -> int:
    """A look's time late enough that the directory's last change is not racy."""
    return time.time_ns() + RACY_NS + 1


def _state(version: int, table_id: str = "t") -> VersionChecksum:
    metadata = TableMetadata(table_id, '{"type":"struct","fields":[]}', (), {})
    return VersionChecksum(version, 1, 100, metadata, {"minReaderVersion": 1})


def _commit(log: Path, version: int, text: str = "") -> None:
    staged = log.parent / f".staged-{version}-{time.time_ns()}"
    staged.write_text(f'{{"commitInfo":{{"v":{version},"text":{json.dumps(text)}}}}}\n')
    os.rename(staged, log / f"{version:020d}.json")


def _table(root: Path, commits: int = 3, text: str = "") -> Path:
    log = root / "_delta_log"
    log.mkdir(parents=True)
    for version in range(commits):
        _commit(log, version, text)
    return root


def _newest(table: Path) -> int:
    names = [n for n in os.listdir(table / "_delta_log") if n.endswith(".json") and n[0] != "."]
    return max(int(n[:20]) for n in names)


def _write(table: Path, writer: str, step: int) -> None:
    """One writer's change to the table, as Delta's writers and cleaners make them."""
    log = table / "_delta_log"
    head = _newest(table)
    if writer == "commit":
        _commit(log, head + 1, f"writer {step}")
    elif writer == "checksum":
        staged = table / f".crc-{step}"
        staged.write_text('{"numFiles":1}')
        os.rename(staged, log / f"{head:020d}.crc")
    elif writer == "checkpoint":
        (log / f"{head:020d}.checkpoint.parquet").write_bytes(b"PAR1")
        (log / "_last_checkpoint").write_text(json.dumps({"version": head}))
    elif writer == "log cleanup":
        oldest = min(int(n[:20]) for n in os.listdir(log) if n.endswith(".json"))
        if oldest < head:
            (log / f"{oldest:020d}.json").unlink()
    elif writer == "replace the table":  # removed (kept aside: no inode is freed) and rewritten
        os.rename(table, table.parent / f"{table.name}-old-{step}-{time.time_ns()}")
        _table(table, head + 1, f"rewritten {step}")
    else:
        raise AssertionError(writer)


def _hook_read(table: Path) -> tuple[int, bytes, Any]:
    """What a post-hook knows: the newest version, its commit's bytes, then its file."""
    version = _newest(table)
    data = (table / "_delta_log" / f"{version:020d}.json").read_bytes()
    return version, data, commit_file(str(table), version)


@settings(max_examples=40, deadline=None)
@given(
    before_end=st.lists(st.sampled_from(WRITERS), max_size=3),
    between=st.lists(st.sampled_from(WRITERS), max_size=3),
)
def test_a_look_that_holds_names_the_newest_version_and_the_commit_the_hook_read(
    tmp_path_factory: pytest.TempPathFactory, before_end: list[str], between: list[str]
) -> None:
    table = _table(tmp_path_factory.mktemp("w") / "t")
    version, data, read = _hook_read(table)
    time.sleep(0.02)  # the writers come after the hook's read, as after a build's commit
    for step, writer in enumerate(before_end):
        _write(table, writer, step)
    look = keep_look(str(table), version=version, state=_state(version), read=read, now_ns=_later())
    if not before_end:
        assert look is not None  # nothing happened: the look is kept
    if look is None:
        return
    path = str(tmp_path_factory.mktemp("target") / "looks.json")
    save_looks(path, [look])
    time.sleep(0.02)
    for step, writer in enumerate(between):
        _write(table, writer, 10 + step)
    entry = load_looks(path)[look.location]
    found = holding_look(entry, now_ns=look.stamp.looked_ns)
    assert read_look(entry) == look  # read back as written, holding or not
    assert entry_holds(entry, now_ns=look.stamp.looked_ns) == (found is not None)
    if found is not None:
        assert found.version == _newest(table), (before_end, between)
        assert (table / "_delta_log" / f"{version:020d}.json").read_bytes() == data
    else:
        assert between, before_end  # nothing changed between the commands: it holds


def test_a_commit_after_the_hooks_read_keeps_no_look(tmp_path: Path) -> None:
    table = _table(tmp_path / "t")
    version, _, read = _hook_read(table)
    _commit(table / "_delta_log", version + 1)
    assert (
        keep_look(str(table), version=version, state=_state(version), read=read, now_ns=_later())
        is None
    )


def test_a_table_written_again_to_the_same_version_keeps_no_look(tmp_path: Path) -> None:
    table = _table(tmp_path / "t")
    version, _, read = _hook_read(table)
    time.sleep(0.02)
    _write(table, "replace the table", 0)
    assert _newest(table) == version  # the same names: only the commit file tells
    kept = keep_look(str(table), version=version, state=_state(version), read=read, now_ns=_later())
    assert kept is None


def test_no_look_is_kept_racily_for_another_version_or_remotely(tmp_path: Path) -> None:
    table = _table(tmp_path / "t")
    version, _, read = _hook_read(table)
    state = _state(version)
    assert keep_look(str(table), version=version, state=state, read=read) is None  # just written
    later = _later()
    other = _state(version - 1)
    assert keep_look(str(table), version=version, state=other, read=read, now_ns=later) is None
    assert keep_look(str(table), version=version, state=state, read=None, now_ns=later) is None
    assert commit_file("s3://bucket/t", version) is None
    assert commit_file(str(table), version + 1) is None
    kept = keep_look(f"file://{table}", version=version, state=state, read=read, now_ns=later)
    assert kept is not None
    assert kept.location == str(table)


_text = st.text(max_size=12)
_stamps = st.builds(
    LogStamp,
    st.integers(0, 2**63),
    st.integers(0, 2**63),
    st.integers(0, 2**63),
    st.integers(0, 2**63),
    st.integers(0, 2**63),
    st.just(""),
)
_states = st.builds(
    VersionChecksum,
    st.integers(0, 2**40),
    st.integers(0, 2**40),
    st.integers(0, 2**62),
    st.builds(
        TableMetadata,
        _text,
        _text,
        st.lists(_text, max_size=3).map(tuple),
        st.dictionaries(_text, _text, max_size=3),
        st.booleans(),
    ),
    st.dictionaries(_text, st.integers(0, 9) | st.lists(_text, max_size=2), max_size=3),
)


@settings(max_examples=60, deadline=None)
@given(entries=st.lists(st.tuples(_text, _states, _stamps), max_size=5))
def test_looks_read_back_as_written(
    tmp_path_factory: pytest.TempPathFactory,
    entries: list[tuple[str, VersionChecksum, LogStamp]],
) -> None:
    looks = []
    for name, state, stamp in entries:
        location = f"/warehouse/{name}"
        stamp = dataclasses.replace(stamp, path=f"{location}/_delta_log")
        looks.append(KeptLook(location, state.version, state, stamp))
    path = str(tmp_path_factory.mktemp("target") / "looks.json")
    save_looks(path, looks)
    read = {location: read_look(entry) for location, entry in load_looks(path).items()}
    assert read == {look.location: look for look in looks}  # the last of a name


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=12,
)


@settings(max_examples=80, deadline=None)
@given(
    value=_json,
    field=st.sampled_from(
        ["location", "version", "stamp", "num_files", "table_size_bytes", "metadata", "protocol"]
    ),
)
def test_a_file_of_another_shape_keeps_no_look_and_raises_nothing(
    tmp_path_factory: pytest.TempPathFactory, value: Any, field: str
) -> None:
    directory = tmp_path_factory.mktemp("target")
    good = KeptLook("/w/good", 3, _state(3), LogStamp(1, 2, 3, 4, 5, "/w/good/_delta_log"))
    save_looks(str(directory / "looks.json"), [good])
    entry = json.loads((directory / "looks.json").read_text())["looks"][0]
    bad = {**entry, "location": "/w/bad", field: value}
    (directory / "mixed.json").write_text(
        json.dumps({"format": FORMAT, "looks": [entry, bad, value]})
    )
    found = load_looks(str(directory / "mixed.json"))
    assert read_look(found["/w/good"]) == good
    for entry in found.values():  # a look, or none: never an error
        look = read_look(entry)
        assert look is None or look.location == entry["location"]
        assert holding_look(entry) is None  # no such table: no look holds
        assert not entry_holds(entry)
    (directory / "whole.json").write_text(json.dumps(value))
    assert load_looks(str(directory / "whole.json")) == {}
    (directory / "bytes.json").write_bytes(b"\xff\xfe{" + os.urandom(16))
    assert load_looks(str(directory / "bytes.json")) == {}
    assert load_looks(str(directory / "missing.json")) == {}
