"""A version's checksum file is trusted only when whole: anything else reads as absent."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from python_ops.delta.log.commits import commit_actions
from python_ops.delta.state.snapshot import read_snapshot
from python_ops.delta.state.version_checksum import read_version_checksum, replayed_checksum
from python_ops.storage import open_storage

GOOD = {
    "tableSizeBytes": 716,
    "numFiles": 1,
    "numMetadata": 1,
    "numProtocol": 1,
    "metadata": {
        "id": "16f06b55-4026-4a50-a6b6-b450ece44765",
        "format": {"provider": "parquet", "options": {}},
        "schemaString": '{"type":"struct","fields":[{"name":"id","type":"integer",'
        '"nullable":false,"metadata":{}}]}',
        "partitionColumns": [],
        "createdTime": 1795748107760,
        "configuration": {"delta.logRetentionDuration": "interval 7 days"},
    },
    "protocol": {"minReaderVersion": 1, "minWriterVersion": 2},
}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=10,
)


def _write(tmp: Path, data: bytes, version: int = 3) -> Path:
    log = tmp / "_delta_log"
    log.mkdir(parents=True, exist_ok=True)
    (log / f"{version:020d}.crc").write_bytes(data)
    return tmp


def test_a_whole_checksum_is_read(tmp_path: Path) -> None:
    table = _write(tmp_path, json.dumps(GOOD).encode())
    checksum = read_version_checksum(open_storage(str(table)), 3)
    assert checksum is not None
    assert (checksum.version, checksum.num_files, checksum.table_size_bytes) == (3, 1, 716)
    assert checksum.metadata.table_id == GOOD["metadata"]["id"]
    assert checksum.metadata.configuration == {"delta.logRetentionDuration": "interval 7 days"}
    assert checksum.protocol == {"minReaderVersion": 1, "minWriterVersion": 2}
    assert read_version_checksum(open_storage(str(table)), 4) is None  # no file: not known


@settings(max_examples=300, deadline=None)
@given(field=st.sampled_from(sorted(GOOD)), value=json_values)
def test_a_field_replaced_by_anything_is_read_or_refused_never_raised(
    tmp_path_factory, field: str, value: object
) -> None:
    table = tmp_path_factory.mktemp("crc")
    data = {**GOOD, field: value}
    _write(table, json.dumps(data).encode())
    checksum = read_version_checksum(open_storage(str(table)), 3)
    if checksum is not None:  # only what a writer could have meant
        assert isinstance(checksum.num_files, int)
        assert checksum.num_files >= 0
        assert isinstance(checksum.table_size_bytes, int)
        assert checksum.table_size_bytes >= 0


@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=200) | json_values.map(lambda v: json.dumps(v).encode()))
def test_any_bytes_are_read_or_refused_never_raised(tmp_path_factory, data: bytes) -> None:
    table = _write(tmp_path_factory.mktemp("crc"), data)
    assert read_version_checksum(open_storage(str(table)), 3) is None


# -- the state replayed from a whole log (a table its build created) -------------------------

_PROTOCOL = {"minReaderVersion": 1, "minWriterVersion": 2}
_SCHEMA = '{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]}'
_NAMES = ("a.parquet", "b%20c.parquet", "p=x/c.parquet", "p=%20/d.parquet", "e.parquet")


def _metadata(tag: int) -> dict[str, object]:
    return {
        "id": "7c1e0f55-0000-4000-8000-000000000001",
        "format": {"provider": "parquet", "options": {}},
        "schemaString": _SCHEMA,
        "partitionColumns": [],
        "configuration": {"tag": str(tag)},
    }


def _dv(n: int | None) -> dict[str, object] | None:
    if n is None:
        return None
    return {"storageType": "i", "pathOrInlineDv": f"inline{n}", "sizeInBytes": 8, "cardinality": n}


@st.composite
def _whole_logs(draw: st.DrawFn) -> list[list[dict[str, object]]]:
    """Commits 0..N as a writer makes them: adds, removes (of live files or of none), DV
    re-adds (the same path under a new deletion vector), metadata and protocol changes."""
    live: dict[tuple[str, int | None], int] = {}
    commits: list[list[dict[str, object]]] = []
    for version in range(draw(st.integers(1, 6))):
        actions: list[dict[str, object]] = [{"commitInfo": {"timestamp": version}}]
        if version == 0 or draw(st.booleans()):
            actions.append({"metaData": _metadata(draw(st.integers(0, 3)))})
        if version == 0 or draw(st.integers(0, 4)) == 0:
            actions.append(
                {"protocol": {**_PROTOCOL, "minWriterVersion": 2 + draw(st.integers(0, 1))}}
            )
        for _ in range(draw(st.integers(0, 4))):
            kind = draw(st.sampled_from(("add", "remove", "readd")))
            if kind == "add" or not live:
                key = (draw(st.sampled_from(_NAMES)), draw(st.none() | st.integers(1, 3)))
                size = draw(st.integers(0, 10**9))
                add = {
                    "path": key[0],
                    "size": size,
                    "modificationTime": 1,
                    "dataChange": True,
                    "partitionValues": {},
                    "deletionVector": _dv(key[1]),
                }
                actions.append({"add": add})
                live[key] = size
                continue
            key = draw(st.sampled_from(sorted(live, key=str)))
            actions.append(
                {
                    "remove": {
                        "path": key[0],
                        "deletionTimestamp": 1,
                        "dataChange": True,
                        "deletionVector": _dv(key[1]),
                    }
                }
            )
            size = live.pop(key)
            if kind == "readd":  # DELETE with deletion vectors: the file again, a new vector
                new = (key[0], (key[1] or 0) + 1)
                actions.append(
                    {
                        "add": {
                            "path": new[0],
                            "size": size,
                            "modificationTime": 1,
                            "dataChange": True,
                            "partitionValues": {},
                            "deletionVector": _dv(new[1]),
                        }
                    }
                )
                live[new] = size
        commits.append(actions)
    return commits


def _write_log(root: Path, commits: list[list[dict[str, object]]]) -> None:
    log = root / "_delta_log"
    log.mkdir(parents=True)
    for version, actions in enumerate(commits):
        text = "\n".join(json.dumps(a) for a in actions)
        (log / f"{version:020d}.json").write_text(text)


@settings(max_examples=150, deadline=None)
@given(commits=_whole_logs())
def test_a_whole_log_replays_to_the_state_its_snapshot_reads(
    commits: list[list[dict[str, object]]],
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "t"
        _write_log(root, commits)
        storage = open_storage(str(root))
        window = [(v, commit_actions(storage, v)) for v in range(len(commits))]
        for head in range(len(commits)):  # every version, from the commits up to it
            state = replayed_checksum(storage.root, window[: head + 1])
            snapshot = read_snapshot(str(root), version=head)
            assert state is not None
            assert state.version == head
            assert state.num_files == len(snapshot.files)
            assert state.table_size_bytes == sum(f.size_bytes for f in snapshot.files)
            assert state.metadata == snapshot.metadata
            assert state.protocol == snapshot.protocol
        if len(commits) > 1:  # not the whole log (from 1 on, or with a hole): not known
            assert replayed_checksum(storage.root, window[1:]) is None
        if len(commits) > 2:
            assert replayed_checksum(storage.root, [window[0], *window[2:]]) is None


def test_a_log_without_metadata_or_a_bad_action_replays_to_nothing(tmp_path: Path) -> None:
    no_metadata = [[{"protocol": _PROTOCOL}]]
    bad_add = [[{"protocol": _PROTOCOL}, {"metaData": _metadata(0)}, {"add": {"path": "a"}}]]
    assert replayed_checksum(str(tmp_path), []) is None
    assert replayed_checksum(str(tmp_path), [(0, no_metadata[0])]) is None
    assert replayed_checksum(str(tmp_path), [(0, bad_add[0])]) is None  # no size: unknown
