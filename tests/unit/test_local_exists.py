"""``LocalStorage.exists``: one name asked for, a link an entry never followed, no exception.

The post-hook asks it for the commit after the build's last (``build_writes``), where a miss is
the usual answer: it must agree with ``lstat`` (``os.path.lexists``) on every kind of entry.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from python_ops.errors import StorageError
from python_ops.storage import local
from python_ops.storage.local import LocalStorage

KINDS = st.sampled_from(["file", "dir", "link to file", "link to dir", "dangling link", "loop"])
NAMES = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="/\x00"),
    min_size=1,
    max_size=12,
).filter(lambda n: n not in (".", ".."))


def _make(root: Path, name: str, kind: str) -> None:
    path = root / name
    if kind == "file":
        path.write_bytes(b"x")
    elif kind == "dir":
        path.mkdir()
    elif kind == "link to file":
        (root.parent / "target-file").write_bytes(b"x")
        path.symlink_to(root.parent / "target-file")
    elif kind == "link to dir":
        path.symlink_to(root.parent)
    elif kind == "dangling link":
        path.symlink_to(root.parent / "nothing here")
    else:
        path.symlink_to(path)  # a link to itself


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(entries=st.dictionaries(NAMES, KINDS, max_size=6), asked=st.lists(NAMES, max_size=6))
def test_exists_agrees_with_lstat_on_every_kind_of_entry(
    tmp_path_factory: pytest.TempPathFactory, entries: dict[str, str], asked: list[str]
) -> None:
    root = tmp_path_factory.mktemp("t") / "table"
    root.mkdir()
    made = {}
    for name, kind in entries.items():
        try:
            _make(root, name, kind)
        except OSError:
            continue  # a name this file system refuses (too long in bytes, say)
        made[name] = kind
    storage = LocalStorage(str(root))
    for name in [*made, *asked]:
        try:
            expected = os.path.lexists(root / name)
        except ValueError:
            continue
        assert storage.exists(name) is expected, (name, made.get(name))
    # a name below an entry: the same answer as lstat's, whatever the entry is
    for name in made:
        below = f"{name}/target-file"
        assert storage.exists(below) is os.path.lexists(root / below), (below, made[name])


def test_a_link_is_not_followed_even_without_nofollow_support(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "gone").symlink_to(tmp_path / "nothing")
    for nofollow in (True, False):
        monkeypatch.setattr(local, "_ACCESS_NOFOLLOW", nofollow)
        storage = LocalStorage(str(tmp_path))
        assert storage.exists("gone") is True
        assert storage.exists("absent") is False


def test_a_name_outside_the_root_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StorageError, match="escapes the table root"):
        LocalStorage(str(tmp_path / "t")).exists("../secret")
