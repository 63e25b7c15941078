"""Reading the log for one op: files into Arrow's memory, commits fetched and parsed once.

``Storage.read_arrow_buffer`` hands a checkpoint to the Parquet reader without a copy;
``commits_shared`` lets an op that reads a commit twice (VACUUM LITE) fetch and parse it once,
and nothing outside the block sees what it kept.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from python_ops.delta.log import commits
from python_ops.delta.log.commits import (
    ACTION_TYPES,
    commit_actions,
    commit_lines,
    commits_shared,
    json_lines,
)
from python_ops.errors import DeltaLogError
from python_ops.storage import open_storage


def _commit(table: Path, version: int, actions: list[dict[str, object]]) -> str:
    log = table / "_delta_log"
    log.mkdir(parents=True, exist_ok=True)
    path = log / f"{version:020d}.json"
    path.write_text("".join(json.dumps(a) + "\n" for a in actions))
    return f"_delta_log/{path.name}"


def test_a_local_file_is_read_whole_into_an_arrow_buffer(tmp_path: Path) -> None:
    data = bytes(range(256)) * 5_000
    (tmp_path / "f.bin").write_bytes(data)
    storage = open_storage(str(tmp_path))
    buffer = storage.read_arrow_buffer("f.bin")
    assert isinstance(buffer, pa.Buffer)
    assert buffer.to_pybytes() == data
    with pytest.raises(FileNotFoundError):
        storage.read_arrow_buffer("missing.bin")


def test_within_the_block_a_commit_is_read_once(tmp_path: Path) -> None:
    path = _commit(tmp_path, 3, [{"commitInfo": {"operation": "WRITE"}}])
    storage = open_storage(str(tmp_path))
    with commits_shared():
        first = commit_lines(storage, path)
        (tmp_path / path).unlink()  # a second fetch would fail: it is not fetched again
        assert commit_lines(storage, path) is first
        assert commit_actions(storage, 3) == [{"commitInfo": {"operation": "WRITE"}}]
    with pytest.raises(FileNotFoundError):
        commit_lines(storage, path)  # outside the block nothing was kept


def test_a_block_inside_another_shares_its_commits(tmp_path: Path) -> None:
    # a post-hook reads the build's first commit to know the log is there, then the build's
    # writes (their own block inside): the commit is fetched once
    path = _commit(tmp_path, 0, [{"commitInfo": {"operation": "CREATE TABLE"}}])
    storage = open_storage(str(tmp_path))
    with commits_shared():
        first = commit_lines(storage, path)
        (tmp_path / path).unlink()
        with commits_shared():
            assert commit_lines(storage, path) is first
        with commits_shared(enabled=False), pytest.raises(FileNotFoundError):
            commit_lines(storage, path)  # a disabled block inside keeps nothing, shares nothing
        assert commit_lines(storage, path) is first  # the outer block's, after both
    with pytest.raises(FileNotFoundError):
        commit_lines(storage, path)


def test_nothing_is_kept_when_disabled_or_beyond_the_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small = _commit(tmp_path, 1, [{"commitInfo": {"n": 1}}])
    storage = open_storage(str(tmp_path))
    with commits_shared(enabled=False):
        assert commit_lines(storage, small) is not commit_lines(storage, small)
    monkeypatch.setattr(commits, "_SHARED_MAX_BYTES", 40)
    big = _commit(tmp_path, 2, [{"commitInfo": {"note": "x" * 100}}])
    with commits_shared():
        assert commit_lines(storage, small) is commit_lines(storage, small)
        assert commit_lines(storage, big) is not commit_lines(storage, big)


def _per_line_reference(data: bytes) -> list[Any] | str:
    """What json_lines gave when it handed json.loads each line's bytes (or the error kind)."""
    out: list[Any] = []
    for line in data.splitlines():
        if not line.strip():
            continue
        try:
            action = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return "DeltaLogError"
        if not isinstance(action, dict) or len(action) != 1:
            return "DeltaLogError"
        (kind,) = action
        if kind not in ACTION_TYPES or not isinstance(action[kind], dict):
            return "DeltaLogError"
        out.append(action)
    return out


_PIECES = st.sampled_from(
    [
        b'{"add": {"path": "a"}}',
        b'{"remove": {"path": "b\\u00e9"}}',
        '{"add": {"path": "p\u2028q\u00e9"}}'.encode(),
        b'{"commitInfo": {}}',
        b"\xef\xbb\xbf",
        b"\xff",
        b"\n",
        b"\r\n",
        b"\r",
        b" ",
        b"{",
        b'{"txn": 1}',
    ]
)


@given(st.lists(_PIECES, max_size=8))
@example(
    [b"\xef\xbb\xbf", b'{"add": {"path": "a"}}', b"\n", b"\xef\xbb\xbf", b'{"commitInfo": {}}']
)
def test_a_commit_is_parsed_as_json_loads_parses_each_line(pieces: list[bytes]) -> None:
    # decoded once as UTF-8 (the fast way), or line by line where that could differ: the same
    # actions, or the same refusal, as json.loads given each line's bytes
    data = b"".join(pieces)
    expected = _per_line_reference(data)
    try:
        found: list[Any] | str = [action for _, action in json_lines(data, "c.json")]
    except DeltaLogError:
        found = "DeltaLogError"
    assert found == expected
