"""Reading the log for one op: files into Arrow's memory, commits fetched and parsed once.

``Storage.read_arrow_buffer`` hands a checkpoint to the Parquet reader without a copy;
``commits_shared`` lets an op that reads a commit twice (VACUUM LITE) fetch and parse it once,
and nothing outside the block sees what it kept.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

from python_ops.delta import commits
from python_ops.delta.commits import commit_actions, commit_lines, commits_shared
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
