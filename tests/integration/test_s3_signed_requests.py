"""S3 reads, writes and deletes over signed plain HTTP (``storage.s3_http``) on the local S3 server.

The signatures themselves are checked against botocore's signer in
``tests/unit/test_s3_signing.py``; here the requests meet a real S3 API (moto): pages and
objects equal what boto3 returns, a PUT writes an object whole, deletes remove exactly the keys
boto3's would, a request the store does not answer with 200 is repeated with boto3, and neither a
VACUUM dry run nor a LITE real run on S3 imports boto3 (nor, for the run, Arrow's S3 client).
"""

from __future__ import annotations

import json
import socket
from typing import Any

import pyarrow as pa
import pytest
from deltalake import write_deltalake

from python_ops.ops.vacuum import vacuum
from python_ops.storage.s3 import S3Storage
from python_ops.storage.s3_http import SignedRequests, Unanswered
from python_ops.storage.s3_retry import RetryPolicy
from tests.helpers.python_run import python_stdout
from tests.helpers.s3 import FaultyProxy, S3Bucket, delta_options
from tests.helpers.s3proxy import ON_BOTH_SERVERS

NO_WAIT = RetryPolicy(backoff=lambda retry: 0.0)  # retries at once: counts, not times
NAMES = ["a b&c<d.parquet", "b.parquet", "\u00fc \u20ac.parquet", "p=1/x", "m/", "z%2F+~.parquet"]


# moto only: S3Proxy keeps `m/` as a directory (its body lost) and answers 400 to
# boto3's paginator, which sends StartAfter beside the continuation token
@pytest.mark.parametrize(
    "params",
    [
        {"Prefix": "t/", "Delimiter": "/"},
        {"Prefix": "t/"},
        {"Prefix": "t/", "StartAfter": "t/b", "MaxKeys": 2},
    ],
)
def test_pages_and_objects_equal_boto3s(s3: S3Bucket, params: dict[str, Any]) -> None:
    for i, name in enumerate(NAMES):
        s3.put(f"t/{name}", f"body {i}".encode())
    counted: list[str] = []
    reads = SignedRequests(S3Storage(s3.uri("t")).settings, s3.bucket, count=counted.append)
    ours = list(reads.list_pages(params))
    theirs = list(s3.client.get_paginator("list_objects_v2").paginate(Bucket=s3.bucket, **params))
    for page in theirs:
        page.pop("ResponseMetadata")
        assert page.pop("EncodingType") == "url"  # boto3 asks for URL-encoded keys, then decodes
    assert ours == theirs
    assert counted == ["ListObjectsV2"] * len(theirs)
    for i, name in enumerate(NAMES):
        assert reads.get_object(f"t/{name}") == f"body {i}".encode()
        received = reads.get_object_buffer(f"t/{name}")  # straight into Arrow's memory
        assert isinstance(received, pa.Buffer)
        assert received.to_pybytes() == f"body {i}".encode()
    with pytest.raises(FileNotFoundError, match="t/missing"):
        reads.get_object("t/missing")
    with pytest.raises(FileNotFoundError, match="t/missing"):
        reads.get_object_buffer("t/missing")


@ON_BOTH_SERVERS
def test_requests_the_store_throttles_are_sent_again_by_the_signed_client(
    s3: S3Bucket, monkeypatch: pytest.MonkeyPatch
) -> None:
    keys = [f"t/p={i % 3}/part-{i:04d}.parquet" for i in range(2_500)]
    for key in keys[:30]:
        s3.put(key, key.encode())
    plain = S3Storage(s3.uri("t"), signed_requests=False)
    proxy = FaultyProxy(s3.endpoint, every=2).start()  # every second request: 503 SlowDown
    try:
        monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.endpoint)
        storage = S3Storage(s3.uri("t"), retry=NO_WAIT)
        assert storage._signed is not None
        assert sorted(e.path for e in storage.list_tree()) == sorted(
            e.path for e in plain.list_tree()
        )
        for key in keys[:30]:
            assert storage.read_bytes(key.removeprefix("t/")) == key.encode()
            buffer = storage.read_arrow_buffer(key.removeprefix("t/"))
            assert buffer.to_pybytes() == key.encode()
        stats = proxy.stats()
        assert stats["failed"] > 10
    finally:
        proxy.stop()
    assert storage._boto3 is None  # throttling is retried here, not handed to boto3
    assert storage._signed is not None
    assert sum(storage.requests.values()) == stats["seen"]  # each attempt counted


def _overwritten_twice(s3: S3Bucket, key: str) -> str:
    """A partitioned delta-rs table at ``key``, written once and overwritten twice (4 removes)."""
    uri = s3.uri(key)
    for i in range(3):
        rows = pa.table({"p": ["x", "y"], "id": [i, i + 10]})
        write_deltalake(
            uri,
            rows,
            mode="overwrite" if i else "append",
            partition_by=["p"],
            storage_options=delta_options(s3.endpoint),
        )
    return uri


@ON_BOTH_SERVERS
def test_a_dry_run_on_s3_imports_no_boto3(s3: S3Bucket) -> None:
    uri = _overwritten_twice(s3, "tables/t")
    s3.put("tables/t/p=x/untracked.parquet")
    expected = vacuum(uri, dry_run=True, retention_hours=0, allow_short_retention=True)
    code = """
        import json, sys
        from python_ops.cli.main import run
        code = run(["vacuum", sys.argv[1], "--dry-run", "--retention-hours", "0",
                    "--allow-short-retention", "--json"])
        print(json.dumps({"code": code, "boto3": "boto3" in sys.modules}))
    """
    lines = python_stdout(code, uri).splitlines()
    done = json.loads(lines[-1])
    assert done == {"code": 0, "boto3": False}
    selected = json.loads("\n".join(lines[:-1]))
    assert sorted(f["path"] for f in selected["paths"]) == sorted(f.path for f in expected.paths)
    assert expected.files_found == 5  # four overwritten files and the untracked one


@ON_BOTH_SERVERS
def test_a_connection_the_server_closed_is_opened_again(s3: S3Bucket) -> None:
    s3.put("t/a.parquet", b"first")
    counted: list[str] = []
    reads = SignedRequests(S3Storage(s3.uri("t")).settings, s3.bucket, count=counted.append)
    kept = reads._connection()  # a kept-alive connection the server then closes while idle
    kept.connect()
    kept.sock.shutdown(socket.SHUT_RDWR)
    assert reads.get_object("t/a.parquet") == b"first"
    assert reads._local.connection is not kept
    assert counted == ["GetObject"] * 2  # the retry on a new connection is a request too


@ON_BOTH_SERVERS
def test_deletes_remove_exactly_the_keys_asked_for(s3: S3Bucket) -> None:
    for name in NAMES:
        s3.put(f"t/{name}")
    counted: list[str] = []
    signed = SignedRequests(S3Storage(s3.uri("t")).settings, s3.bucket, count=counted.append)
    gone = [f"t/{n}" for n in NAMES[:3]] + ["t/never-there.parquet"]  # a missing key: deleted
    assert signed.delete_objects(gone) == []
    assert counted == ["DeleteObjects"]
    left = s3.client.list_objects_v2(Bucket=s3.bucket, Prefix="t/").get("Contents", [])
    assert sorted(o["Key"] for o in left) == sorted(f"t/{n}" for n in NAMES[3:])
    with pytest.raises(Unanswered, match="control character") as refused:
        signed.delete_objects(["t/a\x01b"])  # an XML body cannot carry it: boto3's to send
    assert not refused.value.lasting


@ON_BOTH_SERVERS
def test_a_put_writes_the_object_whole_and_replaces_it(s3: S3Bucket) -> None:
    counted: list[str] = []
    storage = S3Storage(s3.uri("t"))
    signed = SignedRequests(storage.settings, s3.bucket, count=counted.append)
    for name, data in [(NAMES[0], b"first"), (NAMES[0], b"second, longer"), (NAMES[2], b"")]:
        signed.put_object(f"t/{name}", data)
        assert s3.client.get_object(Bucket=s3.bucket, Key=f"t/{name}")["Body"].read() == data
    assert counted == ["PutObject"] * 3
    storage.replace_file("_delta_log/_last_vacuum_info", b"{}\n")  # through the storage
    assert storage.read_bytes("_delta_log/_last_vacuum_info") == b"{}\n"
    assert storage._boto3 is None


@ON_BOTH_SERVERS
def test_deletes_the_store_throttles_are_sent_again_by_the_signed_client(
    s3: S3Bucket, monkeypatch: pytest.MonkeyPatch
) -> None:
    rels = [f"p={i % 3}/part-{i:04d}.parquet" for i in range(2_500)]
    for rel in rels[:40]:
        s3.put(f"t/{rel}")
    proxy = FaultyProxy(s3.endpoint, every=2).start()  # every second request: 503 SlowDown
    try:
        monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.endpoint)
        storage = S3Storage(s3.uri("t"), retry=NO_WAIT)
        assert storage.delete_files(rels) == []  # three batches, missing keys included
        stats = proxy.stats()
        assert stats["failed"] >= 1
    finally:
        proxy.stop()
    assert storage._boto3 is None  # the throttled batches were sent again, not by boto3
    assert storage.requests["DeleteObjects"] == stats["seen"] == 3 + stats["failed"]
    assert s3.client.list_objects_v2(Bucket=s3.bucket, Prefix="t/").get("KeyCount") == 0


@ON_BOTH_SERVERS
def test_a_lite_real_run_on_s3_imports_no_boto3(s3: S3Bucket) -> None:
    uri = _overwritten_twice(s3, "tables/lite")
    removed = vacuum(uri, dry_run=True, mode="lite", retention_hours=0, allow_short_retention=True)
    assert removed.files_found == 4  # the files the two overwrites removed
    code = """
        import json, sys
        from python_ops.cli.main import run
        code = run(["vacuum", sys.argv[1], "--mode", "lite", "--retention-hours", "0",
                    "--allow-short-retention", "--json"])
        print(json.dumps({"code": code, "boto3": "boto3" in sys.modules,
                          "arrow_s3": "pyarrow._s3fs" in sys.modules}))
    """
    lines = python_stdout(code, uri).splitlines()
    # neither boto3 nor Arrow's S3 file system: the state is written by a signed PUT
    assert json.loads(lines[-1]) == {"code": 0, "boto3": False, "arrow_s3": False}
    assert json.loads("\n".join(lines[:-1]))["files_deleted"] == 4
    keys = {o["Key"] for o in s3.client.list_objects_v2(Bucket=s3.bucket)["Contents"]}
    assert not {f"tables/lite/{f.path}" for f in removed.paths} & keys
    assert "tables/lite/_delta_log/_last_vacuum_info" in keys
