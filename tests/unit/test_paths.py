"""The path algebra (``python_ops.storage.paths``): canonical spellings, Delta's decoding."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from python_ops.errors import DeltaLogError, StorageError
from python_ops.storage.paths import canonical, decode_log_path, is_canonical, require_canonical

NAMES = st.sampled_from(["a", "p=1", "b c", "dot.", ".h", "_x", "%", "é", "e\u0301", "", ".", ".."])


@given(st.lists(NAMES, min_size=1, max_size=6))
def test_canonical_is_one_spelling_and_a_fixed_point(names: list[str]) -> None:
    spelling = "/".join(names)
    found = canonical(spelling)
    if found is not None:
        assert is_canonical(found)
        assert canonical(found) == found
        assert ".." not in found.split("/")
    assert is_canonical(spelling) == (found == spelling)


@pytest.mark.parametrize(
    ("spelling", "expected"),
    [
        ("p=a/f", "p=a/f"),
        ("p=a//f", "p=a/f"),
        ("./p=a/f", "p=a/f"),
        ("p=a/./f", "p=a/f"),
        ("p=a/z/../f", "p=a/f"),
        ("p=a/f/", "p=a/f"),
        ("../f", None),
        ("", None),
        ("..foo/f", "..foo/f"),
    ],
)
def test_canonical_as_hadoop_path_maps_a_spelling(spelling: str, expected: str | None) -> None:
    assert canonical(spelling) == expected


def test_log_paths_decode_as_java_uri_does() -> None:
    assert decode_log_path("a%20b/c+d") == "a b/c+d"
    assert decode_log_path("caf%C3%A9") == "café"
    assert decode_log_path("café") == "café"
    with pytest.raises(DeltaLogError, match="malformed percent-escape"):
        decode_log_path("a%zzb")
    with pytest.raises(DeltaLogError, match="not UTF-8"):
        decode_log_path("a%FFb")


def test_nothing_is_deleted_under_another_spelling() -> None:
    assert require_canonical("p=a/f", "/t") == "p=a/f"
    for odd in ("p=a//f", "p=a/./f", "p=a/f/", "/p=a/f", "p=a/../f"):
        with pytest.raises(StorageError, match="not the canonical spelling"):
            require_canonical(odd, "/t")


def _normalized_or_refused(root: str, rel: str) -> str | None:
    """What the storage's check gave before its fast path: normpath, and refusal outside."""
    import posixpath

    clean = posixpath.normpath(rel) if rel else ""
    if clean in (".", ""):
        return ""
    if clean.startswith("../") or clean == ".." or clean.startswith("/"):
        return None
    return clean


@given(st.lists(NAMES | st.sampled_from(["/", "//", "x/"]), max_size=6))
def test_a_storage_checks_a_relative_path_as_normpath_does(parts: list[str]) -> None:
    from python_ops.storage.local import LocalStorage

    rel = "/".join(parts)
    storage = LocalStorage("/root-of-table")
    expected = _normalized_or_refused(storage.root, rel)
    if expected is None:
        with pytest.raises(StorageError, match="escapes the table root"):
            storage._check_relative(rel)
    else:
        assert storage._check_relative(rel) == expected
