"""A version's checksum file is trusted only when whole: anything else reads as absent."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from python_ops.delta.version_checksum import read_version_checksum
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
