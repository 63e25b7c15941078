"""The VACUUM oracle's recorded Delta answers: what is kept, and when a recording stands in."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.oracle.recorded import (
    LIVE_EVERY,
    DeltaAnswer,
    OracleMode,
    asked_live,
    load_answers,
    save_answers,
    tree_digest,
    usable,
)


def _table(root: Path) -> Path:
    (root / "_delta_log").mkdir(parents=True)
    (root / "_delta_log" / "00000000000000000000.json").write_text("{}")
    (root / "p=1").mkdir()
    (root / "p=1" / "a.parquet").write_bytes(b"a")
    return root


def test_the_digest_changes_with_a_name_a_content_or_a_link(tmp_path: Path) -> None:
    table = _table(tmp_path / "t")
    first = tree_digest(table)
    assert tree_digest(table) == first
    (table / "p=1" / "a.parquet").write_bytes(b"b")
    second = tree_digest(table)
    assert second != first
    (table / "p=1" / "a.parquet").rename(table / "p=1" / "b.parquet")
    third = tree_digest(table)
    assert third not in (first, second)
    (table / "link").symlink_to(table / "p=1")
    assert tree_digest(table) != third


def test_only_settled_answers_are_kept_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / "answers.json"
    settled = DeltaAnswer("t1", frozenset({"a", "b/"}), frozenset({"a", "b/"}), None)
    refused = DeltaAnswer("t2", frozenset(), frozenset(), "DELTA_UNSUPPORTED")
    moving = DeltaAnswer("t3", frozenset({"a", "b"}), frozenset({"a"}), None)
    save_answers({"x": settled, "y": refused, "z": moving}, path)
    assert load_answers(path) == {"x": settled, "y": refused}


def test_a_recording_of_another_delta_version_is_not_used(tmp_path: Path) -> None:
    path = tmp_path / "answers.json"
    save_answers({"x": DeltaAnswer("t", frozenset(), frozenset(), None)}, path)
    data = json.loads(path.read_text())
    data["delta"] = "0.0.1"
    path.write_text(json.dumps(data))
    assert load_answers(path) == {}
    assert load_answers(tmp_path / "absent.json") == {}


def test_a_recording_stands_in_only_on_the_same_files_and_when_settled() -> None:
    answer = DeltaAnswer("t", frozenset({"a"}), frozenset({"a"}), None)
    assert usable(answer, "t")
    assert not usable(answer, "other")
    assert not usable(None, "t")
    assert not usable(DeltaAnswer("t", frozenset({"a"}), frozenset(), None), "t")


def test_a_fixed_sample_is_asked_live_and_every_case_in_the_live_modes() -> None:
    ids = [f"case{i:02d}" for i in range(20)]
    sampled = [i for i in ids if asked_live(i, ids, OracleMode.RECORDED)]
    assert sampled == ids[::LIVE_EVERY]
    for mode in (OracleMode.LIVE, OracleMode.RECORD):
        assert all(asked_live(i, ids, mode) for i in ids)


def test_the_mode_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SPARKDELTA_ORACLE", raising=False)
    assert OracleMode.from_env() is OracleMode.RECORDED
    monkeypatch.setenv("SPARKDELTA_ORACLE", "live")
    assert OracleMode.from_env() is OracleMode.LIVE
    monkeypatch.setenv("SPARKDELTA_ORACLE", "always")
    with pytest.raises(ValueError, match="SPARKDELTA_ORACLE='always': use one of"):
        OracleMode.from_env()
